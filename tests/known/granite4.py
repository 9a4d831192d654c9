"""Corpus cases of granite4 where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN = {
    'vllm:test_hermes_tool_parser.py::test_hermes_parser_non_streaming_tool_call_invalid_json[granite4]#1':
        "output ends after a complete arguments object, only the envelope's '}' and </tool_call> missing: the "
        "issue requires a recovered call (reported as recovered), as hermes gives for the same text; the peer "
        "drops it",
}
