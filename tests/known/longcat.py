"""Corpus cases of longcat where toolbridge disagrees with the peer, each with the reason ours is right."""

from tests.known import PROMISE_NOTHING_LOST

KNOWN = {
    'vllm:test_longcat_tool_parser.py::TestLongCatToolParser::test_surrounding_text[False]#1':
        PROMISE_NOTHING_LOST,
    'vllm:test_longcat_tool_parser.py::TestLongCatToolParser::test_malformed_input[False]#2':
        "the arguments are the string 'not a dict', not a JSON object: a malformed block is never a call and "
        "stays visible as content; the peer passes the string through as arguments, which no client can parse",
}
