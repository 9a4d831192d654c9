"""IBM Granite: 3.x (``granite``), granite-20b-functioncalling (``granite_20b_fc``), 4.x (``granite4``).

Samples (the Granite 3.3, granite-20b-fc and Granite 4.0 chat templates)::

    <|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]
    <function_call> {"name": "get_weather", "arguments": {"city": "Paris"}}
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

Granite 3.x writes one JSON array after the ``<|tool_call|>`` special token (3.0 models also
spell it ``<tool_call>``); a single object there, without the array, is not a call. Granite 3.3
thinks in ``<think>...</think>`` and then, as its template asks, answers inside
``<response>...</response>``: where the answer starts, that wrapper is removed and its text is
content (elsewhere, and when reasoning stays inline, it is text like any other). granite-20b-fc
repeats ``<function_call>`` before each object, and Granite 4 wraps each object in ``<tool_call>``
tags as Hermes does.
"""

from __future__ import annotations

import json
from functools import partial

from .._body_array import JsonArrayBody, ListShape, render_list
from .._body_json import JsonEnvelopeBody
from .._markers import marker_set
from ..dialect import Body, Calls, CallSink, Dialect, Outcome, register

END_TOKENS = ("<|end_of_text|>", "<|start_of_role|>", "<|end_of_role|>")
ONE_OBJECT = ListShape(open=(), seps="", closes=())
CALL_START = ("<|tool_call|>", "<tool_call>")
RESPONSE = ("<response>", "</response>")
_RESPONSE_STOPS = marker_set((RESPONSE[1], *CALL_START))


class ResponseBody:
    """Granite 3.3's answer wrapper where the answer starts: its text streams as content (holding
    back only what may begin its close tag or a call), the tags are dropped. A call inside it ends
    the wrapper's reading there, so the call is read as usual."""

    reason = ""

    def __init__(self, sink: CallSink, opened_by: str) -> None:
        self._sink = sink
        self._opened = False

    def fast(self, text: str) -> str | None:
        return None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        if not self._opened:  # the opener is not consumed by the parser (bare_start)
            pos, self._opened = pos + len(RESPONSE[0]), True
        found = _RESPONSE_STOPS.search(buf, pos)
        if found is None:
            end = len(buf) if final else len(buf) - _RESPONSE_STOPS.holdback(buf, pos)
        else:
            end = found.start()
        self._sink.text(buf[pos:end])
        self._sink.keep(end)
        if found is None:
            return end, Outcome.DONE if final else Outcome.MORE
        return (found.end() if found.group() == RESPONSE[1] else end), Outcome.DONE


def granite_body(sink: CallSink, opened_by: str) -> Body:
    return ResponseBody(sink, opened_by) if opened_by == RESPONSE[0] else JsonArrayBody(sink, opened_by)


def render_20b(calls: Calls) -> str:
    return "\n".join("<function_call> " + json.dumps({"name": n, "arguments": a}, ensure_ascii=False) for n, a in calls)


def render_4(calls: Calls) -> str:
    return "\n".join(
        "<tool_call>\n" + json.dumps({"name": n, "arguments": a}, ensure_ascii=False) + "\n</tool_call>" for n, a in calls
    )


GRANITE = register(
    Dialect(
        name="granite",
        aliases=("granite3", "granite33"),
        call_start=CALL_START,
        body=granite_body,
        bare_start=(RESPONSE[0],),
        special_markers=True,
        end_tokens=END_TOKENS,
        render=partial(render_list, before="<|tool_call|>["),
        sample='<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    )
)

GRANITE_20B_FC = register(
    Dialect(
        name="granite_20b_fc",
        aliases=("granite-20b-fc", "granite_20b"),
        call_start=("<function_call>",),
        body=partial(JsonArrayBody, shape=ONE_OBJECT),
        reasoning=None,
        end_tokens=("<|endoftext|>",),
        render=render_20b,
        sample='<function_call> {"name": "get_weather", "arguments": {"city": "Paris"}}',
    )
)

GRANITE4 = register(
    Dialect(
        name="granite4",
        aliases=("granite_4", "granite41"),
        call_start=("<tool_call>",),
        body=partial(JsonEnvelopeBody, close="</tool_call>"),
        special_markers=True,
        end_tokens=END_TOKENS,
        render=render_4,
        sample='<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    )
)
