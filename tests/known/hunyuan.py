"""Corpus cases of hunyuan where toolbridge disagrees with the peer, each with the reason ours is right."""

from tests.known import PROMISE_UNKNOWN

KNOWN = {
    'sglang:test_hunyuan_detector.py::TestHunyuanDetectorDetectAndParse::test_mixed_known_and_unknown_tools#1':
        PROMISE_UNKNOWN + " (the offered calls before and after it are calls, as the peer gives)",
    'sglang:test_hunyuan_detector.py::TestHunyuanDetectorDetectAndParse::test_unknown_tool_skipped#1':
        PROMISE_UNKNOWN,
}
