"""Templates with no tool syntax (``content_only``): the answer is content, bar one call shape.

Sample (Gemma 2, OLMoE and other templates that render no tools; llama.cpp parses their output
as content only)::

    {"name": "get_weather", "parameters": {"city": "Paris"}}

Such a model has no call markers. Told about tools in its prompt, it answers a call with a bare
JSON call object, as the whole answer (``arguments`` or ``parameters``), or inside a
```` ```json ```` fence; those are read as calls (a name with no arguments is an answer, not a
call). Everything else, including a JSON object inside prose or a fence holding other JSON, is
content.
"""

from __future__ import annotations

import json

from ..syntax.bodies.json import JsonEnvelopeBody
from ..syntax.dialect import Body, Calls, CallSink, Dialect, register

FENCE = "```json"


def body(sink: CallSink, opened_by: str) -> Body:
    if opened_by == FENCE:
        return JsonEnvelopeBody(sink, opened_by, close="```", lenient=True)
    return JsonEnvelopeBody(sink, opened_by, close="")


def render(calls: Calls) -> str:
    """Calls as fenced JSON objects, one per call."""
    return "\n".join(
        f"{FENCE}\n" + json.dumps({"name": n, "arguments": a}, ensure_ascii=False) + "\n```" for n, a in calls
    )


CONTENT_ONLY = register(
    Dialect(
        name="content_only",
        aliases=("none", "plain"),
        call_start=(FENCE,),
        bare_start=("{",),
        body=body,
        render=render,
        sample='{"name": "get_weather", "parameters": {"city": "Paris"}}',
    )
)
