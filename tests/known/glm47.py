"""Corpus cases of glm47 where toolbridge disagrees with the peer, each with the reason ours is right."""

from tests.known import PROMISE_NOTHING_LOST, PROMISE_UNKNOWN  # noqa: F401

KNOWN = {
    'sglang:test_function_call_parser.py::TestGlm47MoeDetector::test_invalid_tool_call#1':
        PROMISE_UNKNOWN,
    'vllm:test_glm47_moe_tool_parser.py::TestGlm47Streaming::test_no_args#1':
        "a complete zero-argument call; the peer's streaming path emits nothing for it (its non-streaming test of the same text expects the call, as we give)",
    'mlx-lm:test_tool_parsing.py::TestToolParsing::test_parsers#4':
        "'multiply a=1 b=2' is not GLM's format (no <arg_key> tags); a peer-specific fallback",
    'mlx-lm:test_tool_parsing.py::TestToolParsing::test_parsers#15':
        'the schema says string and the model wrote "London" with quotes: a schema string is never coerced, the quotes are the model\'s',
}
