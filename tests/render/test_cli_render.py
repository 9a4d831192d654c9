"""``toolbridge render``: the prompt on stdout byte for byte, probing, the fallback flag named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolbridge.cli.main import main
from toolbridge.render import ChatTemplate

from .conversations import CALL_TURN, RESULT, TOOLS, USER

TEMPLATE = ("{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}"
            "{% if enable_thinking is defined and not enable_thinking %}[no-think]{% endif %}"
            "</{{ m.role }}>\n{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}")


def write(tmp_path: Path, name: str, value: Any) -> str:
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return str(path)


def test_prints_the_prompt_exactly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = write(tmp_path, "t.jinja", TEMPLATE)
    m = write(tmp_path, "m.json", [USER])
    args = ["render", "--chat-template", t, m, "--var", "bos_token=<s>", "--var", "enable_thinking=false"]
    assert main(args) == 0
    expected = ChatTemplate("t", {"default": TEMPLATE}).render(
        [USER], add_generation_prompt=True, bos_token="<s>", enable_thinking=False)
    assert capsys.readouterr().out == expected
    assert expected.endswith("[no-think]</user>\n<assistant>")
    assert main([*args, "--no-generation-prompt"]) == 0
    assert capsys.readouterr().out == expected.removesuffix("<assistant>")


def test_tools_need_the_flag_and_the_flag_injects(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    t = write(tmp_path, "t.jinja", TEMPLATE)
    m = write(tmp_path, "m.json", {"messages": [USER, CALL_TURN, RESULT], "tools": TOOLS})
    assert main(["render", "--chat-template", t, m]) == 2
    err = capsys.readouterr().err
    assert "--tool-fallback" in err and "t.jinja" in err
    assert main(["render", "--chat-template", t, m, "--tool-fallback"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<system># Tool use") and '<tool_response id="abcDEF123"' in out
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}' in out


def test_tools_file_and_model_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "model"
    root.mkdir()
    write(root, "tokenizer_config.json", {"chat_template": "{% for t in tools %}{{ t.function.name }} {% endfor %}{{ eos_token }}",
                                           "eos_token": {"content": "</s>"}})
    tools = write(tmp_path, "tools.json", {"tools": TOOLS})
    m = write(tmp_path, "m.json", [USER])
    assert main(["render", "--model-dir", str(root), "--tools", tools, m]) == 0
    assert capsys.readouterr().out == "get_weather read_file </s>"


def test_probe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = write(tmp_path, "t.jinja", TEMPLATE)
    assert main(["render", "--chat-template", t, "--probe"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "tools": False, "tool_calls": False, "tool_role": True, "system_role": True,
        "arguments": "object"}


@pytest.mark.parametrize("content,args,says", [
    ("{% for %}", [], "does not compile"),
    (TEMPLATE, ["--var", "oops"], "expected KEY=VALUE"),
    (TEMPLATE, ["--tools", "/nonexistent.json"], "cannot read the tools file"),
])
def test_errors_exit_2_with_the_cause(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      content: str, args: list[str], says: str) -> None:
    t = write(tmp_path, "t.jinja", content)
    m = write(tmp_path, "m.json", [USER])
    assert main(["render", "--chat-template", t, m, *args]) == 2
    assert says in capsys.readouterr().err


def test_messages_must_be_a_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = write(tmp_path, "t.jinja", TEMPLATE)
    m = write(tmp_path, "m.json", {"no": "messages"})
    assert main(["render", "--chat-template", t, m]) == 2
    assert "'messages' array" in capsys.readouterr().err


SEED_LIKE = ("{% for m in messages %}{{ '<' + m.role + '>' + m.content }}"
             "{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments.items() %}"
             "[{{ k }}={{ v }}]{% endfor %}{% endfor %}{% endfor %}"
             "{% for t in tools %}|{{ t.function.name }}{% endfor %}")


def test_renders_what_agents_send(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Text parts and JSON-string arguments, as a client sends them, rendered as servers do."""
    t = write(tmp_path, "t.jinja", SEED_LIKE)
    messages = [{"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
                CALL_TURN, {**RESULT, "content": [{"type": "text", "text": "Sunny"}]}]
    m = write(tmp_path, "m.json", {"messages": messages, "tools": TOOLS})
    assert main(["render", "--chat-template", t, m]) == 0
    assert capsys.readouterr().out == (
        "<user>Weather?<assistant>[city=Paris][days=2]<tool>Sunny|get_weather|read_file")


def test_a_failing_template_is_named_with_its_line(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    t = write(tmp_path, "t.jinja",
              "{% for m in messages %}\n{{ m.content.nothing.deeper }}\n{% endfor %}")
    m = write(tmp_path, "m.json", [USER])
    assert main(["render", "--chat-template", t, m]) == 2
    err = capsys.readouterr().err
    assert "chat template t.jinja failed:" in err
    assert "(template line 2: {{ m.content.nothing.deeper }})" in err
