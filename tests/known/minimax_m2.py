"""Corpus cases of minimax_m2 where toolbridge disagrees with the peer, each with the reason ours is right."""

_UNTYPED = (
    "no tools were given, so no schema types the raw parameter values: toolbridge types a value that parses "
    "as JSON (5 -> 5), as it does for every raw-text XML dialect (qwen3_coder lists the same case); with a "
    "schema a string stays a string. The peer, without a schema, keeps every value a string"
)
KNOWN = {
    'vllm:test_minimax_m2_tool_parser.py::TestSingleInvoke::test_multiple_params#1': _UNTYPED,
    'vllm:test_minimax_m2_tool_parser.py::TestMultipleInvokes::test_two_invokes_in_single_delta#1': _UNTYPED,
    'vllm:test_minimax_m2_tool_parser.py::TestInternalState::test_prev_tool_call_arr_single#1': _UNTYPED,
    'vllm:test_minimax_m2_tool_parser.py::TestDeltaMessageFormat::test_multi_invoke_indices#1': _UNTYPED,
}
