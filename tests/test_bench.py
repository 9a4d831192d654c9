"""Smoke test of ``toolbridge bench``: it runs with tiny sizes, covers every dialect, and every
benchmark output parses into its call. No timing is asserted (machines are shared and noisy)."""

from __future__ import annotations

import json

import pytest

from toolbridge import dialect_names, get_dialect
from toolbridge.bench.parsers import QUICK, _arg_case, main

PRIMARY = sorted({get_dialect(name).name for name in dialect_names()})
CASES = ["call", "prose", *(_arg_case(n) for n in QUICK.args)]


def test_json_covers_every_dialect_and_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick", "--repeat", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in report["dialects"]] == PRIMARY
    for dialect in report["dialects"]:
        assert dialect["problem"] is None
        assert [row["case"] for row in dialect["rows"]] == CASES
        for row in dialect["rows"]:
            assert row["problem"] is None
            assert row["ns"] > 0 and row["floor_ns"] > 0 and row["runs"] == 1
            assert row["us_per_delta"] > 0 and row["mb_per_s"] > 0
        assert dialect["linearity"] > 0
    assert report["header"]["quick"] is True


def test_text_report_has_a_section_per_selected_dialect(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick", "--repeat", "1", "--dialect", "qwen3", "--dialect", "glm47"]) == 0
    out = capsys.readouterr().out
    assert "== glm47 ==" in out and "== hermes ==" in out  # qwen3 is an alias of hermes
    assert "== qwen3_coder ==" not in out and "== glm45 ==" not in out
    assert "GC disabled" in out and "linearity:" in out
    assert "vLLM 720 ms" in out  # hermes is compared with the figures of issue 2


def test_unknown_dialect_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--quick", "--dialect", "no_such_dialect"])
    assert exc.value.code == 2


def test_auto_rows_read_each_dialects_outputs(capsys: pytest.CaptureFixture[str]) -> None:
    """A few families here (tests/test_auto.py round-trips every dialect through auto)."""
    picked = ["hermes", "kimi_k2", "functionary_v3_2", "gpt_oss"]  # functionary: only with its model hint
    argv = ["--quick", "--repeat", "1", "--auto", "--json", *(f"--dialect={d}" for d in picked)]
    assert main(argv) == 0  # 0: every output parsed as expected
    names = [d["name"] for d in json.loads(capsys.readouterr().out)["dialects"]]
    assert names == sorted(picked) + [f"auto:{name}" for name in sorted(picked)]
