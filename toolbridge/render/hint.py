"""The dialect a chat template writes tool calls in, for ``auto`` to try first.

Strategy: render a probe conversation (a user turn, then an assistant turn calling the probe tool
with a marked argument) and the same conversation up to the assistant's header; what the template
wrote after that header is the call as the model was trained to write it. Reading that text back
with ``dialect="auto"`` names the dialect, when the probe call comes back whole.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import RenderError
from ..parsing.parser import parse
from .probe import ARG_MARK, CALL_ID, PROBE_TOOLS, TOOL_NAME, call_turn
from .template import ARGUMENT_SHAPES, ChatTemplate

_USER = {"role": "user", "content": "Look it up."}
_RESULT = {"role": "tool", "tool_call_id": CALL_ID, "name": TOOL_NAME, "content": "found"}
_THANKS = {"role": "user", "content": "Thanks."}


def template_dialect(template: ChatTemplate) -> str | None:
    """The registry name of the dialect ``template`` renders assistant calls in, or None when it
    renders none that a dialect reads (no tool support, or a format toolbridge does not know)."""
    for shape in ARGUMENT_SHAPES:
        written = _assistant_text(template, call_turn({"query": ARG_MARK}, None), shape)
        if written is None:
            continue
        result = parse(written, "auto", PROBE_TOOLS, reasoning=True)
        calls = result.message.get("tool_calls") or []
        if calls and calls[0]["function"]["name"] == TOOL_NAME \
                and json.loads(calls[0]["function"]["arguments"]) == {"query": ARG_MARK}:
            return result.report.detected
    return None


def _assistant_text(template: ChatTemplate, call: dict[str, Any], shape: str) -> str | None:
    try:
        head = template.render([_USER], PROBE_TOOLS, add_generation_prompt=True)
        whole = _first_rendering(template, call, shape)
    except RenderError:
        return None
    if whole is None:
        return None
    start = 0
    while start < min(len(head), len(whole)) and head[start] == whole[start]:
        start += 1
    if start < len(head):  # the turn's header differs from the generation prompt: cut at a boundary
        start = max(whole.rfind("\n", 0, start), whole.rfind(">", 0, start)) + 1
    return whole[start:]


def _first_rendering(template: ChatTemplate, call: dict[str, Any], shape: str) -> str | None:
    """The conversation with the call, as the first follow-up the template renders it with."""
    for after in ([], [_RESULT], [_RESULT, _THANKS], [_THANKS]):
        try:
            whole = template.render([_USER, call, *after], PROBE_TOOLS, arguments=shape)
        except RenderError:
            continue
        if ARG_MARK in whole:
            return whole
    return None
