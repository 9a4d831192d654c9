"""The command line: ``toolbridge parse`` (whole, streamed, JSON lines), ``dialects``, ``demo``,
``bench`` dispatch, and the real console entry point in a subprocess."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from toolbridge import assemble, parse
from toolbridge.cli.progress import Progress
from toolbridge.cli.main import main
from toolbridge.cli.demo_parser import SAMPLES

REPO = Path(__file__).resolve().parent.parent

HERMES_CALL = (
    "Reading it.\n<tool_call>\n"
    '{"name": "read_file", "arguments": {"path": "src/a.py", "start_line": 3}}\n</tool_call>'
)
QWEN_CALL = (
    "<tool_call>\n<function=search>\n<parameter=query>\nTODO\n</parameter>\n"
    "<parameter=limit>\n20\n</parameter>\n</function>\n</tool_call>"
)
TOOLS = [
    {"type": "function", "function": {"name": "read_file", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}, "start_line": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "search", "parameters": {
        "type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}}}},
]


def write(tmp_path: Path, name: str, content: str) -> str:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return str(path)


def write_jsonl(tmp_path: Path, lines: list[Any]) -> str:
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    return write(tmp_path, "in.jsonl", text)


def out_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


# ---------------------------------------------------------------- one text


def test_parse_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "out.txt", HERMES_CALL)
    assert main(["parse", "--dialect", "hermes", "--call-ids", "index", path]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["message"] == {
        "role": "assistant",
        "content": "Reading it.",
        "tool_calls": [{"id": "call_0", "type": "function", "function": {
            "name": "read_file", "arguments": '{"path": "src/a.py", "start_line": 3}'}}],
    }
    assert result["report"]["calls"] == 1 and result["report"]["dialect"] == "hermes"
    assert result["finish_reason"] == "tool_calls"
    assert result["message"] == parse(HERMES_CALL, "hermes", call_id=lambda i: f"call_{i}").message


def test_stream_chunks_assemble_into_the_whole_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "out.txt", "<think>plan</think>" + HERMES_CALL)
    common = ["parse", "--dialect", "hermes", "--reasoning", "--call-ids", "index", path]
    assert main(common) == 0
    whole = json.loads(capsys.readouterr().out)
    assert main([*common, "--stream", "--chunk", "3"]) == 0
    lines = out_lines(capsys.readouterr().out)
    assert lines[-1] == {"finish_reason": "tool_calls"}
    deltas = lines[:-1]
    [call] = [d["tool_calls"] for d in deltas if "tool_calls" in d]
    assert call == [{"index": 0, **whole["message"]["tool_calls"][0]}], "the call whole, in one delta"
    assert assemble(deltas) == whole["message"]
    assert whole["message"]["reasoning_content"] == "plan"
    assert main([*common, "--stream", "--stream-arguments", "--chunk", "3"]) == 0
    deltas = out_lines(capsys.readouterr().out)[:-1]
    assert len([d for d in deltas if "tool_calls" in d]) > 1, "the opening, then the arguments"
    assert assemble(deltas) == whole["message"]


def test_tools_file_types_arguments_and_in_reasoning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = write(tmp_path, "tools.json", json.dumps({"tools": TOOLS}))
    path = write(tmp_path, "out.txt", "still thinking</think>" + QWEN_CALL)
    assert main(["parse", "--dialect", "qwen3_xml", "--tools", tools, "--in-reasoning", path]) == 0
    message = json.loads(capsys.readouterr().out)["message"]
    assert message["reasoning_content"] == "still thinking"
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"query": "TODO", "limit": 20}


def test_truncated_call_finishes_with_length(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "out.txt", HERMES_CALL[:60])
    assert main(["parse", "--dialect", "hermes", "-o", str(tmp_path / "r.json"), path]) == 0
    assert capsys.readouterr().out == ""
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["finish_reason"] == "length" and result["report"]["truncated"] is True
    assert result["message"]["content"] == HERMES_CALL[:60]


# ---------------------------------------------------------------- setup errors: exit 2


def test_unknown_dialect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "out.txt", "hi")
    assert main(["parse", "--dialect", "nosuch", path]) == 2
    err = capsys.readouterr().err
    assert "--dialect" in err and "'nosuch'" in err and "hermes" in err


def test_dialect_defaults_to_auto(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "--call-ids", "index", write(tmp_path, "out.txt", QWEN_CALL)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["report"]["dialect"] == "auto" and result["report"]["detected"] == "qwen3_coder"
    assert result["message"]["tool_calls"][0]["function"]["name"] == "search"


def test_model_hint_decides_a_shared_marker(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    glm_zero_args = write(tmp_path, "out.txt", "<tool_call>search</tool_call>")
    assert main(["parse", "--model", "zai-org/GLM-4.5-Air", glm_zero_args]) == 0
    assert json.loads(capsys.readouterr().out)["report"]["detected"] == "glm45"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "invalid JSON"),
        ('[{"type": "function", "function": {"parameters": {}}}]', "tools[0] has no function name"),
        ('{"tools": 3}', "tools must be a list"),
        ('[{"function": {"name": "f", "parameters": "x"}}]', "parameters must be a JSON Schema"),
    ],
)
def test_invalid_tools_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, expected: str
) -> None:
    tools = write(tmp_path, "tools.json", content)
    text = write(tmp_path, "out.txt", HERMES_CALL)
    assert main(["parse", "--dialect", "hermes", "--tools", tools, text]) == 2
    captured = capsys.readouterr()
    assert f"--tools {tools}" in captured.err and expected in captured.err
    assert captured.out == ""


def test_unreadable_tools_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "nope.json")
    assert main(["parse", "--dialect", "hermes", "--tools", missing, "-"]) == 2
    assert f"--tools {missing}: cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("jsonl", [False, True])
def test_unreadable_input_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], jsonl: bool) -> None:
    missing = str(tmp_path / "missing.txt")
    flags = ["--jsonl"] if jsonl else []
    assert main(["parse", "--dialect", "hermes", *flags, missing]) == 2
    assert f"cannot read {missing}" in capsys.readouterr().err


def test_input_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bin.txt"
    path.write_bytes(b"\xff\xfe<tool_call>")
    assert main(["parse", "--dialect", "hermes", str(path)]) == 2
    assert f"cannot read {path}" in capsys.readouterr().err


def test_bad_flag_values_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["parse", "--chunk", "0"], ["parse", "--call-ids", "seq"], []):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
    capsys.readouterr()


# ---------------------------------------------------------------- JSON lines


def test_jsonl_bad_lines_do_not_lose_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = {"id": "a", "text": HERMES_CALL}
    path = write_jsonl(tmp_path, [
        good,
        "{broken",
        {"id": 7, "text": "x", "dialect": "nosuch"},
        "",
        {"id": "b", "text": "plain answer, x < y"},
        {"id": "c"},
        {"id": "d", "text": "x", "tools": [{"function": {}}]},
        [1, 2],
        {"id": "e", "text": QWEN_CALL, "dialect": "qwen3_coder"},
    ])
    assert main(["parse", "--jsonl", "--dialect", "hermes", path]) == 1
    captured = capsys.readouterr()
    lines = out_lines(captured.out)
    assert [line.get("id") for line in lines] == ["a", None, 7, "b", "c", "d", None, "e"]
    errors = {line["line"]: line["error"] for line in lines if "error" in line}
    assert sorted(errors) == [2, 3, 6, 7, 8]  # blank line 4 is skipped, numbering is the file's
    assert "invalid JSON" in errors[2] and "'nosuch'" in errors[3] and '"text"' in errors[6]
    assert "tools" in errors[7] and "not a JSON object" in errors[8]
    for number, message in errors.items():
        assert f"line {number}: {message}" in captured.err
    assert lines[0]["message"]["tool_calls"][0]["function"]["name"] == "read_file"
    assert lines[3] == {**lines[3], "finish_reason": "stop"}
    assert lines[3]["message"]["content"] == "plain answer, x < y"
    assert lines[7]["report"]["dialect"] == "qwen3_coder"


def test_jsonl_all_good_exits_0_and_per_line_tools_override(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    string_limit = [{"type": "function", "function": {"name": "search", "parameters": {
        "type": "object", "properties": {"limit": {"type": "string"}}}}}]
    tools = write(tmp_path, "tools.json", json.dumps(TOOLS))
    path = write_jsonl(tmp_path, [
        {"id": 1, "text": QWEN_CALL},
        {"id": 2, "text": QWEN_CALL, "tools": string_limit},
        {"id": 3, "text": QWEN_CALL, "tools": {"tools": string_limit}},
    ])
    output = tmp_path / "out.jsonl"
    argv = ["parse", "--jsonl", "--dialect", "qwen3_coder", "--tools", tools, "-o", str(output), path]
    assert main(argv) == 0
    assert capsys.readouterr() == ("", "")
    lines = out_lines(output.read_text())
    limits = [json.loads(x["message"]["tool_calls"][0]["function"]["arguments"])["limit"] for x in lines]
    assert limits == [20, "20", "20"]


def test_jsonl_lines_without_a_dialect_are_auto(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(tmp_path, [{"id": 1, "text": QWEN_CALL}, {"id": 2, "text": "hi", "dialect": "glm45"}])
    assert main(["parse", "--jsonl", path]) == 0
    lines = out_lines(capsys.readouterr().out)
    assert lines[0]["report"]["detected"] == "qwen3_coder" and lines[1]["report"]["dialect"] == "glm45"


def test_jsonl_stream_equals_whole_line_by_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [
        {"id": n, "text": s.text, "dialect": s.dialect}
        for n, s in enumerate(SAMPLES)
    ]
    path = write_jsonl(tmp_path, records)
    common = ["parse", "--jsonl", "--reasoning", "--call-ids", "index", path]
    assert main(common) == 0
    whole = out_lines(capsys.readouterr().out)
    assert main([*common, "--stream", "--chunk", "2"]) == 0
    streamed = out_lines(capsys.readouterr().out)
    assert len(whole) == len(streamed) == len(records)
    assert any("tool_calls" in line["message"] for line in whole)
    for a, b in zip(whole, streamed):
        assert a == b


def test_jsonl_stream_of_a_truncated_call_equals_whole_and_says_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(tmp_path, [{"id": 0, "text": HERMES_CALL[:60]}])
    assert main(["parse", "--jsonl", "--dialect", "hermes", path]) == 0
    (whole,) = out_lines(capsys.readouterr().out)
    assert main(["parse", "--jsonl", "--dialect", "hermes", "--stream", path]) == 0
    (line,) = out_lines(capsys.readouterr().out)
    assert line == whole and line["finish_reason"] == "length" and "tool_calls" not in line["message"]
    # With --stream-arguments the opening of a call longer than a held block (HOLD_BLOCK) went
    # out before it was cut: the assembled message differs, and says length.
    long_call = HERMES_CALL.replace("src/a.py", "src/" + "a" * 300 + ".py")[:250]
    path = write_jsonl(tmp_path, [{"id": 0, "text": long_call}])
    assert main(["parse", "--jsonl", "--dialect", "hermes", "--stream", "--stream-arguments", "--chunk", "4",
                 path]) == 0
    (line,) = out_lines(capsys.readouterr().out)
    assert line["finish_reason"] == "length"
    assert line["message"]["tool_calls"][0]["function"]["name"] == "read_file"


def test_progress_redraws_at_most_five_times_a_second_and_clears() -> None:
    now = [0.0]
    stream = io.StringIO()
    progress = Progress(stream, enabled=True, clock=lambda: now[0])
    for done in range(1, 101):
        now[0] = done * 0.01  # 100 lines over one second
        progress.tick(done, 0)
    assert 4 <= stream.getvalue().count("\r\x1b[K") <= 5
    assert "100 lines" in stream.getvalue()
    progress.note("line 3: bad")
    progress.close()
    assert stream.getvalue().endswith("line 3: bad\n")  # nothing drawn after close
    quiet = io.StringIO()
    off = Progress(quiet, enabled=False)
    off.tick(1, 0)
    off.note("line 1: bad")
    off.close()
    assert quiet.getvalue() == "line 1: bad\n"


# ---------------------------------------------------------------- other commands


def test_dialects_lists_names_with_aliases(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dialects"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [line.split()[0] for line in lines]
    assert {"hermes", "qwen3_coder", "glm45", "glm47"} <= set(names)
    assert any(line.startswith("hermes") and "qwen25" in line for line in lines)
    assert names[0] == "auto" and all(" aliases:" in line or line.split()[0] == line.strip()
                                      for line in lines[1:])  # long names keep their column


def test_parser_demo_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--parser-only"]) == 0
    out = capsys.readouterr().out
    assert f"{len(SAMPLES)} of {len(SAMPLES)} samples behaved as expected" in out
    assert "'length'" in out


def test_gateway_demo_runs_the_agent_loop_through_the_gateway(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "the client got native tool_calls, whole and streamed" in out
    assert out.count("tool_call run_tests(") == 10  # five dialects, whole and streamed
    for dialect in ("hermes", "qwen3_coder", "glm47", "kimi_k2", "mistral"):  # recognised by auto
        assert f"dialect={dialect}" in out


def test_bench_passes_its_arguments_through(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake_main(argv: list[str]) -> int:
        seen.append(argv)
        return 0

    fake = types.ModuleType("toolbridge.bench.parsers")
    fake.main = fake_main  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "toolbridge.bench.parsers", fake)
    assert main(["bench", "--quick", "--json"]) == 0
    assert seen == [["--quick", "--json"]]


def test_console_script_via_python_m() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "toolbridge", "parse", "--dialect", "glm47", "-"],
        input="<tool_call>f<arg_key>n</arg_key><arg_value>5</arg_value></tool_call>",
        capture_output=True, text=True, cwd=REPO, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["message"]["tool_calls"][0]["function"]["arguments"] == '{"n": 5}'
    bad = subprocess.run(
        [sys.executable, "-m", "toolbridge", "parse", "--dialect", "nosuch", "-"],
        input="", capture_output=True, text=True, cwd=REPO, timeout=60, check=False,
    )
    assert bad.returncode == 2 and "nosuch" in bad.stderr
