"""The Responses object in full, as the OpenResponses schema requires it (``make openresponses``
validates it against the schema itself; here the openai SDK reads it over real HTTP): the
settings used, with the API's defaults when the request sets none; created_at and completed_at
from the gateway's clock; the item the limit cut marked incomplete."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from tests.gateway.test_responses import TOOLS, USER
from toolbridge.gateway.fronts.responses import ResponsesFront
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

openai = pytest.importorskip("openai")

USED = ("temperature", "top_p", "presence_penalty", "frequency_penalty", "top_logprobs", "max_tool_calls",
        "truncation", "service_tier")


@pytest.fixture(scope="module")
def s() -> Any:
    with Stack(lambda b: Reply(content="Sunny."), tool_call_parser="hermes") as stack:
        yield stack


def settings(response: Any) -> tuple[Any, ...]:
    return tuple(getattr(response, key) for key in USED)


def test_the_defaults_the_api_reports_when_the_request_sets_none(s: Stack) -> None:
    with s.client() as c:
        whole = c.responses.create(model="m", input=USER)
        with c.responses.stream(model="m", input=USER) as events:
            streamed = [e for e in events][-1].response
        stored = c.responses.retrieve(whole.id)
    for response in (whole, streamed, stored):
        assert settings(response) == (1.0, 1.0, 0.0, 0.0, 0, None, "disabled", "default")
        assert response.reasoning.effort is None and response.reasoning.summary is None
        assert response.text.format.type == "text"


def test_the_requests_settings_are_repeated_and_the_penalties_sent(s: Stack) -> None:
    with s.client() as c:
        got = c.responses.create(model="m", input=USER, temperature=0.2, top_p=0.5, tools=TOOLS,
                                 extra_body={"presence_penalty": 0.5, "frequency_penalty": -0.5},
                                 reasoning={"effort": "low"}, text={"verbosity": "low"})
    assert settings(got)[:4] == (0.2, 0.5, 0.5, -0.5)
    sent = s.upstream.requests[-1]
    assert (sent["presence_penalty"], sent["frequency_penalty"]) == (0.5, -0.5)
    assert got.reasoning.effort == "low" and got.reasoning.summary is None
    assert got.text.format.type == "text" and got.text.verbosity == "low"
    assert [(t.name, t.description, t.strict) for t in got.tools] == [
        ("get_weather", "The weather in a city.", True), ("read_file", None, True)]  # (every field there)


def test_a_penalty_that_is_not_a_number_is_refused(s: Stack) -> None:
    with s.client() as c, pytest.raises(openai.BadRequestError) as refused:
        c.responses.create(model="m", input=USER, extra_body={"presence_penalty": "high"})
    assert refused.value.body["param"] == "presence_penalty"


def test_created_and_completed_come_from_the_gateways_clock() -> None:
    """The upstream's ``created`` (here a clock far behind) is not the response's: both times
    are the gateway's, the request's arrival and the answer's end."""
    front = ResponsesFront()
    before = time.time()
    turn = front.turn({"model": "m", "input": "hi", "store": False})
    answer = {"created": 1000, "model": "m", "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Hi."}}]}
    response = orjson.loads(front.whole(answer, SimpleNamespace(context=turn.context)))
    assert int(before) <= response["created_at"] <= response["completed_at"] <= time.time()


def test_the_item_the_limit_cut_is_incomplete_and_keeps_its_text() -> None:
    with Stack(lambda b: Reply(content="Once upon a time there", reasoning="A story, then.",
                               finish_reason="length"), tool_call_parser="hermes") as s, s.client() as c:
        whole = c.responses.create(model="m", input=USER)
        with c.responses.stream(model="m", input=USER) as events:
            streamed = [e for e in events][-1].response
    for response in (whole, streamed):
        assert response.status == "incomplete" and response.incomplete_details.reason == "max_output_tokens"
        assert [(i.type, i.status) for i in response.output] == [("reasoning", "completed"),
                                                                 ("message", "incomplete")]
        assert response.output[1].content[0].text == "Once upon a time there"
