"""Corpus cases of granite_20b_fc where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN = {
    'vllm:test_granite_20b_fc_tool_parser.py::TestGranite20bFcToolParser::test_malformed_input[True]#1':
        "output ends just after 'arguments': {, so the call is cut short: it is reported truncated "
        "(finish_reason length) and its text stays content, never a finished call; the peer's streaming path "
        "had already sent the name and closes the arguments as {}",
}
