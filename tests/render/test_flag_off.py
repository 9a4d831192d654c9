"""With the injected protocol off, prompts are byte-identical to rendering without the feature.

Every shared template over several conversation shapes: ``build_prompt`` with the flag off (and
with it on, where the template renders what the conversation holds) gives exactly what
``ChatTemplate.render`` gives (with call arguments in the shape the template takes), compared prompt by prompt and as one digest; where the template
lacks what the conversation needs, the flag-off answer is a refusal that names the flag.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from toolbridge.errors import RenderError
from toolbridge.render import (ChatTemplate, FallbackRequired, build_prompt, capabilities,
                               load_template)

from .conversations import CONVERSATIONS, SPECIAL, TEMPLATES, label, template_files

SHAPES = ("plain", "multi_turn", "declared", "call_arguments_object", "parallel_arguments_object",
          "reasoning")


def _digest(prompts: list[str]) -> str:
    h = hashlib.sha256()
    for p in prompts:
        h.update(hashlib.sha256(p.encode()).digest())
    return h.hexdigest()


@pytest.mark.parametrize("path", template_files(), ids=label)
def test_flag_off_prompts_are_byte_identical(path: Path) -> None:
    template = ChatTemplate(str(path), load_template(path).sources, SPECIAL)
    arguments = capabilities(template).arguments  # the shape build_prompt gives this template
    before, after, after_flag_on = [], [], []
    for shape in SHAPES:
        messages, tools, extra = CONVERSATIONS[shape]
        try:
            baseline = template.render(messages, tools, add_generation_prompt=True,
                                       arguments=arguments, **extra)
        except RenderError:
            baseline = "<render error>"
        before.append(baseline)
        try:
            after.append(build_prompt(template, messages, tools, variables=extra).text)
        except FallbackRequired as exc:
            assert "--tool-fallback" in str(exc) and "TOOLBRIDGE_TOOL_FALLBACK=1" in str(exc)
            after.append(baseline)  # refused: nothing rendered, and nothing to compare
            continue
        except RenderError:
            after.append("<render error>")
        try:
            on = build_prompt(template, messages, tools, tool_fallback=True, variables=extra)
            after_flag_on.append(on.text)
            assert not on.injected
        except RenderError:
            after_flag_on.append("<render error>")
        assert after_flag_on[-1] == after[-1], shape
    assert after == before
    assert _digest(after) == _digest(before)


def test_refused_only_where_the_template_lacks_tool_support() -> None:
    path = TEMPLATES / "microsoft-Phi-3.5-mini-instruct.jinja"
    if not path.is_file():
        pytest.skip("shared templates not present")
    template = load_template(path)
    messages, tools, _ = CONVERSATIONS["declared"]
    with pytest.raises(FallbackRequired, match="does not render tool declarations"):
        build_prompt(template, messages, tools)
    assert build_prompt(template, messages, tools, tool_choice="none").text == template.render(
        messages, tools, add_generation_prompt=True)
    injected = build_prompt(template, messages, tools, tool_fallback=True)
    assert injected.injected and "<tools>" in injected.text
