"""Corpus cases of llama3_json where toolbridge disagrees with the peer, each with the reason ours is right."""

_PROSE = (
    "the JSON objects follow prose in the same answer ('Here is the result: {...} Would you like...'): "
    "prose is prose; a Llama 3 JSON call is the answer itself, at its start or after <|python_tag|>"
)
_RESPONSE_FORMAT = (
    "no call either way: the request had a json_schema response_format and llama.cpp unwraps the model's "
    "```json fence for it; that is response-format handling, not tool-call parsing, and the parser keeps the "
    "content as the model wrote it (nothing lost)"
)

KNOWN = {
    'vllm:test_llama3_json_tool_parser.py::test_extract_tool_calls_simple#1': _PROSE,
    'vllm:test_llama3_json_tool_parser.py::test_extract_tool_calls_multiple_json_with_surrounding_text#1': _PROSE,
    'sglang:test_function_call_parser.py::TestLlama32Detector::test_invalid_then_valid_json#1':
        "the answer is one object that is not valid JSON ('{{' inside its parameters): a malformed block is never "
        "a call and stays visible as content; the peer digs a second object out of the broken one",
    'llama.cpp:test-chat.cpp::meta-llama-Llama-3.1-8B-Instruct.jinja#2': _RESPONSE_FORMAT,
}
