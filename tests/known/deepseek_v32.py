"""Corpus cases of deepseek_v32 where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN = {
    'vllm:test_deepseekv32_tool_parser.py::TestExtractToolCalls::test_string_attr_true_preserves_literal_despite_schema#1':
        "arguments are typed by the tool's schema (promise): the schema says integer, so the raw 42 is the "
        "integer 42; string=\"true\" decides the type only where the schema does not know the parameter",
    'vllm:test_deepseekv32_tool_parser.py::TestExtractToolCallsStreaming::test_no_emission_while_incomplete#1':
        "the peer's test stops feeding mid-call to check that nothing is emitted yet (a partial snapshot); at "
        "the end of output toolbridge settles the call, whose one parameter is complete, and reports the "
        "missing close tags (repaired)",
}
