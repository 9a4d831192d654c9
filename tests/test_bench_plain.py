"""Smoke test of ``toolbridge bench --plain``: one short run per answer kind through real
processes on loopback (upstream, floor, gateway, load generator), every front's answers checked.
Only the shape of the output and the checks are asserted, no timing (machines are shared)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from typing import Any

import pytest

from toolbridge.bench import plain


@pytest.fixture(scope="module")
def figures() -> dict[str, Any]:
    out = io.StringIO()
    argv = ["--quick", "--dialect", "qwen3_coder", "--size", "small", "--size", "prose", "--size", "33k",
            "--nice", "0", "--json"]
    with contextlib.redirect_stdout(out):
        assert plain.main(argv) == 0  # every answer checked, no request failed
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def test_every_front_and_answer_has_its_row(figures: dict[str, Any]) -> None:
    rows = figures["rows"]
    assert [(r["size"], r["front"]) for r in rows] == [(s, f) for s in plain.SIZES for f in plain.FRONTS]
    for row in rows:
        assert row["rps"] > 0 and row["floor_rps"] > 0 and row["ratio"] > 0
        assert row["cpu_us"] > 0 and row["floor_cpu_us"] > 0  # the servers' CPU a request
        assert isinstance(row["ratio_ok"], bool)
        assert (row["rps_goal"] is not None) == (row["front"] == "chat" and row["size"] != "33k")


def test_the_report_gives_each_row_its_verdict(figures: dict[str, Any]) -> None:
    text = plain.report(figures["rows"], 1, 0.5)
    lines = [line for line in text.splitlines() if line.startswith("  qwen3_coder")]
    assert len(lines) == len(figures["rows"])
    assert all(" PASS" in line or " FAIL" in line for line in lines)
    assert "µs/req" in text
    assert text.splitlines()[-1].startswith("goals met: ")


def test_a_wrong_answer_fails_the_front_check() -> None:
    from argparse import Namespace

    from toolbridge.bench.load import check_answer

    args = Namespace(front="messages", args="33k", dialect="qwen3_coder", translated=True)
    assert check_answer(b'{"content": [{"type": "text", "text": "no call"}]}', args) is not None
    assert check_answer(b'{"content": [{"type": "tool_use", "name": "edit_file"}]}', args) is None
    args.args = "prose"
    assert check_answer(b'{"content": [{"type": "tool_use", "name": "edit_file"}]}', args) is not None


def test_the_bound_answers_every_front_and_is_reported() -> None:
    """``--bound``: the least translation runs beside the floor and the gateway, its answers checked
    by the same load (a wrong one fails the run), its ratio and CPU reported in their own columns."""
    out = io.StringIO()
    argv = ["--quick", "--bound", "--dialect", "hermes", "--size", "small", "--size", "prose", "--nice", "0", "--json"]
    with contextlib.redirect_stdout(out):
        assert plain.main(argv) == 0
    rows = json.loads(out.getvalue())["rows"]
    assert all(r["bound_ratio"] > 0 and r["bound_cpu_us"] > 0 for r in rows)
    assert "bound" in plain.report(rows, 1, 0.5).splitlines()[3]


@pytest.mark.parametrize(("text", "read"), [
    ('lead <tool_call>{"name": "t", "arguments": {"p": "x", "n": 2}}</tool_call>', ("lead", ("t", '{"p":"x","n":2}'))),
    ('<tool_call>{"name": "t", "arguments": {"n": 2}}</tool_call>', None),  # required "p" missing
    ('<tool_call>{"name": "t", "arguments": {"p": 1}}</tool_call>', None),  # "p" not a string
    ('<tool_call>{"name": "u", "arguments": {"p": "x"}}</tool_call>', None),  # no such tool
    ('<tool_call>{"name": "t", "arguments": {"p": "x", "q": 1}}</tool_call>', None),  # no such property
    ('<tool_call>{"name": "t", "arguments": {"p": "x"}</tool_call>', None),  # not JSON
    ('<tool_call>{"name": "t", "arguments": {"p": "x"}}', None),  # not closed
    ("no call", None),
])
def test_the_bound_reads_a_call_only_when_it_fits(text: str, read: Any) -> None:
    from toolbridge.bench.bound import read_call

    schemas = {"t": {"type": "object", "properties": {"p": {"type": "string"}, "n": {"type": "integer"}},
                     "required": ["p"]}}
    assert read_call(text, schemas) == (read if read is not None else (text, None))


# ---------------------------------------------------------------- --instructions


def _case(floor: float | None, **fronts: float) -> dict[str, Any]:
    return {"dialect": "hermes", "size": "small", "problems": [],
            "instructions": {**({"floor": floor} if floor else {}),
                             **{k.replace("_", " "): v for k, v in fronts.items()}}}


@pytest.mark.parametrize(("case", "ratios", "verdicts"), [
    (_case(250e3, chat=500e3, messages=400e3, responses=625e3), [0.5, 0.625, 0.4], [True, True, False]),
    (_case(None, chat=500e3, messages=400e3, responses=625e3), [None] * 3, [None] * 3),  # no floor: no verdict
    (_case(250e3, chat=500e3), [0.5, None, None], [True, None, None]),  # a front not counted
])
def test_counted_rows_are_the_floors_instructions_over_each_fronts(case: dict[str, Any], ratios: list[Any],
                                                                  verdicts: list[Any]) -> None:
    from toolbridge.bench import instructions

    table = instructions.rows(case, plain.FRONTS, plain.RATIO_GOAL)
    assert [r["front"] for r in table] == list(plain.FRONTS)
    assert [r["ratio"] for r in table] == ratios
    assert [r["ratio_ok"] for r in table] == verdicts
    text = instructions.report(table, 40, 64, plain.RATIO_GOAL)
    met, judged = sum(v is True for v in verdicts), sum(v is not None for v in verdicts)
    assert text.splitlines()[-1] == f"goals met: {met} of {judged}"


def test_counted_rows_give_the_bounds_ratio_beside() -> None:
    from toolbridge.bench import instructions

    table = instructions.rows(_case(250e3, chat=500e3, bound_chat=312.5e3), plain.FRONTS, plain.RATIO_GOAL)
    assert table[0]["bound_ratio"] == 0.8 and table[1]["bound_ratio"] is None
    assert "0.800x" in instructions.report(table, 40, 64, plain.RATIO_GOAL)


def test_a_callgrind_dump_is_read_for_its_total(tmp_path: Any) -> None:
    from toolbridge.bench import instructions

    done, partial = tmp_path / "cg.1", tmp_path / "cg.2"
    done.write_text("version: 1\ncmd: python\nevents: Ir\nsummary: 123456\nfn=(1) main\n0 5\ntotals: 125000\n")
    partial.write_text("version: 1\nevents: Ir\n")  # (its head not written yet)
    assert instructions._total({str(done)}) == 123456
    assert instructions._total({str(partial)}) is None


def test_without_valgrind_the_count_says_so_and_exits_2(monkeypatch: Any, tmp_path: Any,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # (nothing on it)
    assert plain.main(["--instructions", "--quick"]) == 2
    assert "needs valgrind" in capsys.readouterr().err


@pytest.mark.check
@pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("callgrind_control") is None,
                    reason="valgrind is not installed")
def test_instructions_are_counted_for_every_front() -> None:
    """The floor and the gateway under callgrind, 40 requests a front: a count for each, every
    answer checked (a wrong one or a failed request exits 1)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert plain.main(["--instructions", "--quick", "--dialect", "hermes", "--connections", "8", "--json"]) == 0
    table = json.loads(out.getvalue())["rows"]
    assert [r["front"] for r in table] == list(plain.FRONTS)
    for row in table:
        assert 50e3 < row["floor_instructions"] < row["instructions"] < 5e6  # (the gateway does more than the floor)
        assert 0 < row["ratio"] < 1 and isinstance(row["ratio_ok"], bool)
