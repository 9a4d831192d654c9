"""Every front's request fields with values of the wrong type, as a careless or hostile client
sends them: no answer is a 5xx the request caused, and every refusal is in the front's own
error shape. Over raw HTTP on loopback (an SDK would refuse to send most of these bodies).

A valid request rich in fields is taken per front (``probe_bodies``); a probe puts a wrong
value (null, numbers, strings, arrays where objects are due and the reverse, nesting past the
bound, or the key left out) at one or more of its paths, streamed or not, through a chat
upstream and through the completions mode with the injected protocol (where the renderer reads
the history and the schemas). Hypothesis draws the probes (``examples``); the full profile also
runs every path with every value of ``WRONG``.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from tests.gateway.probe_bodies import BASES, MISSING, PATHS, WRONG, paths, replaced
from tests.gateway.test_fallback import EOS, PLAIN_TEMPLATE, model_dir, stack
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'
# 502s an answer may rightly get when a probe changes what is asked of it (a required call the
# model did not make, a strict call its schema now refuses).
ANSWER_FAILURES = ("tool_choice_unmet", "invalid_tool_arguments")
MODES = ("chat", "completions")


def script(body: dict[str, Any]) -> Reply:
    return Reply(content="Sure. " + CALL + (EOS if "prompt" in body else ""))


@pytest.fixture(scope="module")
def stacks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Stack]]:
    root: Path = tmp_path_factory.mktemp("probe")
    made = {"chat": Stack(script, tool_call_parser="hermes"),
            "completions": stack(script, tool_call_parser="hermes", upstream_api="completions",
                                 tool_fallback=True, model_dir=model_dir(root, PLAIN_TEMPLATE))}
    for s in made.values():
        s.__enter__()
    yield made
    for s in made.values():
        s.__exit__(None, None, None)


def bases(mode: str) -> dict[str, dict[str, Any]]:
    """The valid requests for ``mode``: the plain template of the completions mode takes text only."""
    return BASES if mode == "chat" else {k: _text_only(v) for k, v in BASES.items()}


def _text_only(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _text_only(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_text_only(v) for v in value
                if not (isinstance(v, dict) and v.get("type") in ("image", "image_url", "input_image"))]
    return value


def send(s: Stack, front: str, body: Any) -> tuple[int, str, bytes]:
    assert s.gateway is not None and s.gateway.server is not None
    conn = http.client.HTTPConnection("127.0.0.1", s.gateway.server.port, timeout=30)
    try:
        conn.request("POST", PATHS[front], json.dumps(body), {"content-type": "application/json"})
        got = conn.getresponse()
        return got.status, got.getheader("content-type") or "", got.read()
    finally:
        conn.close()


def check(front: str, status: int, kind: str, data: bytes, what: Any) -> None:
    """No failure of the gateway's own; a refusal in the front's error shape."""
    assert b"internal_error" not in data and b"internal error" not in data, (what, data[:500])
    if status < 400:
        return
    assert kind == "application/json", (what, status, kind, data[:300])
    error = json.loads(data)
    if front in ("messages", "count"):
        assert set(error) == {"type", "error", "request_id"} and error["type"] == "error", (what, error)
        assert set(error["error"]) == {"type", "message"}, (what, error)
        inner = error["error"]
    else:
        assert set(error) == {"error"} and set(error["error"]) == {"message", "type", "param", "code"}, (what, error)
        inner = error["error"]
    if status >= 500:
        assert status == 502 and any(code in data.decode() for code in ANSWER_FAILURES), (what, status, error)
    else:
        assert status == 400 and inner["type"] == "invalid_request_error", (what, status, error)


def probe(s: Stack, front: str, base: dict[str, Any], changes: list[tuple[tuple[Any, ...], Any]]) -> None:
    body = base
    for path, value in changes:
        if _reachable(body, path):
            body = replaced(body, path, value)
    status, kind, data = send(s, front, body)
    check(front, status, kind, data, changes)


def _reachable(body: Any, path: tuple[Any, ...]) -> bool:
    """Whether ``path`` still leads into ``body`` (an earlier change may have replaced a parent)."""
    for key in path:
        if isinstance(body, dict) and isinstance(key, str) and key in body:
            body = body[key]
        elif isinstance(body, list) and isinstance(key, int) and key < len(body):
            body = body[key]
        else:
            return False
    return True


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["type", "text", "name", "a"]),
                                                                inner, max_size=3),
    max_leaves=8)
VALUES = st.one_of(st.sampled_from(WRONG), JSON_VALUES)
FRONTS = list(BASES)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("front", FRONTS)
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_wrong_types_get_the_fronts_own_400(stacks: dict[str, Stack], mode: str, front: str, data: Any) -> None:
    base = bases(mode)[front]
    if front != "count" and data.draw(st.booleans(), label="stream"):
        base = {**base, "stream": True}
    where = list(paths(base))
    changes = data.draw(st.lists(st.tuples(st.sampled_from(where), VALUES), min_size=1, max_size=3), label="changes")
    probe(stacks[mode], front, base, changes)


@pytest.mark.check
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("front", FRONTS)
def test_every_field_with_every_wrong_value(stacks: dict[str, Stack], mode: str, front: str) -> None:
    for stream in (False, True) if front != "count" else (False,):
        base = {**bases(mode)[front], "stream": stream} if front != "count" else bases(mode)[front]
        for path in paths(base):
            for value in WRONG:
                probe(stacks[mode], front, base, [(path, value)])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("front", FRONTS)
def test_the_bases_are_served(stacks: dict[str, Stack], mode: str, front: str) -> None:
    """The probes start from requests each front serves (a probe's refusal is its change's)."""
    status, _, data = send(stacks[mode], front, bases(mode)[front])
    assert status == 200, data[:500]
    assert MISSING in WRONG
