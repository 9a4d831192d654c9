"""Smoke test of ``toolbridge bench --speed``: in quick mode every row is measured, every result
(toolbridge's and the reference's) checked, and the report names every row with its verdict.
No timing is asserted (machines are shared and noisy): the bench prints the ratios."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest

from toolbridge import parse
from toolbridge.bench.references import (
    TOOLS,
    PlainHermes,
    check_message,
    check_plain,
    file_output,
    regex_hermes,
    short_output,
    stream,
)
from toolbridge.bench.speed import FAMILIES, QUICK, Row, Side, measure, measure_row, report
from toolbridge.cli.main import main as cli_main

SIZES = ("1k", "2k", "8k", "33k", "128k")
CASES = [
    "hermes short call", "hermes short call",
    *(case for size in SIZES for case in [f"hermes {size} arg"] * 2),
    "qwen3_coder short call", "qwen3_coder 1k arg", "qwen3_coder 8k arg", "qwen3_coder 33k arg",
    "seed_oss short call", "glm45 short call", "minimax_m2 short call",
    "prose hermes", "prose auto", 'parse("hi", "hermes", tools)', "prose hermes vs hi", "prose auto vs hi",
    "auto hermes 8k arg", "auto qwen3_coder 8k arg", "auto hermes short, whole", "auto qwen3_coder short, whole",
    "auto hermes short", "auto qwen3_coder short", "auto hermes 8k arg, streamed", "auto qwen3_coder 8k arg, streamed",
    "auto hermes 33k arg", "auto qwen3_coder 33k arg",
    "hermes 1 call", "hermes 8 parallel calls",
    *(f"{name} short" for name in FAMILIES),
    'StreamParser("hermes", tools)', 'StreamParser("auto", tools)',
    "hermes 33k arg, per delta",
]

# The rows with no goal: parse("hi") and construction (3), the other families, Hermes against
# the regex below 2k characters (the short call and 1k), and the old absolute goals issue 37
# restated as ratios (json.loads of the call's JSON at every size, prose against one substring
# test, hermes and auto).
NO_GOAL = 3 + len(FAMILIES) + 2 + (1 + len(SIZES)) + 2


@pytest.fixture(scope="module")
def figures() -> dict[str, Any]:
    return measure(quick=True)


def test_quick_run_measures_and_checks_every_row(figures: dict[str, Any]) -> None:
    rows = figures["rows"]
    assert [row["case"].split(" (")[0] for row in rows] == CASES
    for row in rows:
        assert row["problem"] is None, row  # every result, toolbridge's and the reference's, was right
        assert row["toolbridge_ns"] > 0 and row["repeats"] >= 1
        if row["reference"] is not None:
            assert row["reference_ns"] > 0 and row["figure"] > 0
            assert isinstance(row["ok"], bool) or row["goal"] is None
    goals = [row for row in rows if row["goal"] is not None]
    assert len(goals) == len(rows) - NO_GOAL
    assert figures["header"]["quick"] is True


def test_report_names_every_row_with_its_verdict(figures: dict[str, Any]) -> None:
    lines = report(figures).splitlines()
    for row in figures["rows"]:
        found = [line for line in lines if f"  {row['case']} " in line
                 and (row["reference"] is None or row["reference"] in line)]
        assert len(found) == 1, row["case"]
        if row["goal"] is not None:
            assert found[0].endswith("PASS" if row["ok"] else "FAIL")
    goals = len(CASES) - NO_GOAL
    assert lines[-1] == f"goals met: {sum(bool(r['ok']) for r in figures['rows'])} of {goals}"


def test_a_wrong_parse_is_reported_and_not_timed() -> None:
    out, other = short_output("hermes"), file_output("hermes", "1k")
    wrong = Side("toolbridge", partial(parse, other.text, "hermes", TOOLS), check_message(out))
    right = Side("regex", partial(regex_hermes, out.text), check_plain(out))
    row = measure_row(Row("section", "case", "regex", 1.0), wrong, right, QUICK)
    assert row.problem is not None and row.problem.startswith("toolbridge: calls")
    assert row.repeats == 0 and row.figure is None and row.ok is None


@pytest.mark.parametrize("calls", [1, 8])
def test_the_plain_floor_is_right_at_any_split(calls: int) -> None:
    out = short_output("hermes", calls)
    check = check_plain(out)
    for size in (1, 3, 4, 11, len(out.text)):
        deltas = [out.text[i : i + size] for i in range(0, len(out.text), size)]
        assert check(stream(PlainHermes, deltas)) is None, size


def test_the_bench_command_has_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["bench", "--speed", "--quick", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [row["case"].split(" (")[0] for row in rows] == CASES
