"""When ``build_prompt`` refuses (naming the flag) and when it renders natively: a conversation is
refused only when the template would lose the declarations of offered tools or the results of
calls, checked on the probe and, for declarations, on the prompt itself."""

from __future__ import annotations

from typing import Any

import pytest

from toolbridge.render import ChatTemplate, FallbackRequired, build_prompt, load_template

from .conversations import LOOPS, SPECIAL, TEMPLATES, TOOLS, USER, parts

LOOP, _, _ = LOOPS["loop_text_parts"]
HISTORY = LOOP[1:]  # no system turn
TURNS = ("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
         "{% if add_generation_prompt %}<assistant>{% endif %}")
RESULTS_NOT_CALLS = "{% if tools %}{{ tools | tojson }}{% endif %}" + TURNS  # LFM2's way
NEITHER = TURNS.replace("<{{ m.role }}>", "{% if m.role != 'tool' %}<{{ m.role }}>{% endif %}")
NEITHER = NEITHER.replace("{{ m.content }}", "{% if m.role != 'tool' %}{{ m.content }}{% endif %}")
SYSTEM_DECLARES = TURNS.replace("{{ m.content }}", "{{ m.content }}{% if m.role == 'system' %}"
                                "{{ tools | tojson }}{% endif %}")

CASES: dict[str, tuple[str, list[dict[str, Any]], Any, str | None]] = {
    # name: (template, messages, tools, what a refusal names; None: rendered natively)
    "results without calls: the loop renders": (RESULTS_NOT_CALLS, LOOP, TOOLS, None),
    "results without calls, no tools offered": (RESULTS_NOT_CALLS, HISTORY, None, None),
    "neither results nor calls": (NEITHER, HISTORY, None, "assistant tool calls, tool results"),
    "no declarations": (TURNS, [USER], TOOLS, "tool declarations"),
    "no declarations, tool_choice none": (TURNS, [USER], TOOLS, None),
    "declared in a system turn, one given": (SYSTEM_DECLARES, LOOP, TOOLS, None),
    "declared in a system turn, none given": (SYSTEM_DECLARES, HISTORY, TOOLS, "tool declarations"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_refused_only_when_the_model_would_miss_tools_or_results(case: str) -> None:
    source, messages, tools, refusal = CASES[case]
    template = ChatTemplate("t.jinja", {"default": source})
    choice = "none" if case.endswith("tool_choice none") else None
    if refusal is not None:
        with pytest.raises(FallbackRequired, match=f"does not render {refusal};.*--tool-fallback"):
            build_prompt(template, messages, tools, tool_choice=choice)
        assert build_prompt(template, messages, tools, tool_choice=choice,
                            tool_fallback=True).injected
        return
    prompt = build_prompt(template, messages, tools, tool_choice=choice)
    assert not prompt.injected
    assert prompt.text == template.render(messages, tools, add_generation_prompt=True)
    assert "[{'type'" not in prompt.text


@pytest.mark.parametrize("file,messages,tools,refusal", [
    ("LFM2-8B-A1B.jinja", LOOP, TOOLS, None),
    ("LFM2.5-Instruct.jinja", LOOP, TOOLS, None),
    ("HuggingFaceTB-SmolLM3-3B.jinja", HISTORY, None, None),
    ("HuggingFaceTB-SmolLM3-3B.jinja", [USER], TOOLS, "tool declarations"),  # never written
    ("vllm-examples/tool_chat_template_functiongemma.jinja", LOOP, TOOLS, None),
    ("vllm-examples/tool_chat_template_functiongemma.jinja", HISTORY, TOOLS, "tool declarations"),
])
def test_shared_templates(file: str, messages: list[dict[str, Any]], tools: Any,
                          refusal: str | None) -> None:
    path = TEMPLATES / file
    if not path.is_file():
        pytest.skip("shared templates not present")
    template = ChatTemplate(path.name, load_template(path).sources, SPECIAL)
    if refusal is not None:
        with pytest.raises(FallbackRequired, match=refusal):
            build_prompt(template, messages, tools)
        return
    text = build_prompt(template, messages, tools).text
    assert "Sunny, 21 C" in text and "'type'" not in text


def test_a_tool_result_reaches_the_model_as_text() -> None:
    """Qwen Code's tool result, ``[{"type": "text", "text": "line1"}]``, is the text line1."""
    template = ChatTemplate("t.jinja", {"default": RESULTS_NOT_CALLS})
    result = {"role": "tool", "tool_call_id": "abcDEF123", "content": parts("line1")}
    text = build_prompt(template, [*HISTORY[:2], result], TOOLS).text
    assert "<tool>line1<assistant>" in text


def test_the_injected_protocol_writes_text_parts_as_text() -> None:
    template = ChatTemplate("t.jinja", {"default": TURNS})
    prompt = build_prompt(template, LOOP, TOOLS, tool_fallback=True)
    assert prompt.injected
    assert prompt.text.startswith("<system>You are terse.\n\n# Tool use")
    assert "<user>What is the weather in Paris?<assistant>" in prompt.text
    assert "Sunny, 21 C" in prompt.text and "'type'" not in prompt.text
