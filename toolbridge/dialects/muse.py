"""Muse Glimmer / Spark: recipient-addressed messages; a call is an ATEM block sent to a tool.

Sample (the Muse chat template's tool instructions and history; parsers in the wild read the
same; the model's output continues the prompt's ``<|start|>assistant``)::

     to=self<|message|>The user wants the weather.<|eom|><|start|>assistant to=get_weather<|message|><atem:function_calls>
    <atem:invoke name="get_weather">
    <atem:parameter name="city">Paris</atem:parameter>
    </atem:invoke>
    </atem:function_calls><|eom|>

Recipients: ``self`` is reasoning, ``user`` the visible answer, anything else a tool, whose
message holds an ATEM block (``syntax/bodies/recipient``, then ``attrxml``). A value is JSON when
it parses, else raw text; with tools, the schema types it (a schema string is never coerced).
Each call is its own message. The template names an un-namespaced function ``x`` as ``x.x``: a
doubled name is read as the single one (reported) when that resolves. A bare ATEM block (the
special tokens dropped by the server) is read too.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ..syntax.bodies.attrxml import AttrTags, AttrXmlBody
from ..syntax.bodies.recipient import RecipientBody, RecipientForm
from ..syntax.dialect import Body, Calls, CallSink, Dialect, raw_value, register

BLOCK, INVOKE = "<atem:function_calls>", "<atem:invoke name="
TERMINATORS = ("<|eom|>", "<|eot|>", "<|end_of_text|>")
TAGS = AttrTags(
    invoke=("<atem:invoke",),
    invoke_close=("</atem:invoke>",),
    param=("<atem:parameter",),
    param_close=("</atem:parameter>",),
    block_close=("</atem:function_calls>",),
)


def undoubled(name: str) -> str | None:
    """``x.x`` (or ``a.b.a.b``) as ``x`` (``a.b``); None when the name is not doubled."""
    parts = name.split(".")
    half = len(parts) // 2
    return ".".join(parts[:half]) if len(parts) % 2 == 0 and parts[:half] == parts[half:] else None


class _Names:
    """The sink, with a doubled namespace read as the single name when that is a tool."""

    def __init__(self, sink: CallSink) -> None:
        self._sink = sink

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sink, name)

    def begin(self, written_name: str, native_id: str | None = None) -> str | None:
        single = undoubled(written_name.strip())
        if single is not None and self._sink.begin(single, native_id) is None:
            self._sink.repaired(f"doubled namespace {written_name.strip()!r} read as {single!r}")
            return None
        return self._sink.begin(written_name, native_id)


def calls(sink: CallSink, opened_by: str) -> Body:
    return AttrXmlBody(_Names(sink), opened_by, tags=TAGS)  # type: ignore[arg-type]


FORM = RecipientForm(calls=calls, call_tags=(BLOCK, INVOKE), terminators=TERMINATORS)


def render(calls: Calls) -> str:
    """Calls as the Muse template writes them: one message per call, each an ATEM block."""
    return "".join(
        f"<|start|>assistant to={name}<|message|>{BLOCK}\n<atem:invoke name=\"{name}\">\n"
        + "".join(f'<atem:parameter name="{k}">{raw_value(v)}</atem:parameter>\n' for k, v in args.items())
        + "</atem:invoke>\n</atem:function_calls><|eom|>"
        for name, args in calls
    )


SAMPLE = " to=self<|message|>The user wants the weather.<|eom|>" + render([("get_weather", {"city": "Paris"})])

MUSE = register(
    Dialect(
        name="muse",
        aliases=("muse_glimmer", "muse_spark", "muse-glimmer", "muse-spark"),
        call_start=("<|start|>", BLOCK, INVOKE),
        bare_start=("to=",),
        body=partial(RecipientBody, form=FORM),
        reasoning=("to=self<|message|>", "<|eom|>"),
        special_markers=True,
        end_tokens=("<|eot|>", "<|end_of_text|>"),
        render=render,
        sample=SAMPLE,
    )
)
