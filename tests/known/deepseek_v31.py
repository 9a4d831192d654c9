"""Corpus cases of deepseek_v31 where toolbridge disagrees with the peer, each with the reason ours is right."""

from tests.known import PROMISE_NOTHING_LOST, PROMISE_UNKNOWN  # noqa: F401

KNOWN = {
    'vllm:test_deepseekv31_tool_parser.py::test_extract_tool_calls_with_multiple_tools#1':
        PROMISE_NOTHING_LOST,
    'llama.cpp-legacy:test-chat.cpp::test_template_output_parsers#129':
        'the prompt opened <think> and the output never closes it: V3.1 calls tools only in non-thinking mode, so a '
        'call section written while thinking is reasoning (visible in reasoning_content), as the peer itself reads '
        'it when a </think> follows (#128) and when the same text is partial (#130); the peer turns it into a call '
        'only at the very end, which a streaming parser cannot do without withholding the whole reasoning',
}
