"""The OpenAI Responses front, streamed: ``responses.stream`` over real HTTP, streamed and whole
answers compared through the SDK's own parsing, and the numbered events checked as sent."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from tests.gateway.test_responses import (  # noqa: F401  (stacks is a fixture)
    CAPTURES,
    DIALECTS,
    FINAL,
    KINDS,
    PARIS,
    PATCHES,
    READ,
    THOUGHT,
    TOOLS,
    USER,
    WEATHER,
    WRITERS,
    agent,
    answer,
    apply_patch,
    create,
    items,
    metric,
    native,
    parser,
    stacks,
    upstream_id,
    written,
)
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply
from toolbridge.syntax.bodies.json import HOLD_BLOCK
from toolbridge.syntax.dialect import HOLD_TAGGED_BLOCK

openai = pytest.importorskip("openai")

LAST = {"response.completed", "response.incomplete", "response.failed"}


def stream(s: Stack, input: Any = USER, **kw: Any) -> tuple[Any, list[Any]]:
    """The response the last event carries (completed, incomplete or failed) and every event,
    as the SDK parsed them."""
    kw.setdefault("tools", TOOLS)
    with s.client() as c, c.responses.stream(model="m", input=input, **kw) as events:
        seen = list(events)
    assert seen[-1].type in LAST, [e.type for e in seen]
    return seen[-1].response, seen


def sse(s: Stack, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of a streamed answer as sent, read without the SDK: each ``event:`` name is
    its data's type, and there is no ``[DONE]``."""
    request = urllib.request.Request(s.url + "/responses", data=json.dumps({"stream": True, **body}).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=20) as r:
        assert r.status == 200 and r.headers["content-type"] == "text/event-stream"
        text = r.read().decode()
    assert "[DONE]" not in text and text.endswith("\n\n")
    out = []
    for frame in text.removesuffix("\n\n").split("\n\n"):
        name, data = frame.split("\n")
        event = json.loads(data.removeprefix("data: "))
        assert name == "event: " + event["type"]
        out.append(event)
    return out


def body(**kw: Any) -> dict[str, Any]:
    return {"model": "m", "input": USER, "tools": TOOLS, **kw}


DELTAS = {  # an item's delta event -> its done event and the done event's field
    "response.output_text.delta": ("response.output_text.done", "text"),
    "response.reasoning_text.delta": ("response.reasoning_text.done", "text"),
    "response.reasoning_summary_text.delta": ("response.reasoning_summary_text.done", "text"),
    "response.function_call_arguments.delta": ("response.function_call_arguments.done", "arguments"),
    "response.custom_tool_call_input.delta": ("response.custom_tool_call_input.done", "input"),
}


def item_value(item: dict[str, Any]) -> str:
    """What an item's deltas spell: its text, reasoning, arguments or input."""
    if item["type"] in ("message", "reasoning"):
        return "".join(p["text"] for p in item.get("content") or item.get("summary") or ())
    return item["arguments"] if item["type"] == "function_call" else item["input"]


