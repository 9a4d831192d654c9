"""The Responses front in front of every upstream kind: the completions mode with the injected
protocol, and a chat upstream that refuses tools (retried with the protocol); the official
``openai`` SDK's ``responses`` client over HTTP on loopback, whole and streamed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.gateway.test_fallback import FINAL, model, model_dir, stack

WEATHER = {"type": "function", "name": "get_weather", "strict": False, "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"]}}


def ask(client: Any, streamed: bool, **kw: Any) -> Any:
    if not streamed:
        return client.responses.create(model="m", tools=[WEATHER], **kw)
    with client.responses.stream(model="m", tools=[WEATHER], **kw) as events:
        for _ in events:
            pass
        return events.get_final_response()


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("store", [False, True])
def test_every_upstream_kind(tmp_path: Path, streamed: bool, store: bool) -> None:
    for config in ({"upstream_api": "completions", "model_dir": model_dir(tmp_path), "tool_fallback": True},
                   {"tool_fallback": True}):
        with stack(model(refuse_tools="model_dir" not in config), **config) as s:
            client = s.client()
            first = ask(client, streamed, input="Weather in Paris?", store=store)
            kinds = [item.type for item in first.output]
            assert kinds == ["message", "function_call"], (config, kinds)
            call = first.output[1]
            assert (call.name, call.arguments, first.status) == ("get_weather", '{"city": "Paris", "days": 3}',
                                                                 "completed")
            result = {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}
            if store:
                second = ask(client, streamed, previous_response_id=first.id, input=[result])
            else:
                history = [{"role": "user", "content": "Weather in Paris?"},
                           *[item.model_dump(exclude_none=True) for item in first.output], result]
                second = ask(client, streamed, input=history, store=False)
            assert second.output_text == FINAL and second.status == "completed", config
