"""Compaction, end to end: the official ``openai`` SDK (``responses.compact``) and raw requests
(the ``compaction_trigger`` item Codex sends, streamed and not) -> toolbridge -> a scripted
upstream, over HTTP on loopback. What the upstream was asked (the summary request) and shown
(the summary in place of the item, on the next turn) is read from the scripted upstream."""

from __future__ import annotations

import copy
import threading
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.gateway.test_responses import CAPTURES, TOOLS, metric, raw
from tests.gateway.test_responses_stream import sse
from toolbridge.gateway.fronts.responses.compaction import LEAD, PROMPT
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

openai = pytest.importorskip("openai")

SUMMARY = "TASK: launch on Tuesday.\nDECISIONS: notify support first.\nFILES: plan.md (edited)."
HISTORY = [{"type": "message", "role": "user", "content": "We agreed to launch on Tuesday."},
           {"type": "message", "role": "assistant", "content": "Understood: Tuesday, support first."}]
TRIGGER = {"type": "compaction_trigger"}


def summarising(body: dict[str, Any]) -> bool:
    return body["messages"][-1] == {"role": "user", "content": PROMPT}


def script(summary: str = SUMMARY, **fault: Any) -> Callable[[dict[str, Any]], Reply]:
    """The upstream: the summary (after some reasoning) to the compaction prompt, else "done"."""
    def answer(body: dict[str, Any]) -> Reply:
        if summarising(body):
            return Reply(content=summary, reasoning="Let me list what matters.", chunk=7, **fault)
        return Reply(content="done")
    return answer


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    with Stack(script(), tool_call_parser="hermes", compact_max_tokens=321) as s:
        yield s


@pytest.fixture
def s(stack: Stack) -> Stack:
    stack.upstream.script = script()
    return stack


def asked(s: Stack) -> dict[str, Any]:
    """The upstream's last request, which must be a summary request."""
    body = s.upstream.requests[-1]
    assert summarising(body) and "tools" not in body and "tool_choice" not in body
    assert body["max_tokens"] == 321  # --compact-max-tokens
    return body


def shown(s: Stack, item: dict[str, Any], before: list[dict[str, Any]] = HISTORY) -> list[dict[str, Any]]:
    """The messages the upstream is shown for a turn carrying ``item`` after ``before``."""
    with s.client() as c:
        c.responses.create(model="m", input=[*before, item, {"role": "user", "content": "Go on."}], store=False)
    return s.upstream.requests[-1]["messages"]  # type: ignore[no-any-return]


def summary_in_place(messages: list[dict[str, Any]]) -> None:
    assert messages[-2:] == [{"role": "user", "content": LEAD + SUMMARY}, {"role": "user", "content": "Go on."}]


def test_the_compact_endpoint_answers_one_sealed_compaction_item(s: Stack) -> None:
    with s.client() as c:
        compacted = c.responses.compact(model="m", input=HISTORY, instructions="Be brief.")
    body = asked(s)
    assert body["messages"][:3] == [{"role": "system", "content": "Be brief."},
                                    {"role": "user", "content": "We agreed to launch on Tuesday."},
                                    {"role": "assistant", "content": "Understood: Tuesday, support first."}]
    assert compacted.object == "response.compaction" and compacted.id.startswith("resp_")
    assert metric(s, 'toolbridge_compactions_total{form="endpoint"}') >= 1
    # The API's output: the user messages, then the one compaction item.
    assert [(item.type, getattr(item, "role", None)) for item in compacted.output] == [("message", "user"),
                                                                                      ("compaction", None)]
    assert compacted.output[0].content[0].text == "We agreed to launch on Tuesday."
    item = compacted.output[-1]
    assert item.id.startswith("cmp_") and item.encrypted_content.startswith("tb1.")
    assert SUMMARY not in item.encrypted_content and compacted.usage.output_tokens == 20
    summary_in_place(shown(s, item.model_dump(exclude_none=True)))


@pytest.mark.parametrize("streamed", [False, True])
def test_a_compaction_trigger_is_answered_with_exactly_one_compaction_item(s: Stack, streamed: bool) -> None:
    body = {"model": "m", "input": [*HISTORY, TRIGGER], "tools": TOOLS, "store": False}
    if streamed:
        events = sse(s, body)
        assert [e["type"] for e in events] == ["response.created", "response.in_progress",
                                               "response.output_item.added", "response.output_item.done",
                                               "response.completed"]
        added, done, response = events[2]["item"], events[3]["item"], events[4]["response"]
        assert added == done and response["output"] == [done]
        item = done
    else:
        status, response = raw(s, "/v1/responses", body)
        assert status == 200, response
        item = response["output"][0]
    assert response["status"] == "completed" and len(response["output"]) == 1
    assert item["type"] == "compaction" and item["encrypted_content"].startswith("tb1.")
    upstream = asked(s)
    assert upstream.get("stream", False) is streamed
    summary_in_place(shown(s, item))