def check_events(events: list[dict[str, Any]], last: str = "response.completed", one_open: bool = True) -> None:
    """The Responses event contract: numbered 0..n-1; created, in_progress first and ``last``
    last, all of one response; each item added (empty, in progress), then its deltas, then
    done, under its own output_index and item_id; the deltas join to the done events' values
    and to the item's; the last event's output is the done items. ``one_open``: an item ends
    before the next begins."""
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == last
    assert not LAST & set(kinds[:-1]) and "response.created" not in kinds[1:]
    lifecycle = [e["response"] for e in events if "response" in e]
    assert len({r["id"] for r in lifecycle}) == 1 and lifecycle[0]["status"] == "in_progress"
    assert lifecycle[0]["output"] == [] and lifecycle[0]["usage"] is None
    added: list[dict[str, Any]] = []
    done: dict[int, dict[str, Any]] = {}
    joined: dict[tuple[int, str], str] = {}
    finished: dict[tuple[int, str], str] = {}
    for e in events[2:-1]:
        kind, index = e["type"], e.get("output_index")
        if kind == "error":
            continue
        if kind == "response.output_item.added":
            assert index == len(added), "items are numbered in order"
            if one_open:
                assert len(added) == len(done), f"item {index} added while item {len(added) - 1} is open"
            item = e["item"]
            assert item["status"] == "in_progress" and item_value(item) == ""
            added.append(item)
            continue
        assert index is not None and index < len(added) and index not in done, (kind, index)
        if kind != "response.output_item.done":
            assert e["item_id"] == added[index]["id"], kind
        if kind in DELTAS:
            assert (index, DELTAS[kind][0]) not in finished, "a delta after its done event"
            joined[(index, DELTAS[kind][0])] = joined.get((index, DELTAS[kind][0]), "") + e["delta"]
        elif kind in {d for d, _ in DELTAS.values()}:
            field = next(f for d, f in DELTAS.values() if d == kind)
            finished[(index, kind)] = e[field]
            assert joined.get((index, kind), "") == e[field], kind
        elif kind == "response.output_item.done":
            item = e["item"]
            assert item["id"] == added[index]["id"] and item["type"] == added[index]["type"]
            value = [v for (i, _), v in finished.items() if i == index]
            assert value == [item_value(item)], "the done events and the item agree"
            done[index] = item
        else:
            assert kind in ("response.content_part.added", "response.content_part.done",
                            "response.reasoning_summary_part.added", "response.reasoning_summary_part.done"), kind
    output = events[-1]["response"]["output"]
    if last == "response.failed":  # items open at the failure stay as they were
        assert [i["id"] for i in output] == [i["id"] for i in added]
        return
    assert len(done) == len(added), "every item is done"
    assert output == [done[i] for i in range(len(done))]


def same(whole: Any, streamed: Any, exact: bool = True) -> None:
    """One answer, whole and streamed: the same items (types, texts, calls), status and usage.
    Not ``exact``: the model wrote text after a call, which the stream keeps in its place and a
    whole answer puts in its one message first: the same text and calls."""
    if exact:
        assert items(whole) == items(streamed)
    else:
        for kind in ("reasoning", "function_call", "custom_tool_call"):
            assert [p for t, p in items(whole) if t == kind] == [p for t, p in items(streamed) if t == kind]
        assert "".join(p for t, p in items(whole) if t == "message") == \
            "".join(p for t, p in items(streamed) if t == "message")
    assert (whole.status, whole.incomplete_details) == (streamed.status, streamed.incomplete_details)
    assert whole.usage.model_dump() == streamed.usage.model_dump()
    for item in streamed.output:
        assert item.id.startswith({"reasoning": "rs_", "message": "msg_", "function_call": "fc_",
                                   "custom_tool_call": "ctc_"}[item.type])
    for answer in (whole, streamed):  # the text the limit cut is incomplete, the rest complete
        cut = [i.type for i in answer.output if i.status == "incomplete" and i.type in ("message", "reasoning")]
        assert len(cut) == (answer.status == "incomplete" and bool(cut))
        assert all(i.status in ("completed", "incomplete") for i in answer.output)
        assert answer.status == "incomplete" or all(i.status == "completed" for i in answer.output)
    if exact:
        assert [i.status for i in whole.output] == [i.status for i in streamed.output]


# ---------------------------------------------------------------- the tool loop


