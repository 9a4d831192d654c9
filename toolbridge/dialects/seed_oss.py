"""Seed-OSS (``seed_oss``): Qwen3-Coder XML inside ``<seed:tool_call>``, reasoning in ``<seed:think>``.

Sample (the ByteDance Seed-OSS chat template; vLLM's and llama.cpp's Seed-OSS tests)::

    <seed:think>The user wants the weather.</seed:think>
    <seed:tool_call>
    <function=get_weather>
    <parameter=city>Paris</parameter>
    <parameter=days>3</parameter>
    </function>
    </seed:tool_call>

The template writes values inline, so they are kept exactly as written (no newline trimming) and
typed by the tool schema. ``<seed:cot_budget_reflect>`` notes inside reasoning stay reasoning, and
so does a call the model quotes while thinking: reasoning always ends with ``</seed:think>``
(vLLM's Seed-OSS tests expect a call written inside it to be no call). With reasoning extraction
off, the whole ``<seed:think>`` block is content as written, and a call quoted in it is no call
either.
Tolerated as for Qwen3-Coder: a missing ``</parameter>``, ``<function=`` without the wrapper,
several functions in one wrapper, no parameters.
"""

from __future__ import annotations

from functools import partial

from .._body_xml import XmlBody, XmlTags, render_xml
from .._markers import marker_set
from ..dialect import Body, CallSink, Dialect, Outcome, register

TAGS = XmlTags(block_close="</seed:tool_call>", trim_newline=False)
WRAPPER = ("<seed:tool_call>", "</seed:tool_call>")
THINK = ("<seed:think>", "</seed:think>")
_THINK_CLOSE = marker_set((THINK[1],))


class ThinkingAsContent:
    """A ``<seed:think>`` block read while reasoning extraction is off (when it is on, the
    parser takes the opener as reasoning before any block opens): its text, tags included, is
    content as it streams, holding back only what may begin the close tag."""

    reason = ""

    def __init__(self, sink: CallSink, opened_by: str) -> None:
        self._sink = sink
        sink.text(opened_by)

    def fast(self, text: str) -> str | None:
        return None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        found = _THINK_CLOSE.search(buf, pos)
        end = found.end() if found else len(buf) if final else len(buf) - _THINK_CLOSE.holdback(buf, pos)
        self._sink.text(buf[pos:end])
        self._sink.keep(end)
        return end, Outcome.DONE if found or final else Outcome.MORE


def body(sink: CallSink, opened_by: str) -> Body:
    return ThinkingAsContent(sink, opened_by) if opened_by == THINK[0] else XmlBody(sink, opened_by, tags=TAGS)


SEED_OSS = register(
    Dialect(
        name="seed_oss",
        aliases=("seed-oss", "seed"),
        call_start=(WRAPPER[0], TAGS.function[0], THINK[0]),
        body=body,
        reasoning=THINK,
        calls_in_reasoning=False,
        special_markers=True,
        end_tokens=("<seed:eos>", "<seed:bos>"),
        render=partial(render_xml, TAGS, wrapper=WRAPPER),
        sample=render_xml(TAGS, [("get_weather", {"city": "Paris", "days": 3})], WRAPPER),
    )
)