def test_codex_compacts_and_goes_on(s: Stack) -> None:
    """The requests Codex 0.171 sent (captures): its trigger, then its next turn carrying the item
    after its developer and user messages (the captured item swapped for the one answered)."""
    trigger, after = (CAPTURES / "codex-4-compaction-trigger.json", CAPTURES / "codex-5-after-compaction.json")
    if not trigger.exists() or not after.exists():
        pytest.skip(f"the Codex captures are not in {CAPTURES}")
    events = sse(s, json.loads(trigger.read_text())["body"])
    item = events[-1]["response"]["output"][0]
    body = asked(s)
    assert "secret-1234abcd" in json.dumps(body["messages"])  # the tool result before the trigger
    nxt = json.loads(after.read_text())["body"]
    nxt["input"][-1] = {**nxt["input"][-1], "encrypted_content": item["encrypted_content"]}
    events = sse(s, nxt)
    assert events[-1]["type"] == "response.completed"
    messages = s.upstream.requests[-1]["messages"]
    assert messages[-1] == {"role": "user", "content": LEAD + SUMMARY}
    assert messages[-2]["content"] == "Read notes.txt and tell me its first line."
    assert "tools" in s.upstream.requests[-1]  # an ordinary turn again


def test_a_stored_compaction_is_what_previous_response_id_continues_from(s: Stack) -> None:
    developer = {"role": "developer", "content": "Be brief."}  # (kept: instructions are not, in this API)
    status, response = raw(s, "/v1/responses", {"model": "m", "instructions": "Per request.",
                                                 "input": [developer, *HISTORY, TRIGGER]},
                           authorization="Bearer sk-test")  # (the SDK's key: the store's scope)
    assert status == 200 and response["store"] is True
    with s.client() as c:
        c.responses.create(model="m", previous_response_id=response["id"], input="Go on.")
    assert s.upstream.requests[-1]["messages"] == [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": LEAD + SUMMARY},
        {"role": "user", "content": "Go on."}]


def tampered(sealed: str) -> str:
    body = sealed[len("tb1."):]
    flipped = "A" if body[10] != "A" else "B"
    return "tb1." + body[:10] + flipped + body[11:]


def test_a_compaction_item_that_does_not_verify_is_refused(s: Stack) -> None:
    with s.client() as c:
        item = c.responses.compact(model="m", input=HISTORY).output[-1].model_dump(exclude_none=True)
    sent = len(s.upstream.requests)
    with Stack(script(), tool_call_parser="hermes") as other:  # another gateway: another key
        foreign = other.client().responses.compact(model="m", input=HISTORY).output[-1]
        foreign = foreign.model_dump(exclude_none=True)
    for content in (tampered(item["encrypted_content"]), foreign["encrypted_content"], "opaque-openai-blob"):
        with pytest.raises(openai.BadRequestError) as refused:
            shown(s, {**item, "encrypted_content": content})
        error = refused.value.body
        assert error["param"] == "input[2].encrypted_content" and error["code"] == "invalid_encrypted_content"
        assert ("not sealed by toolbridge" if content.startswith("opaque") else "tag does not verify") \
            in error["message"]
        assert error["type"] == "invalid_request_error"
    assert len(s.upstream.requests) == sent  # nothing was sent upstream
    summary_in_place(shown(s, item))  # the item as given still goes
    assert metric(s, "toolbridge_reasoning_unsealed_total") == 0  # (refused, not a reasoning item dropped)


def test_an_upstream_failure_is_the_apis_error(s: Stack) -> None:
    s.upstream.script = script(status=503, error="overloaded")
    with s.client() as c, pytest.raises(openai.APIStatusError) as failed:
        c.responses.compact(model="m", input=HISTORY)
    assert failed.value.status_code == 503
    status, body = raw(s, "/v1/responses", {"model": "m", "input": [*HISTORY, TRIGGER]})
    assert status == 503 and "error" in body


@pytest.mark.parametrize("summary", ["", " \n "])
def test_an_empty_summary_fails_the_turn_rather_than_empty_it(s: Stack, summary: str) -> None:
    s.upstream.script = script(summary)
    with s.client() as c, pytest.raises(openai.APIStatusError) as failed:
        c.responses.compact(model="m", input=HISTORY)
    assert failed.value.status_code == 502 and failed.value.body["code"] == "empty_summary"
    events = sse(s, {"model": "m", "input": [*HISTORY, TRIGGER]})
    assert [e["type"] for e in events][-2:] == ["error", "response.failed"]
    assert events[-2]["code"] == "empty_summary" and events[-1]["response"]["output"] == []


