"""Corpus cases of hermes where toolbridge disagrees with the peer, each with the reason ours is right."""

from tests.known import PROMISE_NOTHING_LOST, PROMISE_UNKNOWN  # noqa: F401

KNOWN = {
    'llama.cpp-legacy:test-chat.cpp::test_template_output_parsers#37':
        "the model says 'This is not a tool call:' before a JSON object mid-answer: prose is prose",
    'llama.cpp-legacy:test-chat.cpp::test_template_output_parsers#42':
        'with reasoning extraction on, <think>...</think> is reasoning; that legacy path keeps it inline only because it skipped parsing altogether',
    'vllm:test_hermes_tool_parser.py::test_hermes_parser_non_streaming_tool_call_invalid_json[llama]#1':
        "output ends after a complete arguments object, only the envelope's '}' and </tool_call> missing: the issue requires a recovered call (reported); the peer drops it",
}
