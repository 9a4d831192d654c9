"""Rendering parity: every shared chat template over our conversations, byte-identical to
``transformers``' ``apply_chat_template`` (the reference) given the messages as a server hands
them over, or failing where it fails.

Servers do not pass OpenAI messages to templates as clients send them: ``served`` (in
conversations.py) writes out, independently of the renderer, what they do (``content: null`` as "", text parts joined by
newlines, call arguments decoded, or kept as the JSON text for the templates listed in
STRING_ARGUMENTS). ``ChatTemplate.render`` must give from the client's messages exactly what
``transformers`` gives from the served ones, and ``build_prompt`` must render every OpenAI-shaped
tool loop (string arguments, text-part contents) on every template that supports tools.

Templates that ``transformers`` cannot render with tools at all are listed in UNRENDERABLE with the
cause, so a change in either direction shows up as a failure. Without ../shared the tests skip.
"""

from __future__ import annotations

import copy
import logging
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from toolbridge.errors import FallbackRequired, RenderError
from toolbridge.render import ChatTemplate, build_prompt, capabilities, load_template

from .conversations import CONVERSATIONS, LOOPS, SPECIAL, label, served, template_files

transformers = pytest.importorskip("transformers")
logging.getLogger("transformers").setLevel(logging.ERROR)

# Templates transformers renders none of our conversations with tools with, and why.
UNRENDERABLE = {
    "fireworks-ai-llama-3-firefunction-v2.jinja": "'functions' is undefined",
    "llama-cpp-deepseek-r1.jinja": "Object of type generator is not JSON serializable",
    "sglang-examples/tool_chat_template_deepseekr1.jinja": "'dict object' has no attribute 'name'",
}
# Templates that print or concatenate call arguments: they are given the JSON text.
STRING_ARGUMENTS = {
    "meetkai-functionary-medium-v3.2.jinja",  # '>>>' + name + '\n' + arguments
    "vllm-examples/tool_chat_template_phi4_mini.jinja",  # {{ arguments }}: a dict as Python
}
ALL = {**CONVERSATIONS, **LOOPS}
WITH_TOOLS = {name for name, (_, tools, _) in ALL.items() if tools}


class FrozenClock(datetime):
    """``datetime.now()`` fixed, so that templates that print the time (``strftime_now``) render
    the same here and in the reference whenever each runs."""

    @classmethod
    def now(cls, tz: Any = None) -> FrozenClock:
        return cls(2026, 3, 5, 8, 2, 54)


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    from transformers.utils import chat_template_utils

    from toolbridge.render import _env

    monkeypatch.setattr(chat_template_utils, "datetime", FrozenClock)
    monkeypatch.setattr(_env, "datetime", FrozenClock)


@pytest.fixture(scope="module")
def oracle() -> Any:
    from tokenizers import Tokenizer, models

    vocab = {token: i for i, token in enumerate(SPECIAL.values())}
    backend = Tokenizer(models.WordLevel(vocab, unk_token=SPECIAL["unk_token"]))
    return transformers.PreTrainedTokenizerFast(tokenizer_object=backend, **SPECIAL)


def reference(oracle: Any, source: str, messages: list[Any], tools: Any, extra: dict[str, Any],
              generation: bool) -> str | Exception:
    try:
        return str(oracle.apply_chat_template(copy.deepcopy(messages), tools=copy.deepcopy(tools),
                                              chat_template=source, tokenize=False,
                                              add_generation_prompt=generation, **extra))
    except Exception as exc:  # noqa: BLE001  (the oracle fails with whatever the template raises)
        return exc


def ours(path: Path) -> tuple[ChatTemplate, str]:
    template = load_template(path)
    return ChatTemplate(template.name, template.sources, SPECIAL), template.sources["default"]


@pytest.mark.parametrize("path", template_files(), ids=label)
def test_template_matches_transformers(path: Path, oracle: Any) -> None:
    template, source = ours(path)
    shape = "string" if label(path) in STRING_ARGUMENTS else "object"
    failures = set()
    for name, (messages, tools, extra) in ALL.items():
        for generation in (True, False):
            expected = reference(oracle, source, served(messages, shape), tools, extra, generation)
            before = copy.deepcopy(messages)
            if isinstance(expected, Exception):
                with pytest.raises(RenderError) as caught:
                    template.render(messages, tools, add_generation_prompt=generation,
                                    arguments=shape, **extra)
                assert path.name in str(caught.value), caught.value
                failures.add(name)
            else:
                got = template.render(messages, tools, add_generation_prompt=generation,
                                      arguments=shape, **extra)
                assert got == expected, f"{label(path)} / {name} / generation={generation}"
            assert messages == before, "rendering changed the caller's messages"
    assert (WITH_TOOLS <= failures) == (label(path) in UNRENDERABLE), (label(path),
                                                                       sorted(failures))


@pytest.mark.parametrize("path", template_files(), ids=label)
def test_probe_names_the_argument_shape(path: Path) -> None:
    template, _ = ours(path)
    assert capabilities(template).arguments == (
        "string" if label(path) in STRING_ARGUMENTS else "object")


def supports_tools(oracle: Any, source: str, shape: str) -> bool:
    """transformers renders the first loop with the declaration of the tool it does not call
    and with the tool's result: the template carries the tool protocol."""
    messages, tools, extra = LOOPS["loop_text_parts"]
    prompt = reference(oracle, source, served(messages, shape), tools, extra, True)
    return isinstance(prompt, str) and "read_file" in prompt and "Sunny, 21 C" in prompt


@pytest.mark.parametrize("path", template_files(), ids=label)
def test_tool_loops_render_as_servers_do(path: Path, oracle: Any) -> None:
    """build_prompt, as the CLI and the gateway call it, on the client's own messages."""
    template, source = ours(path)
    shape = capabilities(template).arguments
    supported = supports_tools(oracle, source, shape)
    for name, (messages, tools, extra) in LOOPS.items():
        expected = reference(oracle, source, served(messages, shape), tools, extra, True)
        try:
            got = build_prompt(template, messages, tools, variables=extra).text
        except FallbackRequired:
            assert not supported, f"{label(path)} / {name} refused, but it renders tool loops"
            continue
        except RenderError as exc:
            assert isinstance(expected, Exception), f"{label(path)} / {name}: {exc}"
            continue
        assert supported or name != "loop_text_parts", f"{label(path)} rendered without tools"
        assert got == expected, f"{label(path)} / {name}"


def test_most_shared_templates_render_tool_loops(oracle: Any) -> None:
    """The count the tests above check one by one, pinned so that a skip cannot hide a loss."""
    paths = template_files()
    if not paths:
        pytest.skip("shared templates not present")
    supported = [p for p in paths
                 if supports_tools(oracle, ours(p)[1], "string" if label(p) in STRING_ARGUMENTS
                                   else "object")]
    assert len(supported) >= 75, len(supported)


@pytest.mark.parametrize("file,cause", sorted(UNRENDERABLE.items()))
def test_unrenderable_templates_say_which_and_why(file: str, cause: str) -> None:
    paths = [p for p in template_files() if label(p) == file]
    if not paths:
        pytest.skip("shared templates not present")
    messages, tools, extra = CONVERSATIONS["call_and_result"]
    with pytest.raises(RenderError) as caught:
        load_template(paths[0]).render(messages, tools, **extra)
    message = str(caught.value)
    assert paths[0].name in message and cause in message and "template line" in message
    assert str(paths[0].parent) not in message