@pytest.mark.parametrize("chunk", [1, 5])
@pytest.mark.parametrize("replay", ["full_input", "previous_response_id"])
@pytest.mark.parametrize("kind", KINDS)
def test_two_turn_loop_streamed(stacks: Any, kind: str, replay: str, chunk: int) -> None:
    s = stacks(agent(kind, chunk), tool_call_parser=parser(kind))
    first, _ = stream(s)
    assert items(first) == [("reasoning", THOUGHT), ("message", "Let me check."),
                            ("function_call", ("get_weather", PARIS, None))]
    same(create(s), first)
    call = first.output[2]
    assert call.id.startswith("fc_") and call.call_id.startswith("call_") and call.id != call.call_id
    assert s.upstream.requests[-2]["stream_options"] == {"include_usage": True}
    assert s.upstream.requests[-2]["stream"] is True and "stream" not in s.upstream.requests[-1]
    result = {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}
    if replay == "full_input":
        second, _ = stream(s, [{"role": "user", "content": USER}, *first.output, result])
    else:
        second, _ = stream(s, [result], previous_response_id=first.id)
    assert items(second) == [("message", FINAL)] and second.status == "completed"
    sent = s.upstream.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["reasoning_content"] == THOUGHT and sent[1]["content"] == "Let me check."
    upstream_id(kind, call, sent[1]["tool_calls"][0]["id"])
    assert sent[2] == {"role": "tool", "tool_call_id": sent[1]["tool_calls"][0]["id"], "content": "sunny"}
    check_events(sse(s, body(input=[{"role": "user", "content": USER}])))


def test_a_namespaced_custom_tool_loop_streamed(stacks: Any) -> None:
    space = {"type": "namespace", "name": "fs", "tools": [
        {**apply_patch(), "name": "patch"},
        {"type": "function", "name": "read",
         "parameters": {"type": "object", "properties": {"p": {"type": "string"}}}}]}

    def script(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply(content="Done.")
        return Reply(content=written("hermes", "patch", {"input": PATCHES["tricky"]})
                     + written("hermes", "read", {"p": "x"}), chunk=3)

    s = stacks(script)
    first, _ = stream(s, tools=[space])
    assert items(first) == [("custom_tool_call", ("patch", PATCHES["tricky"])),
                            ("function_call", ("read", {"p": "x"}, "fs"))]
    assert [o.namespace for o in first.output] == ["fs", "fs"]
    check_events(sse(s, body(tools=[space])))
    results = [{"type": f"{o.type}_output", "call_id": o.call_id, "output": o.name} for o in first.output]
    second, _ = stream(s, results, previous_response_id=first.id, tools=[space])
    assert items(second) == [("message", "Done.")]
    sent = s.upstream.requests[-1]["messages"]
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in sent[1]["tool_calls"]] == [
        ("patch", {"input": PATCHES["tricky"]}), ("read", {"p": "x"})]
    assert [m["tool_call_id"] for m in sent[2:]] == [c["id"] for c in sent[1]["tool_calls"]]


def test_a_streamed_response_is_stored(stacks: Any) -> None:
    s = stacks(lambda b: Reply(content="streamed and kept", chunk=3))
    streamed, _ = stream(s)
    with s.client() as c:
        assert items(c.responses.retrieve(streamed.id)) == [("message", "streamed and kept")]
    unstored, _ = stream(s, store=False)
    with s.client() as c, pytest.raises(openai.NotFoundError):
        c.responses.retrieve(unstored.id)


# ---------------------------------------------------------------- streamed == whole


def custom(dialect: str, patch: str = "tricky", key: str = "input") -> str:
    return "Patching.\n" + written(dialect, "apply_patch", {key: PATCHES[patch]})


NATIVE = [native("read_file", {"path": "/a"}, "call_n0"), native("get_weather", {"city": "Oslo"}, "call_n1")]
SPACE = {"type": "namespace", "name": "agents", "tools": [
    {"type": "function", "name": "spawn",
     "parameters": {"type": "object", "properties": {"task": {"type": "string"}}}}]}
