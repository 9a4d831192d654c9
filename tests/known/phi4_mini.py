"""Corpus cases of phi4_mini where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN = {
    'vllm:test_phi4mini_tool_parser.py::TestPhi4MiniToolParser::test_malformed_input[True]#4':
        "after the explicit functools[ marker, a call object with a name and no 'arguments' key is a call "
        "without arguments ({}), as every JSON-envelope dialect reads it (hermes, mistral); the peer's "
        "streaming path emits nothing because its arguments never start",
}
