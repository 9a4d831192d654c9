"""Rendering parity: every shared chat template over our conversations, byte-identical to
``transformers``' ``apply_chat_template`` (the reference), or failing where it fails.

A template/conversation pair that ``transformers`` cannot render must fail here too, with a
RenderError naming the template (most such failures are the template's own: arguments given as
the JSON string clients send where it wants an object, ``content: null`` dropped as transformers
drops it). Templates that ``transformers`` cannot render with tools at all are listed in
UNRENDERABLE with the cause, so a change in either direction shows up as a failure.
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any

import pytest

from toolbridge.errors import RenderError
from toolbridge.render import ChatTemplate, load_template

from .conversations import CONVERSATIONS, SPECIAL, label, template_files

transformers = pytest.importorskip("transformers")
logging.getLogger("transformers").setLevel(logging.ERROR)

# Templates transformers renders none of our conversations with tools with, and why.
UNRENDERABLE = {
    "fireworks-ai-llama-3-firefunction-v2.jinja": "'functions' is undefined",
    "llama-cpp-deepseek-r1.jinja": "Object of type generator is not JSON serializable",
    "sglang-examples/tool_chat_template_deepseekr1.jinja": "'dict object' has no attribute 'name'",
}
WITH_TOOLS = {name for name, (_, tools, _) in CONVERSATIONS.items() if tools}


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


@pytest.mark.parametrize("path", template_files(), ids=label)
def test_template_matches_transformers(path: Path, oracle: Any) -> None:
    template = load_template(path)
    ours = ChatTemplate(template.name, template.sources, SPECIAL)
    source = template.sources["default"]
    failures = set()
    for name, (messages, tools, extra) in CONVERSATIONS.items():
        for generation in (True, False):
            expected = reference(oracle, source, messages, tools, extra, generation)
            before = copy.deepcopy(messages)
            if isinstance(expected, Exception):
                with pytest.raises(RenderError) as caught:
                    ours.render(messages, tools, add_generation_prompt=generation, **extra)
                assert str(path) in str(caught.value), caught.value
                failures.add(name)
            else:
                got = ours.render(messages, tools, add_generation_prompt=generation, **extra)
                assert got == expected, f"{label(path)} / {name} / generation={generation}"
            assert messages == before, "rendering changed the caller's messages"
    assert (WITH_TOOLS <= failures) == (label(path) in UNRENDERABLE), (label(path), sorted(failures))


@pytest.mark.parametrize("file,cause", sorted(UNRENDERABLE.items()))
def test_unrenderable_templates_say_which_and_why(file: str, cause: str) -> None:
    paths = [p for p in template_files() if label(p) == file]
    if not paths:
        pytest.skip("shared templates not present")
    messages, tools, extra = CONVERSATIONS["call_and_result"]
    with pytest.raises(RenderError) as caught:
        load_template(paths[0]).render(messages, tools, **extra)
    assert file in str(caught.value) and cause in str(caught.value)
