"""``toolbridge grammar``: each format printed, the lazy triggers, and clear failures (exit 2).
What the grammars accept is tested with the engines themselves in tests/constrain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolbridge.cli.main import main

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
    "required": ["city"]}}}]


@pytest.fixture()
def tools_file(tmp_path: Path) -> str:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": TOOLS}))
    return str(path)


@pytest.mark.parametrize(("dialect", "fmt", "expected"), [
    ("hermes", "structural-tag", '"type": "structural_tag"'),
    ("hermes", "gbnf", 'root ::= '),
    ("hermes", "lark", "%json {"),
    ("qwen3_coder", "gbnf", '"<parameter=unit>\\n" ("c" | "f")'),
    ("qwen3_coder", "lark", "start: "),
])
def test_each_format(tools_file: str, capsys: pytest.CaptureFixture[str], dialect: str, fmt: str,
                     expected: str) -> None:
    assert main(["grammar", "--dialect", dialect, "--tools", tools_file, "--format", fmt,
                 "--tool-choice", "required"]) == 0
    out = capsys.readouterr().out
    assert expected in out
    if fmt == "structural-tag":
        assert json.loads(out)["format"]


def test_lazy_gbnf_prints_its_triggers(tools_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grammar", "--dialect", "hermes", "--tools", tools_file, "--format", "gbnf", "--lazy"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith('root ::= "<tool_call>')
    assert 'triggers: ["<tool_call>"]' in captured.err


def test_named_tool_choice(tools_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grammar", "--dialect", "hermes", "--tools", tools_file, "--format", "structural-tag",
                 "--tool-choice", "get_weather"]) == 0
    assert "get_weather" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "message"), [
    (["--dialect", "hermes", "--format", "json-schema"], "no JSON schema form"),
    (["--dialect", "no_such_dialect"], "unknown dialect"),
    (["--dialect", "hermes", "--tool-choice", "other_tool"], "not among the tools"),
    (["--dialect", "hermes", "--tool-choice", "none"], "nothing to constrain"),
])
def test_failures_say_why(tools_file: str, capsys: pytest.CaptureFixture[str], args: list[str],
                          message: str) -> None:
    assert main(["grammar", "--tools", tools_file, *args]) == 2
    assert message in capsys.readouterr().err


def test_unreadable_tools_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grammar", "--dialect", "hermes", "--tools", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_bench_grammar_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--grammar", "--repeats", "1", "--counts", "1"]) == 0
    out = capsys.readouterr().out
    assert "hermes" in out and "cached" in out
