"""The gateway's translation layer, in process: plans, non-streamed repair, stream translation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.harness import tool
from toolbridge.gateway.fronts.chat import plan_request
from toolbridge.gateway.turn import RequestError, Settings
from toolbridge.gateway.repair import repair_completion
from toolbridge.gateway.fronts.chat import StreamTranslator
from toolbridge.openai import assemble

READ = tool("os__fs__read", path={"type": "string"}, limit={"type": "integer"})
WRITE = tool("write_file", path={"type": "string"}, content={"type": "string"})
TOOLS = [READ, WRITE]
USER = [{"role": "user", "content": "go"}]


def plan(dialect: str = "hermes", **body: Any) -> Any:
    settings = Settings(dialect=dialect, recover_from_reasoning=body.pop("recover", False))
    return plan_request({"model": "m", "messages": USER, "tools": TOOLS, **body}, settings)


def answer(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}]}


def calls_of(message: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls") or []]


def stream_chunks(deltas: list[dict[str, Any]], finish: str = "stop") -> list[dict[str, Any]]:
    chunks = [{"id": "c", "created": 1, "model": "m", "choices": [{"index": 0, "delta": d, "finish_reason": None}]}
              for d in deltas]
    chunks.append({"id": "c", "created": 1, "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return chunks


def run_stream(p: Any, chunks: list[dict[str, Any]]) -> tuple[dict[str, Any], str, Any]:
    tr = StreamTranslator(p)
    out: list[dict[str, Any]] = []
    for chunk in chunks:
        out += tr.feed(chunk)
    out += tr.finish()
    deltas = [c["choices"][0]["delta"] for c in out if c["choices"]]
    check_stream_rules(out)
    finish = [c["choices"][0]["finish_reason"] for c in out if c["choices"] and c["choices"][0]["finish_reason"]]
    assert len(finish) == 1
    return assemble(deltas), finish[0], tr.provenance


def check_stream_rules(chunks: list[dict[str, Any]]) -> None:
    """OpenAI's streaming rules: first delta of a call has id/type/name, later ones only args."""
    seen: set[int] = set()
    for chunk in chunks:
        for choice in chunk["choices"]:
            for part in choice["delta"].get("tool_calls", ()):
                if part["index"] not in seen:
                    assert part.get("id") and part.get("type") == "function" and part["function"].get("name")
                    assert part["index"] == len(seen), "indices distinct and in order"
                    seen.add(part["index"])
                else:
                    assert set(part) == {"index", "function"} and set(part["function"]) == {"arguments"}


CONTENT_CALL = '<tool_call>\n{"name": "os.fs.read", "arguments": {"path": "/etc/hosts"}}\n</tool_call>'


def test_content_call_is_recovered_and_name_canonicalised() -> None:
    repaired, prov = repair_completion(answer({"content": "Reading.\n" + CONTENT_CALL}), plan())
    choice = repaired["choices"][0]
    assert calls_of(choice["message"]) == [("os__fs__read", {"path": "/etc/hosts"})]
    assert choice["message"]["content"] == "Reading."
    assert choice["finish_reason"] == "tool_calls"
    assert (prov.native, prov.content, prov.rejected) == (0, 1, 0)


def test_native_calls_win_and_pass_through() -> None:
    native = [{"id": "call_a", "type": "function", "function": {"name": "os.fs.read", "arguments": {"path": "x"}}},
              {"id": "call_a", "type": "function", "function": {"name": "nope", "arguments": "{}"}}]
    repaired, prov = repair_completion(answer({"content": CONTENT_CALL, "tool_calls": native}, "tool_calls"), plan())
    message = repaired["choices"][0]["message"]
    assert calls_of(message) == [("os__fs__read", {"path": "x"})]
    assert message["tool_calls"][0]["id"] == "call_a"
    assert '"nope"' in message["content"], "a rejected native call stays visible as text"
    assert (prov.native, prov.content, prov.rejected) == (1, 0, 1)


def test_reasoning_recovery_is_opt_in() -> None:
    msg = {"content": "", "reasoning_content": "I will read it. " + CONTENT_CALL}
    off, prov_off = repair_completion(answer(dict(msg)), plan())
    assert "tool_calls" not in off["choices"][0]["message"] and prov_off.calls == 0
    on, prov_on = repair_completion(answer(dict(msg)), plan(recover=True))
    assert calls_of(on["choices"][0]["message"]) == [("os__fs__read", {"path": "/etc/hosts"})]
    assert on["choices"][0]["message"]["reasoning_content"] == "I will read it."
    assert prov_on.reasoning == 1


def test_truncated_call_is_length_not_a_call() -> None:
    cut = '<tool_call>\n{"name": "write_file", "arguments": {"path": "a", "content": "par'
    repaired, _ = repair_completion(answer({"content": cut}, "length"), plan())
    choice = repaired["choices"][0]
    assert choice["finish_reason"] == "length" and "tool_calls" not in choice["message"]
    assert choice["message"]["content"] == cut


def test_parallel_false_keeps_the_first_call() -> None:
    two = CONTENT_CALL + '\n<tool_call>\n{"name": "write_file", "arguments": {"path": "a", "content": "b"}}\n</tool_call>'
    repaired, prov = repair_completion(answer({"content": two}), plan(parallel_tool_calls=False))
    assert calls_of(repaired["choices"][0]["message"]) == [("os__fs__read", {"path": "/etc/hosts"})]
    assert prov.rejected == 1


