"""Corpus cases of step3 where toolbridge disagrees with the peer, each with the reason ours is right."""

from tests.known import PROMISE_NOTHING_LOST, PROMISE_UNKNOWN  # noqa: F401

KNOWN = {
    'vllm:test_step3_tool_parser.py::TestStep3ToolParser::test_various_data_types[True]#1':
        'no tools given: the issue requires raw values that parse as JSON to be typed (42, 3.14, true, null, '
        'arrays, objects); the peer keeps them as strings',
    'vllm:test_step3_tool_parser.py::TestStep3ToolParser::test_malformed_input[True]#1':
        "output ends right after <steptml:invoke name=\"func\">: a cut-off call is not a call (report: truncated); "
        "the peer's own non-streaming test of the same text (test_malformed_input[False]#1) expects no call",
}
