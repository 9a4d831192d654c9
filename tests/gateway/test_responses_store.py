"""The Responses front's store, end to end (the ``openai`` SDK -> toolbridge -> a replaying
upstream that records the ``Authorization`` it is sent): each stored response belongs to the
credential that made it, the store is bounded in bytes as well as in count, expired responses go
without being read, the whole ``--responses-secret`` keys the seal, and a ``DELETE`` during the
response's own stream wins."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.gateway.test_responses import raw, stacks  # noqa: F401  (stacks: the module's gateways, a fixture)
from toolbridge.gateway.state.memory import ResponseStore
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

openai = pytest.importorskip("openai")

THOUGHT = "Paris, then."


def echo(body: dict[str, Any]) -> Reply:
    """The model says how many messages it was sent."""
    return Reply(content=f"seen {len(body['messages'])}")


def http(s: Stack, method: str, path: str, body: Any = None, **headers: str) -> tuple[int, Any]:
    return raw(s, path, body, method, **headers)


def metrics(s: Stack) -> dict[str, float]:
    _, text = http(s, "GET", "/metrics")
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def refusal(call: Callable[[], Any]) -> tuple[int, dict[str, Any]]:
    """The status and error body ``call`` (an SDK call) fails with."""
    with pytest.raises(openai.APIStatusError) as failed:
        call()
    return failed.value.status_code, failed.value.body


def unknown(body: dict[str, Any], response_id: str) -> dict[str, Any]:
    """An error body with the id it names replaced, to compare answers about two ids."""
    return json.loads(json.dumps(body).replace(response_id, "ID"))


# ---------------------------------------------------------------- scopes


def test_a_callers_responses_are_its_own(stacks: Any) -> None:
    """Without --api-key each client's own credential scopes what it stores: another client's id
    is answered exactly as an id never made (GET and DELETE 404, previous_response_id 400), the
    upstream never sees one tenant's history under another's key, and the owner keeps it."""
    s = stacks(echo)
    a, b = s.client(api_key="tenant-a"), s.client(api_key="tenant-b")
    kept = a.responses.create(model="m", input="secret plans")
    never = "resp_" + "0" * 24
    sent = len(s.upstream.requests)
    for attempt in (lambda rid: b.responses.retrieve(rid), lambda rid: b.responses.delete(rid),
                    lambda rid: b.responses.create(model="m", input="go on", previous_response_id=rid)):
        theirs, nobodys = refusal(lambda: attempt(kept.id)), refusal(lambda: attempt(never))
        assert theirs[0] in (400, 404) and theirs[0] == nobodys[0]
        assert unknown(theirs[1], kept.id) == unknown(nobodys[1], never), "nothing more is told"
    assert len(s.upstream.requests) == sent, "no continuation reached the upstream"
    assert a.responses.retrieve(kept.id).id == kept.id, "B's DELETE deleted nothing"
    a.responses.create(model="m", input="go on", previous_response_id=kept.id)
    assert s.upstream.authorizations[-1] == b"Bearer tenant-a"
    assert s.upstream.requests[-1]["messages"][0] == {"role": "user", "content": "secret plans"}
    b.responses.create(model="m", input="mine")
    assert s.upstream.authorizations[-1] == b"Bearer tenant-b"
    assert "secret plans" not in json.dumps(s.upstream.requests[-1])


def test_no_credential_sees_no_keyed_response(stacks: Any) -> None:
    s = stacks(echo)
    keyed = s.client(api_key="tenant-a").responses.create(model="m", input="hi")
    assert http(s, "GET", f"/v1/responses/{keyed.id}")[0] == 404
    assert http(s, "DELETE", f"/v1/responses/{keyed.id}")[0] == 404
    status, body = http(s, "POST", "/v1/responses",
                        {"model": "m", "input": "x", "previous_response_id": keyed.id})
    assert status == 400 and body["error"]["code"] == "previous_response_not_found"
    status, anonymous = http(s, "POST", "/v1/responses", {"model": "m", "input": "hi"})
    assert status == 200 and http(s, "GET", f"/v1/responses/{anonymous['id']}")[0] == 200
    with pytest.raises(openai.NotFoundError):
        s.client(api_key="tenant-a").responses.retrieve(anonymous["id"])
    # The same credential, as x-api-key instead of a bearer token, is the same caller.
    assert http(s, "GET", f"/v1/responses/{keyed.id}", **{"x-api-key": "tenant-a"})[0] == 200


def test_with_a_gateway_key_its_holders_share_one_scope(stacks: Any) -> None:
    s = stacks(echo, api_key="gateway-key")
    kept = s.client(api_key="gateway-key").responses.create(model="m", input="hi")
    assert http(s, "GET", f"/v1/responses/{kept.id}", **{"x-api-key": "gateway-key"})[1]["id"] == kept.id
    assert http(s, "GET", f"/v1/responses/{kept.id}", authorization="Bearer wrong")[0] == 401
    assert http(s, "GET", f"/v1/responses/{kept.id}")[0] == 401


# ---------------------------------------------------------------- bounds


def test_the_byte_bound_evicts_the_least_recently_stored(stacks: Any) -> None:
    s = stacks(echo, responses_store_bytes=40_000)
    c = s.client()
    before = metrics(s)
    made = [c.responses.create(model="m", input="x" * 6000).id for _ in range(8)]
    after = metrics(s)
    assert after["toolbridge_responses_stored_bytes"] <= 40_000
    assert after['toolbridge_responses_dropped_total{reason="bytes"}'] > before.get(
        'toolbridge_responses_dropped_total{reason="bytes"}', 0)
    with pytest.raises(openai.NotFoundError):
        c.responses.retrieve(made[0])
    assert c.responses.retrieve(made[-1]).id == made[-1]
    big = c.responses.create(model="m", input="y" * 50_000)
    assert big.output_text == "seen 1", "answered, only not stored"
    with pytest.raises(openai.NotFoundError):
        c.responses.retrieve(big.id)
    assert metrics(s)['toolbridge_responses_dropped_total{reason="too_large"}'] == 1
    assert c.responses.retrieve(made[-1]).id == made[-1], "the refused one evicted nothing"


def test_expired_responses_go_without_being_read(stacks: Any) -> None:
    """Nothing reads the store after the response is made (only /metrics is asked): the
    gateway's sweep frees it once it has expired."""
    s = stacks(echo, responses_ttl=0.5)
    s.client().responses.create(model="m", input="z" * 5000)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        now = metrics(s)
        if now.get('toolbridge_responses_dropped_total{reason="expired"}'):
            break
        time.sleep(0.05)  # (polling for the sweep's effect; the test ends as soon as it is seen)
    assert now['toolbridge_responses_dropped_total{reason="expired"}'] == 1
    assert now["toolbridge_responses_stored"] == 0 and now["toolbridge_responses_stored_bytes"] == 0


