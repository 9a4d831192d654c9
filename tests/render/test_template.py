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

from .conversations import CALL_TURN, RESULT, TOOLS, USER

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
        expected = reference.apply_chat_template(CONVERSATION, tools=tools, tokenize=False,
                                                 add_generation_prompt=True)
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


def test_decode_arguments_gives_templates_objects() -> None:
    template = ChatTemplate("t", {"default": "{{ messages[1].tool_calls[0].function.arguments.city }}"})
    assert template.render(CONVERSATION, decode_arguments=True) == "Paris"
    bad = [USER, {"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": "{oops"}}]}]
    with pytest.raises(RenderError, match="message 1: tool call arguments are not JSON"):
        template.render(bad, decode_arguments=True)


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
