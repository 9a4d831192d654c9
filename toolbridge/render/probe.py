"""Capability probing: which parts of the tool protocol a chat template renders.

A template's source is not searched (a ``tools`` variable can be read and ignored, a role can be
named and refused); instead each capability is a probe conversation carrying marker strings, and a
capability holds when its marker appears in the rendered prompt. A probe that makes the template
fail counts as unsupported. Assistant calls are given ``arguments`` as an object first, as servers
give them; a template that fails on objects or prints one as a Python dict (``{'query': ...}``)
but renders the JSON string takes strings (``Capabilities.arguments``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import RenderError
from .template import ARGUMENT_SHAPES, ChatTemplate

TOOL_NAME = "tbprobe_lookup"
DECL_MARK = "TBPROBE-DECLARATION-7d1e"
ARG_MARK = "TBPROBE-ARGUMENT-52c9"
RESULT_MARK = "TBPROBE-RESULT-a04f"
SYSTEM_MARK = "TBPROBE-SYSTEM-3b86"
TURN_MARK = "TBPROBE-TURN-e61c"
CALL_ID = "tbprobe42"  # nine alphanumerics: Mistral templates insist

PROBE_TOOLS = [{
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": DECL_MARK,
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "what to look up"}},
            "required": ["query"],
        },
    },
}]


@dataclass(frozen=True)
class Capabilities:
    """What a template renders: tool declarations, assistant calls, tool results, system turns,
    and the shape it takes call arguments in (``"object"`` or ``"string"``)."""

    tools: bool
    tool_calls: bool
    tool_role: bool
    system_role: bool
    arguments: str = "object"

    @property
    def native_tools(self) -> bool:
        """The template renders the whole tool protocol (declarations, calls and results)."""
        return self.tools and self.tool_calls and self.tool_role


def probe(template: ChatTemplate) -> Capabilities:
    """Render the probe conversations through ``template`` and report what appeared."""
    user = {"role": "user", "content": "Look it up."}
    system_turn = {"role": "system", "content": SYSTEM_MARK}
    # Some templates declare tools only inside a system turn (FunctionGemma): build_prompt checks
    # each prompt for the declarations it needs.
    tools = any(_shows(template, turns, PROBE_TOOLS, (DECL_MARK, TOOL_NAME))
                for turns in ([user], [system_turn, user]))
    system = _shows(template, [system_turn, user], None, (SYSTEM_MARK,))
    result = {"role": "tool", "tool_call_id": CALL_ID, "name": TOOL_NAME, "content": RESULT_MARK}
    thanks = {"role": "user", "content": "Thanks."}
    call = call_turn({"query": ARG_MARK}, None)
    printed = repr({"query": ARG_MARK})  # a dict written with str(): the template wants the text
    seen: dict[str, set[str]] = {}
    for shape in ARGUMENT_SHAPES:
        seen[shape] = set()
        for after in (result, thanks):
            prompt = _prompt(template, [user, call, after], PROBE_TOOLS, shape)
            seen[shape].update(m for m in (ARG_MARK, RESULT_MARK) if m in prompt)
            if printed in prompt:
                seen[shape].discard(ARG_MARK)
    objects, strings = ARG_MARK in seen["object"], ARG_MARK in seen["string"]
    return Capabilities(tools=tools, tool_calls=objects or strings,
                        tool_role=any(RESULT_MARK in marks for marks in seen.values()),
                        system_role=system,
                        arguments="string" if strings and not objects else "object")


def call_turn(arguments: Any, content: str | None) -> dict[str, Any]:
    """The probe's assistant turn: ``content`` and one call of the probe tool."""
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"id": CALL_ID, "type": "function",
                        "function": {"name": TOOL_NAME, "arguments": arguments}}],
    }


def _prompt(template: ChatTemplate, messages: list[dict[str, Any]],
            tools: list[dict[str, Any]] | None, arguments: str = "object") -> str:
    """The rendered probe, or "" when the template fails on it."""
    try:
        return template.render(messages, tools, add_generation_prompt=True, arguments=arguments)
    except RenderError:
        return ""


def _shows(template: ChatTemplate, messages: list[dict[str, Any]],
           tools: list[dict[str, Any]] | None, marks: tuple[str, ...]) -> bool:
    prompt = _prompt(template, messages, tools)
    return any(mark in prompt for mark in marks)


def end_markers(template: ChatTemplate) -> tuple[str, ...]:
    """Where a template ends an assistant turn: the first word it writes right after the turn's
    content (``<|im_end|>``, ``<|eot_id|>``, ``<end_of_turn>`` ...), then its ``eos_token``.
    These are the stop strings of a raw completion of a prompt the template rendered."""
    markers: list[str] = []
    turns = [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": TURN_MARK}]
    try:
        prompt = template.render(turns)
    except RenderError:
        prompt = ""
    at = prompt.rfind(TURN_MARK)
    tail = prompt[at + len(TURN_MARK):].split() if at >= 0 else []
    if tail and len(tail[0]) <= 40:
        markers.append(tail[0])
    eos = template.variables.get("eos_token")
    if eos and eos not in markers:
        markers.append(eos)
    return tuple(markers)
