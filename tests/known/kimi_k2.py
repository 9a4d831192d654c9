"""Corpus cases of kimi_k2 where toolbridge disagrees with the peer, each with the reason ours is right."""

_BARE_COUNTER = (
    "the call id is a bare counter that names no function: a call is emitted only for a tool the model "
    "named; guessing the tool from the offered list or the argument keys is a repair of a malformed call, "
    "which the product makes opt-in (off by default), so the block stays visible as content (counted as "
    "rejected); the peer guesses the name"
)

KNOWN = {
    'vllm:test_kimi_k2_tool_parser.py::TestExtractToolCalls::test_invalid_json_still_extracted#1':
        "the first call's arguments are not valid JSON (the object is never closed): a malformed block is never "
        "a call and stays visible as content; the peer hands the broken string on as arguments",
    'vllm:test_kimi_k2_tool_parser.py::TestExtractToolCalls::test_invalid_funcall_id_skipped#1':
        "'functions.invalid.0' is not a Kimi call id (NAME:IDX): the block is malformed, never a call, and stays "
        "visible as content (nothing lost); the peer drops it silently",
    'sglang:test_kimik2_detector.py::TestKimiK2EndToEnd::test_e2e_exception_mid_drain_preserves_accumulated_calls#1':
        "the peer's test patches its name resolver to raise on the second call (mock.patch), so it reports only "
        "the first; the output holds two well-formed sections, both calls",
    'sglang:test_kimik2_detector.py::TestKimiK2DetectorOpenAIIndexCompliance::test_bare_counter_id_also_starts_at_index_0#1':
        _BARE_COUNTER,
    'sglang:test_kimik2_detector.py::TestKimiK2BareCounterParsing::test_detect_and_parse_bare_counter#1':
        _BARE_COUNTER,
    'sglang:test_kimik2_detector.py::TestKimiK2BareCounterParsing::test_streaming_bare_counter_single_tool#1':
        _BARE_COUNTER,
    'sglang:test_kimik2_detector.py::TestKimiK2BareCounterParsing::test_detect_and_parse_bare_counter_skips_unknown#1':
        "the call id is a bare counter that names no function: no call (as the peer), and the block stays "
        "visible as content (nothing lost); the peer drops it",
}
