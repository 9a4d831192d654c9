"""Corpus cases of granite where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN = {
    'vllm:test_granite_tool_parser.py::TestGraniteToolParser::test_malformed_input[False]#2':
        "a lone call object after <|tool_call|> stands for a one-call list, as in every JSON-array action "
        "format (models write the single-object form); the peer drops the call",
    'vllm:test_granite_tool_parser.py::TestGraniteToolParser::test_malformed_input[False]#3':
        "the arguments are the string 'not a dict', not a JSON object (and no <|tool_call|> marker precedes "
        "the list): a malformed block is never a call; the peer passes the string through as arguments, which "
        "no client can parse",
}
