"""``toolbridge bench --prefix``: a Claude Code session replayed from the captured request through
the gateway, the tokens an upstream's prefix cache would re-read per turn, before and after the
stable prompt."""

from __future__ import annotations

import pytest

from toolbridge.bench.prefix import CAPTURE, CAPTURES, main


def test_the_stable_prompt_keeps_each_turns_prefix_cached(capsys: pytest.CaptureFixture[str]) -> None:
    if not (CAPTURES / CAPTURE).exists():
        pytest.skip(f"{CAPTURES / CAPTURE} is absent (the captured Claude Code request)")
    assert main(["--turns", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    figures = [[int(n) for n in line.split()[1:-1]] for line in lines if line.strip().startswith(("before", "after"))]
    assert len(figures) == 4 and all(len(f) == 4 for f in figures), lines  # as captured (before, after), then with per-request values (before, after)
    captured_before, captured_after, before, after = figures
    assert all(n > 10_000 for n in before[:4]), before  # cch changes: the whole prompt re-read each turn
    assert all(n < 500 for n in after[1:4]), after  # only the new turn is read
    assert captured_after[1:] == after[1:] and captured_before[1:] == captured_after[1:]