def test_required_without_a_call_is_an_error_not_an_empty_answer() -> None:
    with pytest.raises(RequestError) as err:
        repair_completion(answer({"content": "I won't."}), plan(tool_choice="required"))
    assert err.value.status == 502 and err.value.code == "tool_choice_unmet"


def test_named_choice_only_accepts_that_function() -> None:
    p = plan(tool_choice={"type": "function", "function": {"name": "write_file"}})
    with pytest.raises(RequestError):
        repair_completion(answer({"content": CONTENT_CALL}), p)


@pytest.mark.parametrize("body, param", [
    ({"messages": []}, "messages"),
    ({"messages": [{"content": "x"}]}, "messages[0]"),
    ({"messages": USER, "tools": "x"}, "tools"),
    ({"messages": USER, "tools": [{"type": "function", "function": {}}]}, "tools"),
    ({"messages": USER, "tools": [{"type": "web_search"}]}, "tools[0]"),
    ({"messages": USER, "tools": TOOLS, "tool_choice": "sometimes"}, "tool_choice"),
    ({"messages": USER, "tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "x"}}}, "tool_choice"),
    ({"messages": USER, "tool_choice": "required"}, "tool_choice"),
    ({"messages": USER, "functions": []}, "functions"),
    ({"messages": USER, "stream": "yes"}, "stream"),
    ({"messages": [{"role": "tool", "content": "x"}]}, "messages[0]"),
])
def test_malformed_requests_get_a_400_naming_the_field(body: dict[str, Any], param: str) -> None:
    with pytest.raises(RequestError) as err:
        plan_request(body, Settings())
    assert err.value.status == 400 and err.value.param == param
    assert err.value.body()["error"]["message"]


def test_special_tokens_are_kept_only_when_the_markers_are_special() -> None:
    assert plan("glm45").body["skip_special_tokens"] is False
    assert "skip_special_tokens" not in plan("hermes").body
    none = plan_request({"messages": USER, "tools": TOOLS, "tool_choice": "none"}, Settings(dialect="glm45"))
    assert "skip_special_tokens" not in none.body and none.tools is None


@pytest.mark.parametrize("size", [1, 3, 7, 1000])
def test_stream_equals_non_stream(size: int) -> None:
    text = "Reading.\n" + CONTENT_CALL + "\nDone <b>."
    whole, _ = repair_completion(answer({"content": text}), plan())
    deltas = [{"content": text[i:i + size]} for i in range(0, len(text), size)]
    streamed, finish, prov = run_stream(plan(stream=True), stream_chunks(deltas))
    expected = whole["choices"][0]["message"]
    assert calls_of(streamed) == calls_of(expected) and streamed["content"] == expected["content"]
    assert finish == "tool_calls" and prov.content == 1


def native_part(**part: Any) -> dict[str, Any]:
    return {"tool_calls": [part]}


@pytest.mark.parametrize("name, deltas", [
    ("whole call in one chunk", [native_part(index=0, id="call_1", type="function",
                                             function={"name": "os.fs.read", "arguments": '{"path": "a"}'})]),
    ("id on every chunk", [native_part(index=0, id="call_1", function={"name": "os__fs__read", "arguments": ""}),
                           native_part(index=0, id="call_1", function={"arguments": '{"path"'}),
                           native_part(index=0, id="call_1", function={"arguments": ': "a"}'})]),
    ("missing index", [native_part(id="call_1", function={"name": "os__fs__read", "arguments": '{"pa'}),
                       native_part(function={"arguments": 'th": "a"}'})]),
    ("arguments as an object", [native_part(index=0, id="call_1", function={"name": "os__fs__read",
                                                                             "arguments": {"path": "a"}})]),
])
def test_native_stream_quirks_are_normalised(name: str, deltas: list[dict[str, Any]]) -> None:
    message, finish, prov = run_stream(plan(stream=True), stream_chunks(deltas, "tool_calls"))
    assert calls_of(message) == [("os__fs__read", {"path": "a"})], name
    assert finish == "tool_calls" and prov.native == 1


def test_stream_usage_chunk_comes_last() -> None:
    p = plan(stream=True, stream_options={"include_usage": True})
    chunks = stream_chunks([{"content": "hi"}])
    chunks.append({"id": "c", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
    tr = StreamTranslator(p)
    out = [c for chunk in chunks for c in tr.feed(chunk)] + tr.finish()
    assert out[-1]["choices"] == [] and out[-1]["usage"]["total_tokens"] == 2
    assert all(c["usage"] is None for c in out[:-1])


def test_stream_required_without_call_raises_at_the_end() -> None:
    tr = StreamTranslator(plan(stream=True, tool_choice="required"))
    for chunk in stream_chunks([{"content": "no"}]):
        tr.feed(chunk)
    with pytest.raises(RequestError):
        tr.finish()


def test_arguments_that_fail_the_schema_are_counted_not_hidden() -> None:
    bad = '<tool_call>{"name": "os__fs__read", "arguments": {"path": [5]}}</tool_call>'  # no lossless fix
    _, prov = repair_completion(answer({"content": bad}), plan())
    assert (prov.content, prov.invalid) == (1, 1)
    native = [{"id": "c1", "type": "function", "function": {"name": "os__fs__read", "arguments": '{"path": [5]}'}}]
    _, prov = repair_completion(answer({"content": "", "tool_calls": native}), plan())
    assert (prov.native, prov.invalid) == (1, 1)
    _, _, prov = run_stream(plan(stream=True), stream_chunks([{"content": bad}]))
    assert (prov.content, prov.invalid) == (1, 1)
