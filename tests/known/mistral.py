"""Corpus cases of mistral where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN = {
    'vllm:test_mistral_tool_parser.py::test_extract_tool_calls[complex]#1':
        "the output ends inside the arguments (the JSON object is never closed): a call cut short is never a "
        "call; its text stays visible and the report says truncated (finish_reason 'length'); the peer hands the "
        "broken string on as arguments",
    'vllm:test_mistral_tool_parser.py::test_extract_tool_calls_streaming_exception_returns_none[v11]#1':
        "the peer's test patches its streaming method to raise (mock.patch) and checks that nothing comes out; "
        "'[TOOL_CALLS]add{}' is a well-formed call without arguments",
    'sglang:test_mistral_detector.py::TestMistralDetector::test_json_array_with_invalid_json#1':
        "'[not valid json]' after [TOOL_CALLS] is a malformed block: never a call, it stays visible as content "
        "and is counted (rejected); the peer drops it",
    'llama.cpp:test-chat.cpp::mistralai-Ministral-3-14B-Reasoning-2512.jinja#7':
        "no call either way: the request had a json_schema response_format and llama.cpp unwraps the model's "
        "```json fence for it; that is response-format handling, not tool-call parsing, and the parser keeps the "
        "content as the model wrote it (nothing lost)",
}
