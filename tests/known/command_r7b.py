"""Corpus cases of command_r7b where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN = {
    'llama.cpp-legacy:test-chat.cpp::test_template_output_parsers#4':
        "the peer's call also set reasoning_in_content=true (in test-chat.cpp; the corpus does not record "
        "that flag), which writes the extracted reasoning back into content as <think> tags; with reasoning "
        "extraction on and no such option, the <|START_THINKING|> block is reasoning",
}
