"""Corpus cases of gemma4 where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN = {
    'sglang:test_function_call_parser.py::TestGemma4Detector::test_detect_and_parse_multiple_calls#1':
        "text between two call blocks is content (nothing lost); the peer drops it",
}
