"""llama.cpp's generic format (``generic_json``): the whole answer is one JSON envelope.

Sample (what llama.cpp's generic prompt and grammar make a model without a tool syntax write;
observed in llama.cpp's chat tests with the Phi-3.5-mini template)::

    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "1"}], "content": ""}

The envelope holds ``tool_calls`` (a list of call objects), ``tool_call`` (one call object) or
``response`` (the answer as a JSON string, which is content). It is the whole answer, at its
start (after reasoning, if any), or fenced as ```` ```json ````; a JSON object that is not such
an envelope, or one inside prose, is prose.
"""

from __future__ import annotations

import json

from ..syntax.bodies.envelope import EnvelopeBody
from ..syntax.dialect import Body, Calls, CallSink, Dialect, register

FENCE = "```json"


def body(sink: CallSink, opened_by: str) -> Body:
    return EnvelopeBody(sink, opened_by, close="```" if opened_by == FENCE else "")


def render(calls: Calls) -> str:
    """Calls as the generic grammar has the model write them: one ``tool_calls`` envelope."""
    listed = [{"name": n, "arguments": a, "id": str(i)} for i, (n, a) in enumerate(calls)]
    return json.dumps({"tool_calls": listed}, ensure_ascii=False, indent=2)


GENERIC_JSON = register(
    Dialect(
        name="generic_json",
        aliases=("generic", "llama_cpp_generic"),
        call_start=(FENCE,),
        bare_start=("{",),
        body=body,
        render=render,
        sample='{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "1"}]}',
    )
)
