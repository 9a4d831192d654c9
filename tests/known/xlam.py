"""Corpus cases of xlam where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN = {
    'vllm:test_xlam_tool_parser.py::test_streaming_with_list_structure#1':
        "the peer's streaming test starts with the output already in previous_text, so the peer streamed only "
        "the name; the output's arguments are {'city': 'Seattle'}, which toolbridge returns",
}
