"""Corpus cases of poolside_v1 where toolbridge disagrees with the peer, each with the reason ours is right."""

from tests.known import PROMISE_NOTHING_LOST, PROMISE_UNKNOWN  # noqa: F401

KNOWN = {
    'sglang:test_poolside_v1_detector.py::TestPoolsideV1Detector::test_truncated_after_complete_call_keeps_complete#1':
        'the second call is cut off inside its first key: it is not a call and the report says truncated, and its '
        'text stays visible as content (nothing lost); the peer drops that text',
    'sglang:test_poolside_v1_detector.py::TestPoolsideV1Detector::test_truncated_post_value_emits_no_calls#1':
        'output ends after a closed value, only </tool_call> missing: the issue requires a recovered call '
        '(reported as recovered), as for GLM; the peer drops it',
    'sglang:test_poolside_v1_detector.py::TestPoolsideV1Detector::test_truncated_pre_value_emits_no_calls#1':
        'output ends inside a value: not a call, the report says truncated, and the cut-off block stays visible as '
        'content (nothing lost); the peer drops the text',
    'sglang:test_poolside_v1_detector.py::TestPoolsideV1Detector::test_unknown_tool_dropped#1':
        PROMISE_UNKNOWN,
}
