"""Corpus cases of minimax_m1 where toolbridge disagrees with the peer, each with the reason ours is right."""

from tests.known import PROMISE_NOTHING_LOST, PROMISE_UNKNOWN  # noqa: F401

KNOWN = {
    'vllm:test_minimax_tool_parser.py::test_extract_tool_calls_missing_name_or_arguments#1':
        '{"name": "missing_args"} is a zero-argument call, as the peer itself reads {"name": "test"} in '
        'test_streaming_character_by_character_with_buffering; the nameless line stays content',
    'vllm:test_minimax_tool_parser.py::test_streaming_basic_functionality#1':
        "a complete, closed call; the peer's streaming test started with a non-empty previous_text and emitted "
        "nothing, while its non-streaming test of the same text (test_extract_tool_calls[single_tool_call]) expects the call",
    'vllm:test_minimax_tool_parser.py::test_streaming_with_thinking_tags#1':
        "the section after </think> is a complete call to a well-formed name; the peer's streaming path stripped the "
        "tags into content, while its non-streaming test of the same layout (test_extract_tool_calls_with_thinking_tags) "
        "expects that call",
    'vllm:test_minimax_tool_parser.py::test_extract_tool_calls_multiline_json_not_supported#1':
        'a valid call object spread over lines is still a call (JSON is bounded by its structure); the peer reads '
        'only one object per line, a limitation its test names',
    'vllm:test_minimax_tool_parser.py::test_streaming_arguments_delta_only#1':
        "output ends after a complete call, only </tool_calls> missing: the issue requires a recovered call "
        "(reported), and the peer's own non-streaming test of that text (tool_call_incomplete_tag) expects it",
    'vllm:test_minimax_tool_parser.py::test_streaming_complex_scenario_with_multiple_tools#1':
        "the peer's streamed arguments are empty for both calls although the text holds them in full; toolbridge "
        "gives the arguments written (with reasoning split, the section inside <think> is reasoning)",
}
