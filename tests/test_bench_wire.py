"""Smoke test of the whole-calls figures in ``toolbridge bench --gateway``: both call sizes, both
modes, every stream checked (in the whole mode, the call in one delta out of the chunk that ends
it); no timing asserted (machines are shared and noisy)."""

from __future__ import annotations

import pytest

from toolbridge.bench import wire
from toolbridge.bench.script import DIALECTS, Script


@pytest.mark.parametrize("dialect", DIALECTS)
def test_both_modes_are_measured_and_checked(dialect: str) -> None:
    figures = wire.measure(dialect, quick=True)
    assert figures["problems"] == []
    assert set(figures["sizes"]) == {"small", "33k"}
    for row in figures["sizes"].values():
        for mode in wire.MODES:
            assert row[mode]["us_per_chunk"] > 0 and 0 < row[mode]["end_us"] <= row[mode]["end_p90_us"]
    assert "33k call" in wire.report(figures)


def test_a_call_streamed_in_pieces_fails_the_whole_check() -> None:
    script = Script.build("hermes", "small")
    last = wire.ending(script)
    assert wire.run_once(script, False, last)[2] is None and wire.run_once(script, True, last)[2] is None
    _, _, pieces = wire.translate(script, True, last)
    assert "deltas" in (wire._problem(script, pieces, last, False) or "")
