"""Corpus cases of nemotron_v2 where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN = {
    'llama.cpp:test-chat.cpp::NVIDIA-Nemotron-Nano-v2.jinja#2':
        "the template writes <think> after the assistant header and the continued message then writes its own "
        "<think>: the second one is text inside reasoning that has already begun, kept in the reasoning as "
        "written (nothing lost); the peer drops it",
}