def test_the_store_sweeps_from_the_front_on_every_insert() -> None:
    """In process, on a clock the test moves: expired entries go at the next insert, bytes and
    count with them, and each entry is accounted what it was given."""
    now = [0.0]
    dropped: list[str] = []
    store = ResponseStore(100, 10.0, 1000, dropped.append, clock=lambda: now[0])
    for i in range(5):
        assert store.put("s", {"id": f"r{i}"}, [], 100)
        now[0] += 1
    assert (len(store), store.bytes) == (5, 500)
    now[0] = 12.5  # r0, r1 and r2 have expired
    store.put("s", {"id": "new"}, [], 50)
    assert (len(store), store.bytes, dropped) == (3, 250, ["expired"] * 3)
    assert store.response("s", "r3") is not None and store.response("other", "r3") is None


# ---------------------------------------------------------------- the secret


def sealed_reasoning(s: Stack) -> str:
    first = s.client().responses.create(model="m", input="hi", include=["reasoning.encrypted_content"],
                                        store=False)
    return first.output[0].encrypted_content


def opened(s: Stack, payload: str) -> bool:
    """Whether ``s`` opens ``payload``: the upstream is sent its reasoning."""
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": payload}
    s.client().responses.create(model="m", input=[{"role": "user", "content": "hi"}, item,
                                                  {"role": "assistant", "content": "ok"}], store=False)
    return s.upstream.requests[-1]["messages"][1].get("reasoning_content") == THOUGHT


def test_the_whole_secret_keys_the_seal(stacks: Any) -> None:
    """Two secrets equal in their first 64 bytes (and more) do not open each other's reasoning;
    a gateway with the same secret does."""
    think = lambda body: Reply(content="ok", reasoning=THOUGHT)  # noqa: E731
    common = "s" * 100
    one = stacks(think, responses_secret=common + "1")
    again = stacks(think, responses_secret=common + "1", responses_store=255)  # another process, same secret
    other = stacks(think, responses_secret=common + "2")
    payload = sealed_reasoning(one)
    assert opened(again, payload)
    assert not opened(other, payload)


# ---------------------------------------------------------------- a DELETE during the stream


def test_a_delete_during_the_stream_wins(stacks: Any) -> None:
    """The response is registered when its stream begins: GET answers it in progress, DELETE
    deletes it (200), and it is not stored when its stream ends."""
    hold = threading.Event()
    s = stacks(lambda body: Reply(content="a long answer", chunk=2, hold=hold))
    c = s.client(api_key="tenant-a")
    try:
        with c.responses.create(model="m", input="hi", stream=True) as events:
            iterator = iter(events)
            created = next(e for e in iterator if e.type == "response.created")
            rid = created.response.id
            assert c.responses.retrieve(rid).status == "in_progress"
            with pytest.raises(openai.NotFoundError):
                s.client(api_key="tenant-b").responses.delete(rid)
            assert c.responses.delete(rid) is None
            hold.set()
            last = [e for e in iterator][-1]
        assert last.type == "response.completed" and last.response.output_text == "a long answer"
    finally:
        hold.set()
    with pytest.raises(openai.NotFoundError):
        c.responses.retrieve(rid)
    status, body = refusal(lambda: c.responses.create(model="m", input="x", previous_response_id=rid))
    assert status == 400 and body["code"] == "previous_response_not_found"
    # Without the DELETE, the streamed response is stored when it ends.
    with c.responses.create(model="m", input="hi", stream=True) as events:
        done = [e for e in events][-1]
    assert c.responses.retrieve(done.response.id).status == "completed"
