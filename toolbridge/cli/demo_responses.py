"""``toolbridge demo --front responses``: the demo's agent loop as an OpenAI Responses client.

The same upstreams and samples as ``demo`` (the gateway with its defaults in front of a
replaying upstream); the official ``openai`` SDK drives ``POST /v1/responses``: ask with tools,
get a ``function_call`` item, send its ``function_call_output`` by ``previous_response_id`` (the
gateway keeps the conversation), get the answer; once whole (``responses.create``) and once
streamed (``responses.stream``, the events counted by type).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, TextIO

from .demo import ANSWER, CALL, RESULT, TOOLS, Front

RESPONSES_TOOLS = [{"type": "function", "strict": False, **{k: t["function"][k] for k in ("name", "description",
                                                                                          "parameters")}}
                   for t in TOOLS]


def turn(client: Any, stream: bool, **request: Any) -> dict[str, Any]:
    """One response as the client sees it, and the events or header."""
    if not stream:
        raw = client.responses.with_raw_response.create(model="demo", tools=RESPONSES_TOOLS, **request)
        return {"response": raw.parse(), "seen": f"x-toolbridge-calls: {raw.headers.get('x-toolbridge-calls', '')}"}
    with client.responses.stream(model="demo", tools=RESPONSES_TOOLS, **request) as events:
        names = Counter(event.type for event in events)
        response = events.get_final_response()
    return {"response": response, "seen": "events: " + ", ".join(f"{n} x{c}" for n, c in names.items())}


def loop(client: Any, stream: bool, out: TextIO) -> bool:
    """The two turns; True when the client got the expected call and answer."""
    first = turn(client, stream, input="The config tests fail. Find out why.")
    response = first["response"]
    out.write(f"    client got   : status={response.status}, {first['seen']}\n")
    for item in response.output:
        shown = (f"{item.name}({item.arguments})  call_id={item.call_id}" if item.type == "function_call"
                 else repr(response.output_text) if item.type == "message"
                 else repr("".join(p.text for p in item.content or item.summary)))
        out.write(f"                   {item.type} {shown}\n")
    calls = [i for i in response.output if i.type == "function_call"]
    if not calls:
        return False
    result = {"type": "function_call_output", "call_id": calls[0].call_id, "output": RESULT}
    second = turn(client, stream, previous_response_id=response.id, input=[result])["response"]
    out.write(f"    tool result  : {RESULT!r} (by previous_response_id)\n"
              f"    client got   : {second.output_text!r} (status={second.status})\n")
    ok = [(c.name, json.loads(c.arguments)) for c in calls] == [("run_tests", CALL)]
    return ok and second.output_text == ANSWER and second.status == "completed"


FRONT: Front = ("responses", lambda stack: stack.client(), loop, "function_call items")
