"""Smoke test of the fronts comparison in ``toolbridge bench --gateway``: every front measured,
every stream and answer checked; no timing asserted (machines are shared and noisy)."""

from __future__ import annotations

import pytest

from toolbridge.bench import fronts
from toolbridge.bench.script import DIALECTS


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_front_is_measured_and_checked(dialect: str) -> None:
    figures = fronts.measure(dialect, quick=True)
    assert figures["problems"] == []
    assert set(figures["stream_us_per_chunk"]) == set(figures["whole_rps"]) == {"chat", "messages", "responses"}
    assert all(v > 0 for v in (*figures["stream_us_per_chunk"].values(), *figures["whole_rps"].values()))
    report = fronts.report(figures)
    assert "messages" in report and "responses" in report
    assert set(figures["ratio"]) == {"messages", "responses"}


def test_a_wrong_translation_fails_the_check() -> None:
    assert fronts.check("messages", b'{"content": [], "stop_reason": "end_turn"}', False, "hermes")
    assert fronts.check("chat", b'{"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}]}',
                        False, "hermes")
    assert fronts.check("responses", b'{"output": [], "status": "completed"}', False, "hermes")
