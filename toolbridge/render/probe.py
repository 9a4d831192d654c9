"""Capability probing: which parts of the tool protocol a chat template renders.

A template's source is not searched (a ``tools`` variable can be read and ignored, a role can be
named and refused); instead each capability is a probe conversation carrying marker strings, and a
capability holds when its marker appears in the rendered prompt. A probe that makes the template
fail counts as unsupported. Assistant calls are tried with ``arguments`` as an object and as a
JSON string, since templates expect one or the other.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..errors import RenderError
from .template import ChatTemplate

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
    """What a template renders: tool declarations, assistant calls, tool results, system turns."""

    tools: bool
    tool_calls: bool
    tool_role: bool
    system_role: bool

    @property
    def native_tools(self) -> bool:
        """The template renders the whole tool protocol (declarations, calls and results)."""
        return self.tools and self.tool_calls and self.tool_role


def probe(template: ChatTemplate) -> Capabilities:
    """Render the probe conversations through ``template`` and report what appeared."""
    user = {"role": "user", "content": "Look it up."}
    tools = _shows(template, [user], PROBE_TOOLS, (DECL_MARK, TOOL_NAME))
    system = _shows(template, [{"role": "system", "content": SYSTEM_MARK}, user], None,
                    (SYSTEM_MARK,))
    result = {"role": "tool", "tool_call_id": CALL_ID, "name": TOOL_NAME, "content": RESULT_MARK}
    thanks = {"role": "user", "content": "Thanks."}
    seen: set[str] = set()
    for arguments in ({"query": ARG_MARK}, json.dumps({"query": ARG_MARK})):
        for content in (None, ""):
            call = call_turn(arguments, content)
            for after in (result, thanks):
                seen.update(_marks(template, [user, call, after], PROBE_TOOLS,
                                   (ARG_MARK, RESULT_MARK)))
    return Capabilities(tools=tools, tool_calls=ARG_MARK in seen, tool_role=RESULT_MARK in seen,
                        system_role=system)


def call_turn(arguments: Any, content: str | None) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"id": CALL_ID, "type": "function",
                        "function": {"name": TOOL_NAME, "arguments": arguments}}],
    }


def _marks(template: ChatTemplate, messages: list[dict[str, Any]],
           tools: list[dict[str, Any]] | None, marks: tuple[str, ...]) -> set[str]:
    try:
        prompt = template.render(messages, tools, add_generation_prompt=True)
    except RenderError:
        return set()
    return {mark for mark in marks if mark in prompt}


def _shows(template: ChatTemplate, messages: list[dict[str, Any]],
           tools: list[dict[str, Any]] | None, marks: tuple[str, ...]) -> bool:
    return bool(_marks(template, messages, tools, marks))


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
