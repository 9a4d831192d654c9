"""Corpus cases of gpt_oss where toolbridge disagrees with the peer, each with the reason ours is right."""

from tests.known import PROMISE_NOTHING_LOST, PROMISE_UNKNOWN  # noqa: F401

_BUILTIN = (
    "a message to a built-in tool that the request did not offer ({}): never a call, and it stays visible as "
    "content (promise); the peer drops it"
)

KNOWN = {
    'llama.cpp:test-chat.cpp::openai-gpt-oss-120b.jinja#13': _BUILTIN.format("container.exec"),
    'llama.cpp:test-chat.cpp::openai-gpt-oss-120b.jinja#14': _BUILTIN.format("python"),
    'llama.cpp:test-chat.cpp::openai-gpt-oss-120b.jinja#17':
        "the expected reasoning belongs to the continued assistant message in the prompt, of which the quoted tail "
        "keeps only its last letter ('g<|end|>'); the text parsed holds no reasoning",
    'llama.cpp-legacy:test-chat.cpp::test_template_output_parsers#102':
        'the peer was run with tool-call parsing switched off (parse_tool_calls=false), which drops the call and its '
        'text; toolbridge has no such mode and reads the call',
    'llama.cpp-legacy:test-chat.cpp::test_template_output_parsers#104':
        "the peer's call passed reasoning_in_content=true (visible in the test source, not recorded in the corpus); "
        'the same text and settings without it (#93) expect the analysis as reasoning, as we give',
}
