"""Smoke test of ``toolbridge bench --plain``: one short run per answer kind through real
processes on loopback (upstream, floor, gateway, load generator), every front's answers checked.
Only the shape of the output and the checks are asserted, no timing (machines are shared)."""

from __future__ import annotations

import contextlib
import io
import json
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

    from toolbridge.bench.load import _check_answer

    args = Namespace(front="messages", args="33k", dialect="qwen3_coder", translated=True)
    assert _check_answer(b'{"content": [{"type": "text", "text": "no call"}]}', args) is not None
    assert _check_answer(b'{"content": [{"type": "tool_use", "name": "edit_file"}]}', args) is None
    args.args = "prose"
    assert _check_answer(b'{"content": [{"type": "tool_use", "name": "edit_file"}]}', args) is not None


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
