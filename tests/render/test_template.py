"""Loading templates (file, model folder) and rendering errors: each table row is checked against
``transformers`` loading the same folder, or against the error it must produce."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from toolbridge.errors import RenderError, ToolBridgeError
from toolbridge.render import ChatTemplate, load_model_dir, load_template
from toolbridge.render.template import prepare_messages

from .conversations import CALL_TURN, RESULT, TOOLS, USER, parts, served

transformers = pytest.importorskip("transformers")
logging.getLogger("transformers").setLevel(logging.ERROR)

DEFAULT = "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}{{ eos_token }}{% endfor %}"
TOOL_USE = ("{{ bos_token }}TOOLS {{ tools | tojson }}\n{% for m in messages %}[{{ m.role }}] "
            "{{ m.content }}{% for c in m.tool_calls or [] %}<c>{{ c.function | tojson(indent=1) }}"
            "{% endfor %}{{ eos_token }}{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}")
CONVERSATION = [USER, CALL_TURN, RESULT]


def save(root: Path, config: dict[str, Any], files: dict[str, str] | None = None) -> Path:
    """A model folder transformers can load: a tiny tokenizer.json plus the given files."""
    from tokenizers import Tokenizer, models

    root.mkdir(parents=True, exist_ok=True)
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<|im_end|>": 3}
    Tokenizer(models.WordLevel(vocab, unk_token="<unk>")).save(str(root / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", **config}
    (root / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    for name, text in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


FOLDERS = {
    "config_string": ({"chat_template": DEFAULT, "bos_token": "<s>", "eos_token": "</s>"}, {}),
    "config_list_prefers_tool_use": ({
        "chat_template": [{"name": "default", "template": DEFAULT},
                          {"name": "tool_use", "template": TOOL_USE}],
        "bos_token": {"content": "<s>", "__type": "AddedToken"}, "eos_token": "</s>"}, {}),
    "jinja_file_wins_over_config": ({"chat_template": TOOL_USE, "eos_token": "<|im_end|>"},
                                    {"chat_template.jinja": DEFAULT}),
    "additional_templates_folder": ({"eos_token": "</s>"}, {
        "chat_template.jinja": DEFAULT, "additional_chat_templates/tool_use.jinja": TOOL_USE}),
    "special_tokens_map_legacy": ({"chat_template": DEFAULT, "eos_token": "</s>"},
                                  {"special_tokens_map.json": json.dumps({"bos_token": "<s>"})}),
}


@pytest.mark.parametrize("case", sorted(FOLDERS))
def test_model_folder_renders_as_transformers_loads_it(case: str, tmp_path: Path) -> None:
    config, files = FOLDERS[case]
    root = save(tmp_path / case, config, files)
    reference = transformers.AutoTokenizer.from_pretrained(str(root))
    ours = load_model_dir(root)
    for tools in (None, TOOLS):
        expected = reference.apply_chat_template(served(CONVERSATION, "object"), tools=tools,
                                                 tokenize=False, add_generation_prompt=True)
        assert ours.render(CONVERSATION, tools, add_generation_prompt=True) == expected, tools


ERRORS = [
    # (template source, messages, what the error must say)
    ("{% for m in messages %}{{ m.content }", [USER], "does not compile"),
    ("{{ raise_exception('no tools here') }}", [USER], "refused the conversation: no tools here"),
    ("{{ messages[0].content + missing_var }}", [USER], "'missing_var' is undefined"),
    ("line one\n{{ tools | tojson }}{{ nothing.attr }}", [USER], "template line 2"),
    ("{% set ns = namespace(_x=1) %}", [USER], "underscore"),
    ("{{ messages | length }}", [], "empty conversation"),
    ("{{ messages | length }}", ["hello"], "message 0 is not an object"),
]


@pytest.mark.parametrize("source,messages,says", ERRORS)
def test_a_failing_template_names_itself_and_the_cause(source: str, messages: list[Any],
                                                       says: str) -> None:
    template = ChatTemplate("my-template.jinja", {"default": source})
    with pytest.raises(RenderError) as caught:
        template.render(messages, TOOLS)
    message = str(caught.value)
    assert says in message
    assert "my-template.jinja" in message or "message" in says or "conversation" in says


def test_named_templates_without_default_are_an_error() -> None:
    template = ChatTemplate("dir", {"tool_use": TOOL_USE, "rag": DEFAULT})
    assert template.render([USER], TOOLS).startswith("TOOLS")
    with pytest.raises(RenderError, match="none is called 'default'"):
        template.render([USER])


def test_reserved_variables_are_refused() -> None:
    with pytest.raises(RenderError, match="set by the renderer"):
        ChatTemplate("t", {"default": DEFAULT}).render([USER], messages=[])


def fn(arguments: Any, name: str = "get_weather") -> dict[str, Any]:
    return {"id": "abcDEF123", "type": "function",
            "function": {"name": name, "arguments": arguments}}


def turn(content: Any, *calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


IMAGE = [{"type": "text", "text": "What is this?"},
         {"type": "image_url", "image_url": {"url": "x"}}]
SHAPING = {
    # name: (message as a client sends it, argument shape, the message the template sees)
    "json string decoded": (turn(None, fn('{"city": "Paris", "days": 2}')), "object",
                            turn("", fn({"city": "Paris", "days": 2}))),
    "object kept": (turn("", fn({"city": "Paris"})), "object", turn("", fn({"city": "Paris"}))),
    "empty string is no arguments": (turn("", fn("")), "object", turn("", fn({}))),
    "blank string is no arguments": (turn("", fn(" \n")), "object", turn("", fn({}))),
    "null is no arguments": (turn("", fn(None)), "object", turn("", fn({}))),
    "json array decoded as it is": (turn("", fn("[1, 2]")), "object", turn("", fn([1, 2]))),
    "string kept for templates that take strings": (turn("", fn('{"city":"Paris"}')), "string",
                                                    turn("", fn('{"city":"Paris"}'))),
    "object written as json for them": (turn("", fn({"city": "Zürich"})), "string",
                                        turn("", fn('{"city": "Zürich"}'))),
    "null written as {} for them": (turn("", fn(None)), "string", turn("", fn("{}"))),
    "user text parts joined": ({"role": "user", "content": parts("line1", "line2")}, "object",
                               {"role": "user", "content": "line1\nline2"}),
    "system one part": ({"role": "system", "content": parts("Be terse.")}, "object",
                        {"role": "system", "content": "Be terse."}),
    "tool result parts": ({"role": "tool", "tool_call_id": "abcDEF123", "content": parts("line1")},
                          "object",
                          {"role": "tool", "tool_call_id": "abcDEF123", "content": "line1"}),
    "assistant parts and a call": (turn(parts("Checking."), fn("{}")), "object",
                                   turn("Checking.", fn({}))),
    "empty parts list": ({"role": "user", "content": []}, "object",
                         {"role": "user", "content": ""}),
    "an image part keeps the list": ({"role": "user", "content": IMAGE}, "object",
                                     {"role": "user", "content": IMAGE}),
    "a part without text keeps the list": ({"role": "user", "content": [{"type": "text"}]},
                                           "object",
                                           {"role": "user", "content": [{"type": "text"}]}),
    "null content is empty": ({"role": "user", "content": None}, "object",
                              {"role": "user", "content": ""}),
    "missing content stays missing": ({"role": "assistant", "tool_calls": [fn("{}")]}, "object",
                                      {"role": "assistant", "tool_calls": [fn({})]}),
    "other nulls dropped": ({"role": "user", "content": "Hi", "name": None}, "object",
                            {"role": "user", "content": "Hi"}),
    "plain string untouched": ({"role": "user", "content": "[{'type': 'text'}]"}, "object",
                               {"role": "user", "content": "[{'type': 'text'}]"}),
}


@pytest.mark.parametrize("case", sorted(SHAPING))
def test_messages_are_shaped_as_servers_give_them(case: str) -> None:
    sent, shape, seen = SHAPING[case]
    before = json.dumps(sent)
    assert prepare_messages([sent], arguments=shape) == [seen]
    assert json.dumps(sent) == before, "the caller's message was changed"


def test_shaped_messages_reach_the_template() -> None:
    template = ChatTemplate("t", {"default": (
        "{% for m in messages %}{{ m.role + ':' + m.content + ';' }}"
        "{% for c in m.tool_calls or [] %}{% for k, v in c.function.arguments.items() %}"
        "{{ k }}={{ v }};{% endfor %}{% endfor %}{% endfor %}")})
    messages = [{"role": "user", "content": parts("a", "b")}, turn(None, fn('{"city": "Paris"}')),
                {"role": "tool", "tool_call_id": "abcDEF123", "content": parts("line1")}]
    assert template.render(messages) == "user:a\nb;assistant:;city=Paris;tool:line1;"


@pytest.mark.parametrize("message,shape,says", [
    (turn("", fn("{oops", "read_file")), "object", "message 0: arguments of tool call 'read_file' "
                                                   "are not JSON"),
    ({"role": "user", "content": "Hi"}, "dict", "arguments must be one of"),
])
def test_arguments_that_cannot_be_shaped_are_clear_errors(message: dict[str, Any], shape: str,
                                                          says: str) -> None:
    with pytest.raises(RenderError, match=says):
        prepare_messages([message], arguments=shape)


def test_a_template_error_names_the_template_line_and_no_server_path(tmp_path: Path) -> None:
    path = tmp_path / "secret-dir" / "model.jinja"
    path.parent.mkdir()
    line3 = "{%- for k, v in m.tool_calls[0].function.arguments.items() %}"
    path.write_text("{% for m in messages %}\n{{ m.content }}\n" + line3 + "{{ k }}{% endfor %}"
                    "\n{% endfor %}", encoding="utf-8")
    with pytest.raises(RenderError) as caught:
        load_template(path).render([USER])
    message = str(caught.value)
    assert message.startswith("chat template model.jinja failed: ")
    assert f"(template line 3: {line3}{{{{ k }}}}{{% endfor %}})" in message
    assert str(tmp_path) not in message and "secret-dir" not in message
    path.write_text("line one\n{% if %}\n", encoding="utf-8")
    with pytest.raises(RenderError, match=r"does not compile: .* \(template line 2: \{% if %\}\)"):
        load_template(path).render([USER])
    assert load_model_dir(save(tmp_path / "folder", {"chat_template": DEFAULT})).name == "folder"


@pytest.mark.parametrize("loader,path,says", [
    (load_template, "/nonexistent/t.jinja", "cannot read chat template"),
    (load_model_dir, "/nonexistent", "model folder not found"),
])
def test_missing_sources_are_clear_errors(loader: Any, path: str, says: str) -> None:
    with pytest.raises(ToolBridgeError, match=says):
        loader(path)


def test_folder_without_template_is_an_error(tmp_path: Path) -> None:
    root = save(tmp_path / "m", {"eos_token": "</s>"})
    with pytest.raises(RenderError, match="no chat template"):
        load_model_dir(root)
    (root / "tokenizer_config.json").write_text('{"chat_template": 3}')
    with pytest.raises(RenderError, match="neither a string nor"):
        load_model_dir(root)
