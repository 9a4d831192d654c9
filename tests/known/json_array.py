"""Corpus cases of json_array where toolbridge disagrees with the peer, each with the reason ours is right."""

from tests.known import PROMISE_NOTHING_LOST, PROMISE_UNKNOWN  # noqa: F401

_SNAPSHOT_RECOVERED = (
    "the stream stops after a complete object with the array unclosed: the issue requires a recovered call with "
    "its arguments (reported); the peer's snapshot had streamed only the name"
)
_SNAPSHOT_CUT = (
    "the stream stops inside the last object: a cut-off call is not a call and the report says truncated "
    "(finish_reason length); the peer's snapshot shows the name it had streamed"
)

KNOWN = {
    'sglang:test_function_call_parser.py::TestJsonArrayParser::test_braces_in_strings#1':
        "after the first call the list goes on with '[' instead of ',' or ']': the list ends there (reported), the "
        "rest is content, and its last object is cut off; the peer restarts and reports the cut-off name",
    'sglang:test_function_call_parser.py::TestJsonArrayParser::test_complete_tool_call_with_trailing_comma#1':
        _SNAPSHOT_RECOVERED,
    'sglang:test_function_call_parser.py::TestJsonArrayParser::test_separator_in_separate_chunk#1':
        _SNAPSHOT_RECOVERED,
    'sglang:test_function_call_parser.py::TestJsonArrayParser::test_multiple_commas_in_chunk#1':
        _SNAPSHOT_CUT,
    'sglang:test_function_call_parser.py::TestJsonArrayParser::test_malformed_json_recovery#1':
        'the first object breaks inside its arguments (a string runs into a bare word): a malformed block is never a '
        'call (its begun call is aborted and reported); the peer shows the name it had streamed',
    'sglang:test_function_call_parser.py::TestJsonArrayParser::test_parse_streaming_increment_malformed_json#1':
        "the arguments object breaks at '[' after a value: a malformed block is never a call (aborted, reported); the "
        'peer shows the name it had streamed',
}
