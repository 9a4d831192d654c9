"""Corpus cases of glm45 where toolbridge disagrees with the peer, each with the reason ours is right."""

from tests.known import PROMISE_NOTHING_LOST, PROMISE_UNKNOWN  # noqa: F401

KNOWN = {
    'vllm:test_glm4_moe_tool_parser.py::test_extract_tool_calls_malformed_xml#1':
        'a key runs into <arg_value> without </arg_key>: the block is malformed and stays content (reported); the peer silently drops that argument and emits the rest',
    'vllm:test_glm4_moe_tool_parser.py::test_extract_tool_calls_mixed_content#1':
        PROMISE_NOTHING_LOST,
    'vllm:test_glm4_moe_tool_parser.py::test_extract_tool_calls_incomplete_tool_call#1':
        'output ends after complete arguments without </tool_call>: the issue requires a recovered call (reported as recovered); the peer drops it',
    'sglang:test_function_call_parser.py::TestGlm4MoeDetector::test_invalid_tool_call#1':
        PROMISE_UNKNOWN,
}
