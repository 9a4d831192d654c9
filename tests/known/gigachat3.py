"""Corpus cases of gigachat3 where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN = {
    'sglang:test_function_call_parser.py::TestGigaChat3Detector::test_detect_and_parse_arguments_not_dict#1':
        "the arguments are the string 'string_args', not a JSON object: a malformed block is never a call and "
        "stays visible as content (nothing lost); the peer deletes it and answers with empty content",
    'sglang:test_function_call_parser.py::TestGigaChat3Detector::test_detect_and_parse_missing_arguments#1':
        "after the call marker, an object with an offered name and no 'arguments' key is a call without "
        "arguments ({}), as every JSON-envelope dialect reads it (hermes, phi4_mini; vLLM's own MiniMax-M1 "
        "streaming test expects the same); every parameter of that tool is optional, so {} is valid for it",
    'sglang:test_function_call_parser.py::TestGigaChat3Detector::test_detect_and_parse_missing_name#1':
        "the call object has no name: a malformed block is never a call and stays visible as content "
        "(nothing lost); the peer deletes it and answers with empty content",
}
