"""Corpus cases of lfm2 where toolbridge disagrees with the peer, each with the reason ours is right."""

from tests.known import PROMISE_UNKNOWN

KNOWN = {
    'sglang:test_function_call_parser.py::TestLfm2Detector::test_detect_and_parse_multiple_blocks#1':
        "text between two call blocks is content (nothing lost); the peer drops it",
    'sglang:test_function_call_parser.py::TestLfm2Detector::test_detect_and_parse_unknown_function#1':
        PROMISE_UNKNOWN,
}