def test_a_cut_summary_is_kept(s: Stack) -> None:
    s.upstream.script = script(finish_reason="length")
    with s.client() as c:
        item = c.responses.compact(model="m", input=HISTORY).output[-1]
    summary_in_place(shown(s, item.model_dump(exclude_none=True)))


@pytest.mark.parametrize("body, param", [
    ({"input": HISTORY}, "model"),
    ({"model": "", "input": HISTORY}, "model"),
    ({"model": "m", "input": 5}, "input"),
    ({"model": "m", "input": [TRIGGER, *HISTORY]}, "input[0]"),
    ({"model": "m", "input": [{"type": "compaction"}]}, "input[0].encrypted_content"),
])
def test_bad_compact_requests_are_400(s: Stack, body: dict[str, Any], param: str) -> None:
    sent = len(s.upstream.requests)
    status, answer = raw(s, "/v1/responses/compact", body)
    assert status == 400 and answer["error"]["param"] == param, answer
    assert len(s.upstream.requests) == sent


def test_a_trigger_not_last_is_400_on_the_responses_path_too(s: Stack) -> None:
    body = copy.deepcopy({"model": "m", "input": [*HISTORY, TRIGGER, {"role": "user", "content": "x"}]})
    status, answer = raw(s, "/v1/responses", body)
    assert status == 400 and answer["error"]["param"] == "input[2]"


def test_the_compact_endpoint_takes_a_string_input_and_a_previous_response(s: Stack) -> None:
    with s.client() as c:
        first = c.responses.create(model="m", input="Remember: slate.")
        c.responses.compact(model="m", previous_response_id=first.id, input="And granite.")
    assert asked(s)["messages"][:3] == [{"role": "user", "content": "Remember: slate."},
                                        {"role": "assistant", "content": "done"},
                                        {"role": "user", "content": "And granite."}]
    try:
        urllib.request.urlopen(s.url + "/responses/compact", timeout=20)  # GET
    except urllib.error.HTTPError as refused:
        assert refused.code in (404, 405)


def test_a_summary_longer_than_its_time_limit_is_the_apis_timeout() -> None:
    """--compact-timeout bounds the whole summary (the upstream here keeps still until released,
    after the client had its answer): 504 whole, the error event and response.failed streamed;
    an ordinary turn has no such bound."""
    hold = threading.Event()
    with Stack(script(hold=hold), tool_call_parser="hermes", compact_timeout=0.3) as slow:
        try:
            with slow.client() as c, pytest.raises(openai.APIStatusError) as failed:
                c.responses.compact(model="m", input=HISTORY)
            assert failed.value.status_code == 504 and "0.3 s" in failed.value.message
            events = sse(slow, {"model": "m", "input": [*HISTORY, TRIGGER]})
            assert [e["type"] for e in events] == ["response.created", "response.in_progress", "error",
                                                   "response.failed"]
            assert "0.3 s" in events[2]["message"]
            slow.upstream.script = lambda body: Reply(content="done", hold=hold)
            threading.Timer(0.6, hold.set).start()  # (an ordinary turn waits past 0.3 s, and is answered)
            with slow.client() as c:
                assert c.responses.create(model="m", input="Hi").output_text == "done"
        finally:
            hold.set()


def test_compacting_again_lists_the_user_messages_but_not_the_earlier_summary(s: Stack) -> None:
    with s.client() as c:
        first = c.responses.compact(model="m", input=HISTORY).output[-1].model_dump(exclude_none=True)
        again = c.responses.compact(model="m", input=[*HISTORY, first, {"role": "user", "content": "Then?"}])
    assert asked(s)["messages"][-3] == {"role": "user", "content": LEAD + SUMMARY}  # (what it summarises)
    users = [part.text for item in again.output[:-1] for part in item.content]
    assert users == ["We agreed to launch on Tuesday.", "Then?"] and again.output[-1].type == "compaction"


def test_the_compact_endpoint_reports_usage_even_when_the_upstream_gives_none(s: Stack) -> None:
    s.upstream.script = script(usage=None)
    status, body = raw(s, "/v1/responses/compact", {"model": "m", "input": HISTORY})
    assert status == 200 and body["usage"]["total_tokens"] == 0 and body["output"][-1]["type"] == "compaction"
