"""Corpus cases of pythonic where toolbridge disagrees with the peer, each with the reason ours is right."""

_AFTER_PROSE = (
    "the call list follows prose in the same answer: a pythonic list is a call only where the answer starts "
    "(the Llama 3.2/4 templates ask for the calls and no other text, and vLLM's pythonic parser also reads a "
    "list only at the start); a '[' after prose is prose (links, citations, examples)"
)

KNOWN = {
    'sglang:test_function_call_parser.py::TestPythonicDetector::test_parse_streaming_complete_tool_call#1': _AFTER_PROSE,
    'sglang:test_function_call_parser.py::TestPythonicDetector::test_parse_streaming_partial_nested_brackets#1': _AFTER_PROSE,
    'sglang:test_function_call_parser.py::TestPythonicDetector::test_parse_streaming_partial_tool_call#1': _AFTER_PROSE,
    'sglang:test_function_call_parser.py::TestPythonicDetector::test_parse_streaming_text_before_tool_call#1': _AFTER_PROSE,
}
