"""The Responses front's items, end to end with the ``openai`` SDK: ``item_reference`` resolved
from the store (output items and input items of stored responses, whole and streamed, in the
caller's scope), ``GET /v1/responses/{id}/input_items`` paginated as the API pages it (the
SDK's auto-pagination is the judge) and ``POST /v1/responses/input_tokens`` counted as the
Messages front's ``count_tokens`` counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.gateway.test_fallback import tokenizer_model_dir
from tests.gateway.test_responses import (PARIS, THOUGHT, TOOLS, USER, agent, raw,  # noqa: F401
                                          stacks)
from toolbridge.gateway.fronts.messages.tokens import estimate
from toolbridge.gateway.fronts.responses.request import responses_turn
from toolbridge.gateway.fronts.responses.sealed import Sealer
from toolbridge.gateway.state.memory import ResponseStore
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

openai = pytest.importorskip("openai")

RESULT = "Sunny, 22 degrees."


def refused(call: Any) -> tuple[int, dict[str, Any]]:
    with pytest.raises(openai.APIStatusError) as failed:
        call()
    return failed.value.status_code, failed.value.body


def first_turn(c: Any, stream: bool) -> Any:
    """A stored response with reasoning, a message and a get_weather call (streamed or not)."""
    if not stream:
        return c.responses.create(model="m", input=USER, tools=TOOLS)
    with c.responses.stream(model="m", input=USER, tools=TOOLS) as events:
        return events.get_final_response()


@pytest.mark.parametrize("stream", [False, True])
def test_item_references_name_the_stored_output_items(stacks: Any, stream: bool) -> None:
    """The Vercel AI SDK's step 2 (store: true): the user message again, the previous output
    by reference, the tool's result. The upstream is sent the whole conversation, its own call
    id included."""
    s = stacks(agent("hermes"))
    with s.client() as c:
        first = first_turn(c, stream)
        kinds = [item.type for item in first.output]
        assert kinds == ["reasoning", "message", "function_call"]
        call = first.output[-1]
        second = c.responses.create(model="m", tools=TOOLS, input=[
            {"role": "user", "content": USER},
            *({"type": "item_reference", "id": item.id} for item in first.output),
            {"type": "function_call_output", "call_id": call.call_id, "output": RESULT}])
    assert second.output_text.startswith("It will be sunny")
    sent = s.upstream.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["reasoning_content"] == THOUGHT and sent[1]["content"] == "Let me check."
    assert [c["function"]["name"] for c in sent[1]["tool_calls"]] == ["get_weather"]
    assert sent[2]["tool_call_id"] == sent[1]["tool_calls"][0]["id"] and sent[2]["content"] == RESULT


def test_item_references_name_the_input_items_of_stored_responses(stacks: Any) -> None:
    """An input item, listed with the id the gateway gave it, is named by a later request; the
    reference is kept as the item it names."""
    s = stacks(lambda body: Reply(content=f"seen {len(body['messages'])}"))
    with s.client() as c:
        first = c.responses.create(model="m", input=[{"role": "developer", "content": "Be brief."},
                                                    {"role": "user", "content": "Remember 42."}])
        listed = list(c.responses.input_items.list(first.id, order="asc"))
        assert [(i.type, i.role, i.content[0].text) for i in listed] == [
            ("message", "developer", "Be brief."), ("message", "user", "Remember 42.")]
        assert all(i.id.startswith("msg_") and i.status == "completed" for i in listed)
        second = c.responses.create(model="m", input=[
            *({"type": "item_reference", "id": i.id} for i in listed),
            {"type": "item_reference", "id": first.output[0].id}, {"role": "user", "content": "Which?"}])
        assert [i.id for i in c.responses.input_items.list(second.id, order="asc")][:3] == [
            listed[0].id, listed[1].id, first.output[0].id]
    assert s.upstream.requests[-1]["messages"] == [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Remember 42."},
        {"role": "assistant", "content": "seen 2"}, {"role": "user", "content": "Which?"}]


def test_an_item_reference_the_store_does_not_hold_is_a_400_naming_it(stacks: Any) -> None:
    """Unknown, another caller's, or of a response not stored: the same 400, naming the id and
    pointing at the input item; nothing reaches the upstream."""
    s = stacks(agent("hermes"))
    mine, theirs = s.client(api_key="tenant-a"), s.client(api_key="tenant-b")
    kept = mine.responses.create(model="m", input=USER, tools=TOOLS).output[1].id
    unstored = mine.responses.create(model="m", input=USER, tools=TOOLS, store=False).output[1].id
    sent = len(s.upstream.requests)
    for client, item_id in ((mine, "msg_" + "0" * 24), (theirs, kept), (mine, unstored)):
        status, body = refused(lambda: client.responses.create(model="m", input=[
            {"role": "user", "content": USER}, {"type": "item_reference", "id": item_id}]))
        assert status == 400 and body["param"] == "input[1]" and body["code"] == "item_not_found"
        assert item_id in body["message"] and body["type"] == "invalid_request_error"
    assert len(s.upstream.requests) == sent
    mine.close(), theirs.close()


def test_input_items_are_paginated_as_the_api_pages_them(stacks: Any) -> None:
    """25 input items: the SDK's auto-pagination walks pages of 10 by ``after`` in both orders;
    one page says ``has_more`` and its first and last ids; ids given by the client are kept."""
    s = stacks(lambda body: Reply(content="ok"))
    texts = [f"note {i}" for i in range(25)]
    with s.client() as c:
        made = c.responses.create(model="m", input=[
            {"type": "message", "role": "user", "content": t, **({"id": "msg_mine"} if i == 3 else {})}
            for i, t in enumerate(texts)])
        ascending = [i.content[0].text for i in c.responses.input_items.list(made.id, order="asc", limit=10)]
        assert ascending == texts
        descending = list(c.responses.input_items.list(made.id, limit=10))
        assert [i.content[0].text for i in descending] == texts[::-1]
        assert descending[-4].id == "msg_mine" and len({i.id for i in descending}) == 25
        one = c.responses.input_items.list(made.id, limit=7, after=descending[2].id)
        assert [i.content[0].text for i in one.data] == texts[::-1][3:10]
        assert one.has_more and (one.first_id, one.last_id) == (one.data[0].id, one.data[-1].id)
        last = c.responses.input_items.list(made.id, order="asc", after=descending[1].id)
        assert [i.content[0].text for i in last.data] == texts[24:] and not last.has_more
        assert len(c.responses.input_items.list(made.id).data) == 20  # the default limit
        assert refused(lambda: c.responses.input_items.list(made.id, limit=101))[1]["param"] == "limit"
        assert refused(lambda: c.responses.input_items.list(made.id, after="msg_x"))[1]["param"] == "after"
        status, body = refused(lambda: c.responses.input_items.list("resp_" + "0" * 24))
        assert status == 404 and body["code"] == "not_found"
    with s.client(api_key="another") as other:
        assert refused(lambda: other.responses.input_items.list(made.id))[0] == 404
    assert raw(s, f"/v1/responses/{made.id}/input_items", None, "DELETE")[0] == 405


def test_input_items_of_a_string_input_and_of_calls(stacks: Any) -> None:
    s = stacks(agent("hermes"))
    with s.client() as c:
        first = c.responses.create(model="m", input=USER, tools=TOOLS)
        call = first.output[-1]
        second = c.responses.create(model="m", tools=TOOLS, previous_response_id=first.id, input=[
            {"type": "function_call_output", "call_id": call.call_id, "output": RESULT}])
        [text] = c.responses.input_items.list(first.id)
        [output] = c.responses.input_items.list(second.id)
    assert (text.type, text.role, text.content[0].type, text.content[0].text) == (
        "message", "user", "input_text", USER)
    assert (output.type, output.call_id, output.output, output.id[:4]) == (
        "function_call_output", call.call_id, RESULT, "fco_")


# ---------------------------------------------------------------- input_tokens


def counted(c: Any, **kw: Any) -> tuple[int, str]:
    answer = c.responses.input_tokens.with_raw_response.count(model="m", **kw)
    parsed = answer.parse()
    assert parsed.object == "response.input_tokens"
    return parsed.input_tokens, answer.headers["x-toolbridge-token-count"]


def test_input_tokens_is_the_estimate_count_tokens_makes(stacks: Any) -> None:
    """Without a tokenizer: the estimate of the turn the request makes, in the caller's scope
    (its previous response's conversation counted); a request /v1/responses refuses is the same
    400; nothing reaches the upstream."""
    s = stacks(agent("hermes"))
    with s.client() as c:
        first = c.responses.create(model="m", input=USER, tools=TOOLS)
        sent = len(s.upstream.requests)
        body = {"input": [{"type": "function_call_output", "call_id": first.output[-1].call_id,
                           "output": RESULT}], "tools": TOOLS, "instructions": "Be brief."}
        tokens, how = counted(c, previous_response_id=first.id, **body)
        store, scope = s.gateway.responses.store.core, _scope(s, c)
        turn = responses_turn({"model": "m", "previous_response_id": first.id, **body},
                              lambda rid: store.conversation(scope, rid).conversation, Sealer(b"k"))
        assert (tokens, how) == (estimate(turn), "estimate")
        assert counted(c, input="x")[0] < tokens
        status, error = refused(lambda: c.responses.input_tokens.count(model="m", input=[
            {"type": "item_reference", "id": "msg_unknown"}]))
        assert (status, error["param"]) == (400, "input[0]")
    with s.client(api_key="another") as other:
        status, error = refused(lambda: other.responses.input_tokens.count(
            model="m", input="x", previous_response_id=first.id))
        assert (status, error["param"]) == (400, "previous_response_id")
    assert len(s.upstream.requests) == sent


def _scope(s: Stack, c: Any) -> str:
    """The scope the gateway gives the SDK client ``c`` (its bearer credential)."""
    from toolbridge.gateway.http.server import Request

    headers = [(b"authorization", f"Bearer {c.api_key}".encode())]
    return s.gateway.responses.scopes.of(Request("POST", "/", "1.1", headers, b"", True))


def test_input_tokens_uses_the_models_tokenizer(tmp_path: Path) -> None:
    folder, expected = tokenizer_model_dir(tmp_path)
    with Stack(lambda b: Reply(content="unused"), model_dir=folder, upstream_api="completions") as s, \
            s.client() as c:
        assert counted(c, input="Hi there, how are you?", instructions="Be brief.") == (expected, "tokenizer")


def test_the_item_index_goes_with_its_entries() -> None:
    """In process: an item is found while its response is stored, in its scope only; deleted,
    evicted or expired, the response takes its items' index entries with it (nothing grows);
    an id held by two responses names the later one's item."""
    now = [0.0]
    store = ResponseStore(size=2, ttl=10, clock=lambda: now[0])

    def put(scope: str, rid: str, *ids: str) -> None:
        store.put(scope, {"id": rid, "output": [{"type": "message", "id": f"out_{rid}"}]}, [], 10,
                  [{"type": "message", "id": i, "n": rid} for i in ids])

    put("a", "r1", "in_1", "shared")
    put("a", "r2", "shared")
    assert store.item("a", "out_r1")["id"] == "out_r1" and store.item("b", "out_r1") is None
    assert store.item("a", "shared")["n"] == "r2" and store.item("a", "in_1")["n"] == "r1"
    store.delete("a", "r2")
    assert store.item("a", "shared") is None and store.item("a", "out_r2") is None
    put("a", "r3")
    put("a", "r4")  # evicts r1
    assert store.item("a", "in_1") is None and store.item("a", "out_r3") is not None
    now[0] = 11.0
    store.sweep()
    assert len(store) == 0 and store._items == {}
