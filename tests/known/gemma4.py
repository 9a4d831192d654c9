"""Corpus cases of gemma4 where toolbridge disagrees with the peer, each with the reason ours is right.

The three channel cases are not a case of ours being right: Gemma 4 sometimes writes a stray
``<channel|>`` after its answer, or ``<|channel>`` twice, and those special tokens should not reach
content. Dropping them needs the parser core (a reasoning close marker met in content, or a dialect's
declared stray tokens, dropped and reported when reasoning is split out); the dialect cannot do it
without also dropping them when reasoning is left inline. They are listed until the core does it.
"""

_STRAY_CHANNEL = (
    "pending a core change: a stray Gemma 4 channel token in the answer reaches content; the parser core "
    "should drop it (reported) when reasoning is split out"
)

KNOWN = {
    'sglang:test_function_call_parser.py::TestGemma4Detector::test_detect_and_parse_multiple_calls#1':
        "text between two call blocks is content (nothing lost); the peer drops it",
    'llama.cpp:test-chat.cpp::google-gemma-4-31B-it.jinja#21': _STRAY_CHANNEL,
    'llama.cpp:test-chat.cpp::google-gemma-4-31B-it.jinja#23': _STRAY_CHANNEL,
    'llama.cpp:test-chat.cpp::google-gemma-4-31B-it.jinja#24': _STRAY_CHANNEL,
}