PARALLEL = [("read_file", {"path": "a.txt"}), ("get_weather", {"city": "Oslo", "days": 2})]
# Items follow one another: the Responses API never has two open at once.
CASES: list[tuple[str, str, Reply, list[dict[str, Any]]]] = [  # (id, parser, reply, tools)
    ("text", "hermes", Reply(content="Just words, with <b> and x < y."), TOOLS),
    ("empty", "hermes", Reply(content=""), TOOLS),
    ("reasoning_only", "hermes", Reply(content="", reasoning="Hmm."), TOOLS),
    ("no_tools", "hermes", Reply(content=written("hermes", "read_file", {"path": "a"})), []),
    ("loop_hermes", "hermes", answer("hermes", [("get_weather", PARIS)]), TOOLS),
    ("loop_qwen", "qwen3_coder", answer("qwen3_coder", [("get_weather", PARIS)]), TOOLS),
    ("parallel_hermes", "hermes", answer("hermes", PARALLEL), TOOLS),
    ("parallel_qwen", "qwen3_coder", answer("qwen3_coder", PARALLEL), TOOLS),
    ("parallel_native", "hermes", answer("native", PARALLEL), TOOLS),
    ("unknown_tool", "hermes", Reply(content=written("hermes", "delete_everything", {})), TOOLS),
    ("markup_talk", "hermes", Reply(content="Compare: a <b> c, and <tool_call> is how I would call."), TOOLS),
    ("custom_hermes", "hermes", Reply(content=custom("hermes"), chunk=3), [WEATHER, apply_patch()]),
    ("custom_qwen", "qwen3_coder", Reply(content=custom("qwen3_coder"), chunk=3), [WEATHER, apply_patch()]),
    ("custom_renamed", "qwen3_coder", Reply(content=custom("qwen3_coder", "add", "patch")), [apply_patch()]),
    ("custom_no_newline", "hermes", Reply(content=custom("hermes", "no_final_newline")), [apply_patch()]),
    ("custom_then_function", "hermes",
     Reply(content=custom("hermes") + written("hermes", "get_weather", {"city": "Rome"})), [WEATHER, apply_patch()]),
    ("custom_invalid", "hermes", Reply(content=written("hermes", "apply_patch", {"input": "rm -rf /"})),
     [apply_patch()]),
    ("custom_native", "hermes", Reply(content="", tool_calls=[native("apply_patch", {"input": PATCHES["tricky"]})],
                                      finish_reason="tool_calls", chunk=6), [apply_patch()]),
    ("namespace", "hermes", Reply(content=written("hermes", "spawn", {"task": "x"})), [SPACE]),
    ("cut_text", "hermes", Reply(content="A long answer that was cut", finish_reason="length"), TOOLS),
    *[(f"native_{q or 'plain'}", "hermes", Reply(content="", tool_calls=NATIVE, quirk=q, finish_reason="tool_calls"),
       TOOLS) for q in ("", "whole", "id_every_chunk", "no_index", "object_arguments")],
]


@pytest.mark.parametrize("dialect, reply, tools", [
    pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_streamed_equals_whole(stacks: Any, dialect: str, reply: Reply, tools: list[dict[str, Any]]) -> None:
    s = stacks(lambda b: reply, tool_call_parser=dialect)
    kw: dict[str, Any] = {"tools": tools} if tools else {"tools": []}
    streamed, _ = stream(s, **kw)
    same(create(s, **kw), streamed)
    last = "response.completed" if reply.finish_reason != "length" else "response.incomplete"
    check_events(sse(s, body(**kw)), last)


def test_text_after_a_call_streams_in_its_place(stacks: Any) -> None:
    text = "First. " + written("hermes", "read_file", {"path": "x"}) + " Then this."
    s = stacks(lambda b: Reply(content=text, chunk=3))
    streamed, _ = stream(s)
    assert [t for t, _ in items(streamed)] == ["message", "function_call", "message"], "the model's order"
    same(create(s), streamed, exact=False)
    check_events(sse(s, body()))


# ---------------------------------------------------------------- the events


def test_events_follow_the_api_and_each_call_comes_whole(stacks: Any) -> None:
    long_path = "/src/" + "deep/" * 40 + "file.py"
    text = "Reading.\n" + written("hermes", "read_file", {"path": long_path}) + written(
        "hermes", "apply_patch", {"input": PATCHES["tricky"]})
    s = stacks(lambda b: Reply(content=text, reasoning="Think " * 20, chunk=5))
    events = sse(s, body(tools=[{**READ, "strict": False}, apply_patch()]))
    check_events(events)
    kinds = [e["type"] for e in events]
    assert kinds.count("response.reasoning_text.delta") > 5 and kinds.count("response.output_text.delta") > 1
    for delta, item in (("response.function_call_arguments.delta", "function_call"),
                        ("response.custom_tool_call_input.delta", "custom_tool_call")):
        at = kinds.index("response.output_item.added", kinds.index(delta) - 1)
        assert events[at]["item"]["type"] == item, "added, then at once its one delta"
        assert kinds[at:at + 4] == ["response.output_item.added", delta, delta.replace(".delta", ".done"),
                                    "response.output_item.done"] and kinds.count(delta) == 1
    [arguments] = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    [patch] = [e["delta"] for e in events if e["type"] == "response.custom_tool_call_input.delta"]
    assert json.loads(arguments) == {"path": long_path} and patch == PATCHES["tricky"]
    assert events[-1]["response"]["status"] == "completed"


def test_events_follow_the_api_and_calls_stream_as_written(stacks: Any) -> None:
    long_path = "/src/" + "deep/" * 40 + "file.py"
    text = "Reading.\n" + written("hermes", "read_file", {"path": long_path}) + written(
        "hermes", "apply_patch", {"input": PATCHES["tricky"]})
    s = stacks(lambda b: Reply(content=text, reasoning="Think " * 20, chunk=5), stream_arguments=True)
    loose = [{**READ, "strict": False}, apply_patch()]  # a strict call is held until it is checked
    events = sse(s, body(tools=loose, metadata={"m": "1"}))
    check_events(events)
    added = [e["item"] for e in events if e["type"] == "response.output_item.added"]
    assert [i["type"] for i in added] == ["reasoning", "message", "function_call", "custom_tool_call"]
    assert added[2]["arguments"] == "" and added[2]["name"] == "read_file" and added[2]["id"].startswith("fc_")
    assert added[3]["input"] == "" and added[3]["name"] == "apply_patch" and added[3]["id"].startswith("ctc_")
    kinds = [e["type"] for e in events]
    assert kinds.count("response.function_call_arguments.delta") > 20, "streamed, not sent at the end"
    assert kinds.count("response.custom_tool_call_input.delta") > 20
    assert kinds.count("response.reasoning_text.delta") > 5
    arguments = "".join(e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta")
    assert json.loads(arguments) == {"path": long_path}
    done = [e for e in events if e["type"] == "response.function_call_arguments.done"]
    assert done[0]["name"] == "read_file"
    final = events[-1]["response"]
    assert final["status"] == "completed" and final["metadata"] == {"m": "1"} and final["usage"]["total_tokens"] == 30
    assert events[0]["response"]["metadata"] == {"m": "1"}


@pytest.mark.parametrize("stream_arguments", [False, True])
@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.parametrize("patch", sorted(PATCHES))
def test_custom_input_streams_as_written(stacks: Any, writer: str, patch: str, stream_arguments: bool) -> None:
    dialect, ascii_only = WRITERS[writer]
    text = PATCHES[patch]
    call = written(dialect, "apply_patch", {"input": text}, ascii_only)
    s = stacks(lambda b: Reply(content=call, chunk=2), tool_call_parser=dialect, stream_arguments=stream_arguments)
    streamed, events = stream(s, tools=[apply_patch()])
    deltas = [e.delta for e in events if e.type == "response.custom_tool_call_input.delta"]
    [done] = [e.input for e in events if e.type == "response.custom_tool_call_input.done"]
    assert "".join(deltas) == done == streamed.output[0].input == text
    if stream_arguments:
        # A call block is held until it passes HOLD_BLOCK characters (HOLD_TAGGED_BLOCK for XML's
        # longer tags): a short one comes whole.
        held = HOLD_BLOCK if dialect == "hermes" else HOLD_TAGGED_BLOCK
        assert len(deltas) >= max(1, (len(text) - held) // 8), "as the model writes it"
    else:
        assert deltas == [text], "whole, in one delta"
    assert items(streamed) == [("custom_tool_call", ("apply_patch", text))]
    check_events(sse(s, body(tools=[apply_patch()])))


@pytest.mark.parametrize("arguments", [
    {"cmd": "ls\n"},
    {"input": "ls\n", "reason": "why"},
    pytest.param({"reason": "why", "input": "ls\n"}),
    pytest.param({"input": 123}),
    pytest.param({"input": {"k": "v"}}),
])
def test_odd_custom_arguments_stream_as_they_are_whole(stacks: Any, arguments: dict[str, Any]) -> None:
    s = stacks(lambda b: Reply(content=written("hermes", "shell", arguments), chunk=3))
    tools = [{"type": "custom", "name": "shell"}]
    check_events(sse(s, body(tools=tools)))
    streamed, _ = stream(s, tools=tools)
    same(create(s, tools=tools), streamed)


@pytest.mark.parametrize("strict", [True, pytest.param(False)])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_call_cut_by_the_limit_streamed(stacks: Any, dialect: str, strict: bool) -> None:
    whole = written(dialect, "get_weather", {"city": "Paris, France", "days": 3})
    cut = "Reading.\n" + whole[:whole.index("ris, France")]
    s = stacks(lambda b: Reply(content=cut, finish_reason="length", chunk=4), tool_call_parser=dialect)
    tools = [{**WEATHER, "strict": strict}]
    streamed, events = stream(s, tools=tools)
    assert streamed.status == "incomplete" and streamed.incomplete_details.reason == "max_output_tokens"
    assert not [o for o in streamed.output if o.type == "function_call"], "a cut call never reaches the client"
    assert not [e for e in events if e.type == "response.output_item.added" and e.item.type == "function_call"]
    assert not [e for e in events if e.type == "response.output_item.done"
                and e.item.type == "function_call" and e.item.status == "completed"]
    assert "".join(p for t, p in items(streamed) if t == "message") == cut, "what the model wrote is kept"
    check_events(sse(s, body(tools=tools)), "response.incomplete")


# ---------------------------------------------------------------- failures


def failed(events: list[dict[str, Any]], code: str) -> dict[str, Any]:
    """The stream ended with an ``error`` event and ``response.failed`` carrying ``code``."""
    check_events(events, "response.failed")
    error, last = events[-2], events[-1]
    assert error["type"] == "error" and error["code"] == code and error["message"]
    response = last["response"]
    assert response["status"] == "failed" and response["error"]["code"] == code
    return response


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_strict_call_with_bad_arguments_fails_the_stream(stacks: Any, dialect: str) -> None:
    s = stacks(lambda b: Reply(content="Checking. " + written(dialect, "get_weather", {"days": 3}), chunk=4),
               tool_call_parser=dialect)
    response = failed(sse(s, body()), "invalid_tool_arguments")
    assert "get_weather" in response["error"]["message"]
    assert not [o for o in response["output"] if o["type"] == "function_call"], "the call was held, never sent"
    _, seen = stream(s)
    assert seen[-1].type == "response.failed" and seen[-2].type == "error"


def test_a_custom_call_that_breaks_the_grammar_is_streamed_and_counted(stacks: Any) -> None:
    s = stacks(lambda b: Reply(content=written("hermes", "apply_patch", {"input": "rm -rf /\n"}), chunk=3))
    before = metric(s, "toolbridge_invalid_arguments_total")
    streamed, _ = stream(s, tools=[apply_patch()])
    assert items(streamed) == [("custom_tool_call", ("apply_patch", "rm -rf /\n"))]
    assert metric(s, "toolbridge_invalid_arguments_total") == before + 1


def test_a_custom_call_that_breaks_the_grammar_fails_a_rejecting_stream(stacks: Any) -> None:
    s = stacks(lambda b: Reply(content=written("hermes", "apply_patch", {"input": "rm -rf /\n"})),
               on_invalid="reject")
    failed(sse(s, body(tools=[apply_patch()])), "invalid_tool_arguments")


def test_a_stream_that_breaks_after_it_began_ends_with_error_and_failed(stacks: Any) -> None:
    s = stacks(lambda b: Reply(content="a long answer that is cut", chunk=2, cut_after=4))
    response = failed(sse(s, body()), "upstream_error")
    assert response["output"][0]["type"] == "message"
    _, seen = stream(s)
    assert [e.type for e in seen[-2:]] == ["error", "response.failed"]


def test_an_error_before_the_stream_keeps_its_status(stacks: Any) -> None:
    s = stacks(lambda b: Reply(status=500, error="the model crashed"))
    with pytest.raises(openai.InternalServerError) as crashed:
        stream(s)
    assert crashed.value.status_code == 500 and crashed.value.body["message"] == "the model crashed"
    with Stack(lambda b: Reply(content="ok"), tool_call_parser="hermes", upstream="http://127.0.0.1:9/v1") as down:
        with pytest.raises(openai.APIStatusError) as unreachable:
            stream(down)
        assert unreachable.value.status_code == 502


@pytest.mark.parametrize("name", ["codex-1-first-turn", "codex-2-first-turn-known-model"])
def test_codexs_own_streamed_request(stacks: Any, name: str) -> None:
    path = CAPTURES / f"{name}.json"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    capture = json.loads(path.read_text())["body"]
    patch = name.startswith("codex-2")
    call = written("qwen3_coder", "apply_patch", {"input": PATCHES["tricky"]}) if patch else \
        written("qwen3_coder", "exec_command", {"cmd": "cat notes.txt"})
    s = stacks(lambda b: Reply(content=call, reasoning="Do it.", chunk=3), tool_call_parser="qwen3_coder")
    events = sse(s, capture)
    check_events(events)
    output = events[-1]["response"]["output"]
    assert output[0]["type"] == "reasoning" and output[0]["encrypted_content"].startswith("tb1.")
    if patch:
        assert output[1]["type"] == "custom_tool_call" and output[1]["input"] == PATCHES["tricky"]
    else:
        assert output[1]["type"] == "function_call" and json.loads(output[1]["arguments"]) == {"cmd": "cat notes.txt"}


def test_a_cut_that_ends_in_whitespace_keeps_it_streamed(stacks: Any) -> None:
    cut = "Reading.\n" + written("hermes", "get_weather", {"city": "Paris, France"})[:60].rstrip() + " "
    s = stacks(lambda b: Reply(content=cut, finish_reason="length", chunk=4))
    streamed, _ = stream(s)
    same(create(s), streamed)
    assert items(streamed) == [("message", cut)]


def test_reasoning_is_a_summary_when_one_is_asked_for(stacks: Any) -> None:
    s = stacks(agent("hermes", chunk=3))
    streamed, events = stream(s, reasoning={"summary": "auto"})
    whole = create(s, reasoning={"summary": "auto"})
    same(whole, streamed)
    for response in (whole, streamed):
        reasoning = response.output[0]
        assert [p.text for p in reasoning.summary] == [THOUGHT] and not reasoning.content
    deltas = [e.delta for e in events if e.type == "response.reasoning_summary_text.delta"]
    assert len(deltas) > 1 and "".join(deltas) == THOUGHT
    assert not [e for e in events if e.type.startswith("response.reasoning_text")]
    check_events(sse(s, body(reasoning={"summary": "auto"})))
    call = streamed.output[2]
    given = {"type": "reasoning", "id": "rs_x", "summary": [{"type": "summary_text", "text": THOUGHT}]}
    create(s, [{"role": "user", "content": USER}, given, streamed.output[1], call,
               {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}])
    assert s.upstream.requests[-1]["messages"][1]["reasoning_content"] == THOUGHT
