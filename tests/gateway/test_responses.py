"""The OpenAI Responses front, whole answers, end to end: the official ``openai`` SDK ->
toolbridge -> a replaying upstream, over HTTP on loopback. The SDK's own parsing is the judge;
what the upstream was sent is read from the replaying upstream. The request's translation is
also checked in-process, field by field (``responses_turn``)."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import written
from tests.test_freeform import GRAMMAR  # a Codex-like apply_patch grammar, used when the capture is absent
from toolbridge.gateway.fronts.dropped import Dropped
from toolbridge.gateway.fronts.responses import request as responses_request
from toolbridge.gateway.fronts.responses.request import responses_turn
from toolbridge.gateway.fronts.responses.sealed import Sealer
from toolbridge.gateway.state.memory import ResponseStore
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply
from toolbridge.gateway.turn import RequestError

openai = pytest.importorskip("openai")

WEATHER = {"type": "function", "name": "get_weather", "description": "The weather in a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                          "required": ["city"]}}
READ = {"type": "function", "name": "read_file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
TOOLS = [WEATHER, READ]
PARIS = {"city": "Paris", "days": 3}
USER = "Weather in Paris?"
FINAL = "It will be sunny in Paris for 3 days: 20 < t < 25 degrees."
THOUGHT = "The user wants Paris; get_weather, then."
NATIVE_ID = "functions.get_weather:0"  # an upstream's own id, repeated every turn by some servers
DIALECTS = ("hermes", "qwen3_coder")
KINDS = (*DIALECTS, "native")  # how the upstream gives its calls: as text in a dialect, or native
CAPTURES = Path(__file__).resolve().parents[3] / "shared" / "captures"
PATCHES = {
    "add": "*** Begin Patch\n*** Add File: hello.txt\n+Hello, world!\n*** End Patch\n",
    "tricky": ('*** Begin Patch\n*** Update File: src/app "v2".py\n@@ def main():\n'
               '-    print("a\\tb")\n+    data = {"a": [1, 2]}\n+    path = "C:\\\\tmp\\\\x\\n"\n'
               "+    # </tool_call> <tool_call> caf\u00e9 \u4e2d\u6587 \U0001F600 \u2028\n"
               "+\t'single' \"double\" `back`\n*** End Patch\n"),
    "no_final_newline": "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch",
}


def codex_tool(name: str) -> dict[str, Any] | None:
    """A tool of the Codex capture that offers apply_patch (None when the capture is absent)."""
    path = CAPTURES / "codex-2-first-turn-known-model.json"
    if not path.exists():
        return None
    tools = json.loads(path.read_text())["body"]["tools"]
    return next(t for t in tools if t.get("name") == name)


def apply_patch(grammar: str = "own") -> dict[str, Any]:
    """The custom apply_patch tool: Codex's own (skipped when its capture is absent) or ours."""
    if grammar == "codex":
        tool = codex_tool("apply_patch")
        if tool is None:
            pytest.skip("the Codex capture is absent")
        return tool
    return {"type": "custom", "name": "apply_patch", "description": "Edit files with a patch.",
            "format": {"type": "grammar", "syntax": "lark", "definition": GRAMMAR}}


def native(name: str, arguments: dict[str, Any], call_id: str = NATIVE_ID) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def answer(kind: str, calls: list[tuple[str, dict[str, Any]]], text: str = "Let me check.",
           reasoning: str | None = THOUGHT, chunk: int = 4, **kw: Any) -> Reply:
    """A reply with ``calls``, written in a dialect or sent native."""
    if kind == "native":
        tools = [native(n, a, NATIVE_ID if i == 0 else f"functions.{n}:{i}") for i, (n, a) in enumerate(calls)]
        return Reply(content=text, reasoning=reasoning, tool_calls=tools or None, chunk=chunk,
                     finish_reason="tool_calls" if tools else "stop", **kw)
    body = "".join("\n" + written(kind, n, a) for n, a in calls)
    return Reply(content=text + body, reasoning=reasoning, chunk=chunk, **kw)


def agent(kind: str, chunk: int = 4) -> Callable[[dict[str, Any]], Reply]:
    """An upstream model: thinks, says a word and calls get_weather; answers once it has the result."""
    def script(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply(content=FINAL, chunk=chunk)
        return answer(kind, [("get_weather", PARIS)], chunk=chunk)
    return script


@pytest.fixture(scope="module")
def stacks() -> Iterator[Callable[..., Stack]]:
    """``stacks(script, **config)``: a running gateway and upstream with that config (one per
    config for the module, started once), now answering with ``script``."""
    opened: dict[tuple[tuple[str, Any], ...], Stack] = {}

    def get(script: Callable[[dict[str, Any]], Reply], **config: Any) -> Stack:
        config.setdefault("tool_call_parser", "hermes")
        key = tuple(sorted(config.items()))
        if key not in opened:
            opened[key] = Stack(script, **config).__enter__()
        s = opened[key]
        s.upstream.script = script
        return s

    yield get
    for s in opened.values():
        s.__exit__(None, None, None)


def parser(kind: str) -> str:
    return "hermes" if kind == "native" else kind


def create(s: Stack, input: Any = USER, **kw: Any) -> Any:
    kw.setdefault("tools", TOOLS)
    with s.client() as c:
        return c.responses.create(model="m", input=input, **kw)


def create_raw(s: Stack, input: Any = USER, **kw: Any) -> tuple[dict[str, str], Any]:
    """The response and its headers (``x-toolbridge-calls``)."""
    kw.setdefault("tools", TOOLS)
    with s.client() as c:
        raw = c.responses.with_raw_response.create(model="m", input=input, **kw)
        return dict(raw.headers), raw.parse()


def items(response: Any) -> list[tuple[str, Any]]:
    """A response's output as (type, payload) pairs: reasoning and message texts, a function
    call's (name, arguments decoded, namespace), a custom call's (name, input)."""
    out: list[tuple[str, Any]] = []
    for item in response.output:
        if item.type == "reasoning":
            out.append((item.type, "".join(p.text for p in item.content or item.summary or ())))
        elif item.type == "message":
            out.append((item.type, "".join(p.text for p in item.content)))
        elif item.type == "function_call":
            out.append((item.type, (item.name, decoded(item.arguments), item.namespace)))
        else:
            out.append((item.type, (item.name, item.input)))
    return out


def decoded(arguments: str) -> Any:
    """A call's arguments decoded (as they are when they are not JSON: a call cut short)."""
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return arguments


def raw(s: Stack, path: str, body: Any, method: str = "POST", **headers: str) -> tuple[int, Any]:
    """A request without the SDK (and without any credential unless given in ``headers``):
    status and decoded body (or text)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(s.url.removesuffix("/v1") + path, data=data, method=method,
                                     headers={"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=20) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode()
    try:
        return status, json.loads(text)
    except json.JSONDecodeError:
        return status, text


def metric(s: Stack, name: str) -> int:
    _, text = raw(s, "/metrics", None, "GET")
    return sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name))


def upstream_id(kind: str, call: Any, sent_id: str) -> None:
    """The upstream was sent back its own call id, which the client's call_id carries."""
    if kind == "native":
        assert sent_id == NATIVE_ID
    else:
        assert call.call_id.endswith("r" + sent_id) and not sent_id.startswith("fc_")


# ---------------------------------------------------------------- the tool loop


@pytest.mark.parametrize("replay", ["full_input", "previous_response_id"])
@pytest.mark.parametrize("kind", KINDS)
def test_two_turn_tool_loop(stacks: Any, kind: str, replay: str) -> None:
    s = stacks(agent(kind), tool_call_parser=parser(kind))
    first = create(s)
    assert items(first) == [("reasoning", THOUGHT), ("message", "Let me check."),
                            ("function_call", ("get_weather", PARIS, None))]
    assert first.status == "completed" and first.incomplete_details is None and first.error is None
    assert first.id.startswith("resp_") and first.object == "response" and first.model == "m"
    call = first.output[2]
    assert call.id.startswith("fc_") and call.call_id.startswith("call_") and call.id != call.call_id
    assert call.status == "completed" and first.output[1].id.startswith("msg_")
    assert first.output[0].id.startswith("rs_") and first.output[0].encrypted_content is None
    assert first.usage.input_tokens == 10 and first.usage.output_tokens == 20 and first.usage.total_tokens == 30
    offered = s.upstream.requests[-1]
    assert offered["messages"] == [{"role": "user", "content": USER}]
    assert offered["tools"][0] == {"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city.", "parameters": WEATHER["parameters"],
        "strict": True}}
    result = {"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 20-25 C"}
    if replay == "full_input":
        second = create(s, [{"role": "user", "content": USER}, *first.output, result])
    else:
        second = create(s, [result], previous_response_id=first.id)
        assert second.previous_response_id == first.id
    assert items(second) == [("message", FINAL)] and second.status == "completed"
    sent = s.upstream.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assistant, tool = sent[1], sent[2]
    assert assistant["content"] == "Let me check." and assistant["reasoning_content"] == THOUGHT
    [upstream_call] = assistant["tool_calls"]
    assert upstream_call["type"] == "function" and upstream_call["function"]["name"] == "get_weather"
    assert json.loads(upstream_call["function"]["arguments"]) == PARIS
    upstream_id(kind, call, upstream_call["id"])
    assert tool == {"role": "tool", "tool_call_id": upstream_call["id"], "content": "sunny, 20-25 C"}


def test_call_ids_are_unique_across_turns_though_the_upstream_repeats_its_own(stacks: Any) -> None:
    s = stacks(agent("native"))
    one, two = create(s), create(s)
    assert one.output[2].call_id != two.output[2].call_id and one.output[2].id != two.output[2].id


@pytest.mark.parametrize("kind", KINDS)
def test_parallel_calls_come_after_the_reasoning_and_the_message(stacks: Any, kind: str) -> None:
    calls = [("read_file", {"path": "a.txt"}), ("get_weather", {"city": "Oslo"})]
    s = stacks(lambda b: answer(kind, calls, text="Two things."), tool_call_parser=parser(kind))
    got = create(s)
    assert items(got) == [("reasoning", THOUGHT), ("message", "Two things."),
                          ("function_call", ("read_file", {"path": "a.txt"}, None)),
                          ("function_call", ("get_weather", {"city": "Oslo"}, None))]
    ids = [o.id for o in got.output] + [o.call_id for o in got.output[2:]]
    assert len(set(ids)) == len(ids)
    history = [{"role": "user", "content": USER}, *got.output,
               *({"type": "function_call_output", "call_id": o.call_id, "output": o.name} for o in got.output[2:])]
    s.upstream.script = lambda b: Reply(content="done")
    assert items(create(s, history)) == [("message", "done")]
    sent = s.upstream.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool"]
    assert [c["id"] for c in sent[1]["tool_calls"]] == [m["tool_call_id"] for m in sent[2:]]
    assert [m["content"] for m in sent[2:]] == ["read_file", "get_weather"]


def test_text_after_a_call_goes_in_the_message_before_it(stacks: Any) -> None:
    text = "First. " + written("hermes", "read_file", {"path": "x"}) + " Then this."
    s = stacks(lambda b: Reply(content=text))
    got = create(s)
    assert [t for t, _ in items(got)] == ["message", "function_call"]
    assert "First." in items(got)[0][1] and "Then this." in items(got)[0][1]


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_call_cut_by_the_limit_is_incomplete(stacks: Any, dialect: str, strict: bool) -> None:
    whole = written(dialect, "get_weather", {"city": "Paris, France", "days": 3})
    cut = "Reading.\n" + whole[:whole.index("ris, France")]
    s = stacks(lambda b: Reply(content=cut, finish_reason="length"), tool_call_parser=dialect)
    got = create(s, tools=[{**WEATHER, "strict": strict}], max_output_tokens=30)
    assert got.status == "incomplete" and got.incomplete_details.reason == "max_output_tokens"
    assert not [o for o in got.output if o.type == "function_call" and o.status == "completed"]
    assert "".join(p for t, p in items(got) if t == "message") == cut, "what the model wrote is kept"
    assert s.upstream.requests[-1]["max_tokens"] == 30


def test_a_call_that_ended_before_the_cut_is_kept(stacks: Any) -> None:
    text = written("hermes", "read_file", {"path": "a"}) + "\n" + written("hermes", "read_file", {"path": "b"})[:30]
    s = stacks(lambda b: Reply(content=text, finish_reason="length"))
    got = create(s)
    assert got.status == "incomplete"
    assert [p for t, p in items(got) if t == "function_call"] == [("read_file", {"path": "a"}, None)]


# ---------------------------------------------------------------- freeform (custom) tools


WRITERS = {  # how the model writes a custom call: (dialect, JSON escapes non-ASCII)
    "hermes": ("hermes", True), "hermes_utf8": ("hermes", False), "qwen3_coder": ("qwen3_coder", True)}


@pytest.mark.parametrize("patch", sorted(PATCHES))
@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.parametrize("grammar", ["codex", "own"])
def test_a_custom_call_gives_the_patch_byte_for_byte(stacks: Any, grammar: str, writer: str, patch: str) -> None:
    dialect, ascii_only = WRITERS[writer]
    text = PATCHES[patch]
    call = written(dialect, "apply_patch", {"input": text}, ascii_only)
    s = stacks(lambda b: Reply(content="Patching.\n" + call, chunk=7), tool_call_parser=dialect)
    tool = apply_patch(grammar)
    headers, got = create_raw(s, tools=[WEATHER, tool])
    assert items(got) == [("message", "Patching."), ("custom_tool_call", ("apply_patch", text))]
    item = got.output[1]
    assert item.input == text and item.id.startswith("ctc_") and item.call_id.startswith("call_")
    assert item.status == "completed"
    assert "invalid=0" in headers["x-toolbridge-calls"] and "content=1" in headers["x-toolbridge-calls"]
    offered = s.upstream.requests[-1]["tools"][1]["function"]
    assert offered["name"] == "apply_patch"
    assert offered["parameters"]["required"] == ["input"]
    assert offered["parameters"]["properties"]["input"]["type"] == "string"
    assert "lark grammar" in offered["description"] and "begin_patch" in offered["description"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_custom_call_may_name_its_argument_otherwise(stacks: Any, dialect: str) -> None:
    text = PATCHES["tricky"]
    s = stacks(lambda b: Reply(content=written(dialect, "apply_patch", {"patch": text})), tool_call_parser=dialect)
    headers, got = create_raw(s, tools=[apply_patch()])
    assert items(got) == [("custom_tool_call", ("apply_patch", text))]
    assert "invalid=0" in headers["x-toolbridge-calls"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_custom_call_that_breaks_the_grammar_is_counted_or_refused(stacks: Any, dialect: str) -> None:
    bad = "*** Begin Patch\nthis is not a hunk\n*** End Patch\n"
    call = written(dialect, "apply_patch", {"input": bad})
    s = stacks(lambda b: Reply(content=call), tool_call_parser=dialect)
    before = metric(s, "toolbridge_invalid_arguments_total")
    headers, got = create_raw(s, tools=[apply_patch()])
    assert items(got) == [("custom_tool_call", ("apply_patch", bad))], "a tool's default: passed on"
    assert "invalid=1" in headers["x-toolbridge-calls"]
    assert metric(s, "toolbridge_invalid_arguments_total") == before + 1
    strict = stacks(lambda b: Reply(content=call), tool_call_parser=dialect, on_invalid="reject")
    with pytest.raises(openai.APIStatusError) as refused:
        create(strict, tools=[apply_patch()])
    assert refused.value.status_code == 502 and refused.value.body["code"] == "invalid_tool_arguments"
    assert "apply_patch" in refused.value.body["message"] and "grammar" in refused.value.body["message"]


@pytest.mark.parametrize("fmt", [None, {"type": "text"}])
def test_a_custom_tool_without_a_grammar_takes_any_text(stacks: Any, fmt: Any) -> None:
    text = "ls -la | grep '\"x\"'\n{not: json}\n"
    tool = {"type": "custom", "name": "shell", **({"format": fmt} if fmt else {})}
    s = stacks(lambda b: Reply(content=written("hermes", "shell", {"input": text})))
    headers, got = create_raw(s, tools=[tool])
    assert items(got) == [("custom_tool_call", ("shell", text))] and "invalid=0" in headers["x-toolbridge-calls"]
    assert "description" not in s.upstream.requests[-1]["tools"][0]["function"]


@pytest.mark.parametrize("replay", ["full_input", "previous_response_id"])
def test_a_custom_call_goes_back_upstream_as_its_function(stacks: Any, replay: str) -> None:
    text = PATCHES["tricky"]

    def script(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply(content="Patched.")
        return Reply(content=written("qwen3_coder", "apply_patch", {"input": text}))

    s = stacks(script, tool_call_parser="qwen3_coder")
    first = create(s, tools=[apply_patch()])
    call = first.output[0]
    result = {"type": "custom_tool_call_output", "call_id": call.call_id, "output": "Done!"}
    if replay == "full_input":
        second = create(s, [{"role": "user", "content": USER}, call, result], tools=[apply_patch()])
    else:
        second = create(s, [result], previous_response_id=first.id, tools=[apply_patch()])
    assert items(second) == [("message", "Patched.")]
    sent = s.upstream.requests[-1]["messages"]
    [upstream_call] = sent[1]["tool_calls"]
    assert upstream_call["function"]["name"] == "apply_patch"
    assert json.loads(upstream_call["function"]["arguments"]) == {"input": text}
    assert sent[2] == {"role": "tool", "tool_call_id": upstream_call["id"], "content": "Done!"}
    assert call.call_id.endswith("r" + upstream_call["id"])


# ---------------------------------------------------------------- strict function tools


STRICT_CASES = [  # (the tool's strict field, the model's arguments, refused)
    (None, {"city": "Paris"}, False),
    (None, {"days": 3}, True),  # strict by default in this API: a required member is missing
    (None, {"city": "Paris", "days": "three"}, True),  # not an integer, nor one in a string
    (True, {"days": 3}, True),
    (False, {"days": 3}, False),
    (False, {"city": "Paris", "days": "three"}, False),
]


@pytest.mark.parametrize("strict, arguments, refused", STRICT_CASES)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_function_tools_are_strict_unless_they_say_not(stacks: Any, dialect: str, strict: bool | None,
                                                        arguments: dict[str, Any], refused: bool) -> None:
    s = stacks(lambda b: Reply(content=written(dialect, "get_weather", arguments)), tool_call_parser=dialect)
    tool = WEATHER if strict is None else {**WEATHER, "strict": strict}
    if not refused:
        headers, got = create_raw(s, tools=[tool])
        [(kind, (name, _, _))] = items(got)
        assert (kind, name) == ("function_call", "get_weather")
        assert ("invalid=0" in headers["x-toolbridge-calls"]) == (arguments == {"city": "Paris"})
        return
    with pytest.raises(openai.APIStatusError) as failed:
        create(s, tools=[tool])
    assert failed.value.status_code == 502
    assert failed.value.body["code"] == "invalid_tool_arguments" and "get_weather" in failed.value.body["message"]


def test_native_calls_are_strict_too(stacks: Any) -> None:
    s = stacks(lambda b: Reply(content="", tool_calls=[native("get_weather", {"days": 2})], finish_reason="tool_calls"))
    with pytest.raises(openai.APIStatusError) as failed:
        create(s)
    assert failed.value.status_code == 502 and failed.value.body["code"] == "invalid_tool_arguments"
    got = create(s, tools=[{**WEATHER, "strict": False}])
    assert items(got) == [("function_call", ("get_weather", {"days": 2}, None))]


# ---------------------------------------------------------------- the request, in-process


def turn(body: dict[str, Any], sealer: Sealer | None = None) -> Any:
    store = ResponseStore(8, 60)
    return responses_turn({"model": "m", **body}, lambda rid: store.conversation("", rid).conversation,
                          sealer or Sealer())


@pytest.mark.parametrize("input, messages", [
    ("hi", [{"role": "user", "content": "hi"}]),
    ([{"role": "user", "content": "hi"}], [{"role": "user", "content": "hi"}]),
    ([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"},
                                                      {"type": "input_text", "text": "b"}]}],
     [{"role": "user", "content": "a\nb"}]),
    ([{"role": "user", "content": [{"type": "input_text", "text": "look:"},
                                   {"type": "input_image", "image_url": "data:image/png;base64,iVBOR", "detail": "low"},
                                   {"type": "input_image", "image_url": "http://x/y.png", "detail": "original"}]}],
     [{"role": "user", "content": [{"type": "text", "text": "look:"},
                                   {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR",
                                                                       "detail": "low"}},
                                   {"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}]),
    ([{"role": "user", "content": "q"},
      {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
       "content": [{"type": "output_text", "text": "one ", "annotations": []},
                   {"type": "output_text", "text": "two"}]}],
     [{"role": "user", "content": "q"}, {"role": "assistant", "content": "one two"}]),
    ([{"role": "developer", "content": "Be terse."}, {"role": "user", "content": "hi"},
      {"role": "system", "content": [{"type": "input_text", "text": "Late."}]}],
     [{"role": "system", "content": "Be terse.\n\nLate."}, {"role": "user", "content": "hi"}]),
    ([{"role": "user", "content": "q"},
      {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "not this"}],
       "content": [{"type": "reasoning_text", "text": "Think."}]},
      {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "A."}]},
      {"type": "function_call", "id": "fc_1", "call_id": "call_x", "name": "read_file", "arguments": '{"path": "a"}'},
      {"type": "function_call", "id": "fc_2", "call_id": "call_y", "name": "read_file", "arguments": '{"path": "b"}'},
      {"type": "function_call_output", "call_id": "call_x", "output": "A"},
      {"type": "function_call_output", "call_id": "call_y",
       "output": [{"type": "input_text", "text": "B1"}, {"type": "input_text", "text": "B2"}]},
      {"type": "reasoning", "id": "rs_2", "summary": [], "content": [{"type": "reasoning_text", "text": "More."}]},
      {"type": "message", "role": "assistant", "content": "Done."}],
     [{"role": "user", "content": "q"},
      {"role": "assistant", "content": "A.", "reasoning_content": "Think.", "tool_calls": [
          {"id": "call_x", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a"}'}},
          {"id": "call_y", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "b"}'}}]},
      {"role": "tool", "tool_call_id": "call_x", "content": "A"},
      {"role": "tool", "tool_call_id": "call_y", "content": "B1\nB2"},
      {"role": "assistant", "content": "Done.", "reasoning_content": "More."}]),
    ([{"type": "custom_tool_call", "call_id": "call_p", "name": "apply_patch", "input": "*** x\n"},
      {"type": "custom_tool_call_output", "call_id": "call_p", "output": "ok"}],
     [{"role": "assistant", "content": None, "tool_calls": [
         {"id": "call_p", "type": "function",
          "function": {"name": "apply_patch", "arguments": '{"input": "*** x\\n"}'}}]},
      {"role": "tool", "tool_call_id": "call_p", "content": "ok"}]),
])
def test_input_items_become_chat_messages(input: Any, messages: list[dict[str, Any]]) -> None:
    assert turn({"input": input}).messages == messages


def test_instructions_lead_the_system_message() -> None:
    got = turn({"instructions": "You are Codex.", "input": [
        {"role": "developer", "content": [{"type": "input_text", "text": "Sandbox: read-only."}]},
        {"role": "developer", "content": "Be terse."}, {"role": "user", "content": "hi"}]})
    assert got.messages == [{"role": "system", "content": "You are Codex.\n\nSandbox: read-only.\n\nBe terse."},
                            {"role": "user", "content": "hi"}]
    only = turn({"instructions": "Only this.", "input": "hi"})
    assert only.messages[0] == {"role": "system", "content": "Only this."}


def test_tools_are_offered_as_chat_functions() -> None:
    space = {"type": "namespace", "name": "agents", "description": "Sub-agents.", "tools": [
        {"type": "function", "name": "spawn", "strict": False, "parameters": {"type": "object", "properties": {}}},
        {"type": "function", "name": "close", "parameters": {"type": "object", "properties": {}}}]}
    other = {"type": "namespace", "name": "jobs", "tools": [{"type": "function", "name": "close"}]}
    got = turn({"input": "hi", "tools": [WEATHER, {**READ, "strict": False}, apply_patch(), space, other,
                                         {"type": "web_search"}, {"type": "tool_search"},
                                         {"type": "web_search_preview"}]})
    functions = [t["function"] for t in got.tools]
    assert [(f["name"], f.get("strict")) for f in functions] == [
        ("get_weather", True), ("read_file", False), ("apply_patch", None), ("spawn", False),
        ("agents__close", True), ("jobs__close", True)]
    assert functions[5]["parameters"] == {"type": "object", "properties": {}}
    assert list(got.freeforms) == ["apply_patch"] and got.freeforms["apply_patch"].syntax == "lark"
    assert got.context.namespaces == {"spawn": ("agents", "spawn"), "agents__close": ("agents", "close"),
                                      "jobs__close": ("jobs", "close")}


# The turn's tool_choice is what the chat upstream is sent (Turn.body): allowed_tools must be in
# the Chat Completions shape there, as the chat front sends it.


@pytest.mark.parametrize("choice, expected", [
    ("none", "none"), ("auto", "auto"), ("required", "required"),
    ({"type": "function", "name": "get_weather"}, {"type": "function", "function": {"name": "get_weather"}}),
    ({"type": "custom", "name": "apply_patch"}, {"type": "function", "function": {"name": "apply_patch"}}),
    ({"type": "function", "name": "spawn", "namespace": "agents"}, {"type": "function", "function": {"name": "spawn"}}),
    pytest.param({"type": "allowed_tools", "mode": "required", "tools": [
        {"type": "function", "name": "get_weather"}, {"type": "custom", "name": "apply_patch"}]},
        {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [
            {"type": "function", "function": {"name": "get_weather"}},
            {"type": "function", "function": {"name": "apply_patch"}}]}}),
    pytest.param({"type": "allowed_tools", "tools": [{"type": "function", "name": "get_weather"}]},
                 {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [
                     {"type": "function", "function": {"name": "get_weather"}}]}}),
])
def test_tool_choice(choice: Any, expected: Any) -> None:
    space = {"type": "namespace", "name": "agents", "tools": [{"type": "function", "name": "spawn"}]}
    got = turn({"input": "hi", "tools": [WEATHER, apply_patch(), space], "tool_choice": choice})
    assert got.tool_choice == expected


@pytest.mark.parametrize("body, options", [
    ({"max_output_tokens": 77}, {"max_tokens": 77}),
    ({"temperature": 0.2, "top_p": 0.5}, {"temperature": 0.2, "top_p": 0.5}),
    ({"reasoning": {"effort": "high", "summary": "auto"}},
     {"reasoning_effort": "high", "chat_template_kwargs": {"enable_thinking": True, "thinking": True}}),
    ({"reasoning": {"effort": "minimal"}},
     {"reasoning_effort": "low", "chat_template_kwargs": {"enable_thinking": True, "thinking": True}}),
    ({"reasoning": {"effort": "none"}}, {"chat_template_kwargs": {"enable_thinking": False, "thinking": False}}),
    ({"reasoning": {"summary": "auto"}}, {}),
    ({"text": {"format": {"type": "json_schema", "name": "w", "strict": True,
                          "schema": {"type": "object", "properties": {"t": {"type": "number"}}}}, "verbosity": "low"}},
     {"response_format": {"type": "json_schema", "json_schema": {
         "name": "w", "schema": {"type": "object", "properties": {"t": {"type": "number"}}}, "strict": True}}}),
    ({"text": {"format": {"type": "json_object"}}}, {"response_format": {"type": "json_object"}}),
    ({"text": {"format": {"type": "text"}}}, {}),
    ({"stream": True}, {"stream": True, "stream_options": {"include_usage": True}}),
    ({"service_tier": "auto", "truncation": "auto", "client_metadata": {"a": "b"}, "store": False,
      "include": ["reasoning.encrypted_content"], "prompt_cache_key": "k", "metadata": {"a": "b"}}, {}),
])
def test_fields_for_the_upstream(body: dict[str, Any], options: dict[str, Any]) -> None:
    assert turn({"input": "hi", **body}).options == {"model": "m", **options}


@pytest.mark.parametrize("body, param", [
    ({"input": 5}, "input"),
    ({"input": [{"type": "item_reference", "id": "msg_1"}]}, "input[0]"),
    ({"input": [{"role": "tool", "content": "x"}]}, "input[0].role"),
    ({"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]}, "input[0].content[0].type"),
    ({"input": [{"role": "developer", "content": [{"type": "input_image", "image_url": "http://x"}]}]},
     "input[0].content"),
    ({"input": [{"type": "function_call", "name": "x", "arguments": "{}"}]}, "input[0].call_id"),
    ({"input": [{"type": "function_call", "call_id": "c", "name": "x", "arguments": {}}]}, "input[0].arguments"),
    ({"input": [{"type": "function_call_output", "output": "x"}]}, "input[0].call_id"),
    ({"input": [{"type": "web_search_call", "id": "ws_1"}]}, "input[0].type"),
    ({"model": ""}, "model"),
    ({"max_output_tokens": 0}, "max_output_tokens"),
    ({"reasoning": {"effort": "max"}}, "reasoning.effort"),
    ({"text": {"format": {"type": "json_schema"}}}, "text.format"),
    ({"tools": [{"type": "file_search", "vector_store_ids": ["v"]}]}, "tools[0].type"),
    ({"tools": [{"type": "custom", "name": "p", "format": {"type": "grammar", "syntax": "lark",
                                                           "definition": "start: a\n" * 1001}}]}, "tools[0].format"),
    ({"tools": [WEATHER, WEATHER]}, "tools[1].name"),
    ({"tools": [{**WEATHER, "strict": "yes"}]}, "tools[0].strict"),
    ({"tool_choice": {"type": "web_search"}}, "tool_choice.type"),
    ({"tool_choice": {"type": "allowed_tools", "tools": [{"type": "mcp"}]}}, "tool_choice.tools[0]"),
    ({"metadata": {"k": 1}}, "metadata"),
    ({"background": True}, "background"),
    ({"conversation": "conv_1"}, "conversation"),
    ({"previous_response_id": "resp_unknown"}, "previous_response_id"),
    ({"store": "no"}, "store"),
])
def test_what_cannot_be_honoured_is_a_400_naming_the_field(body: dict[str, Any], param: str) -> None:
    with pytest.raises(RequestError) as refused:
        turn({"input": "hi", **body})
    assert refused.value.status == 400 and refused.value.param == param and str(refused.value).startswith(param)


def translated(body: dict[str, Any]) -> Any:
    """What ``turn`` makes of ``body``: the turn's fields and its context's, or the error."""
    try:
        made = turn(body)
    except RequestError as exc:
        return str(exc), exc.param, exc.code
    context = {k: v for k, v in vars(made.context).items() if k not in ("created", "frame")}
    context["inputs"] = [{**item, "id": None} for item in context["inputs"]]  # (fresh ids each time)
    return {**vars(made), "context": context}


@pytest.mark.parametrize("fields", [
    {"tools": TOOLS, "instructions": "Be terse.", "temperature": 0.2, "store": False},
    {"tools": TOOLS, "store": True, "metadata": {"a": "b"}, "reasoning": {"effort": "low", "summary": "auto"}},
    {"tools": [{"type": "namespace", "name": "ns", "tools": [READ]}, READ], "tool_choice": {"type": "function",
                                                                                          "name": "read_file"}},
    {"tools": TOOLS, "instructions": 5},  # refused after the input is read
    {"tools": TOOLS, "metadata": {"k": 1}},
    {"tools": TOOLS, "include": ["reasoning.encrypted_content"], "stream": True},
])
@pytest.mark.parametrize("input", [
    "hi",
    [{"role": "user", "content": "hi"}, {"type": "function_call", "call_id": "c1", "name": "read_file",
                                         "arguments": "{}"}, {"type": "function_call_output", "call_id": "c1",
                                                              "output": "ok"}],
    [{"type": "function_call_output", "call_id": "nope", "output": "x"}],  # refused before the fields after it
    [{"type": "additional_tools", "tools": [WEATHER]}, {"role": "user", "content": "hi"}],
    [{"type": "additional_tools", "tools": 3}],
    5,
])
@pytest.mark.parametrize("previous", [None, "resp_unknown", 7])
def test_a_request_like_an_earlier_one_is_translated_as_it(monkeypatch: pytest.MonkeyPatch, fields: dict[str, Any],
                                                           input: Any, previous: Any) -> None:
    """The fields but the input kept translated (``_Frame``): a request sending the same ones
    gets what a first one does, turn or error, whatever its input and previous response."""
    body = {**fields, "input": input, "previous_response_id": previous}
    monkeypatch.setattr(responses_request, "_FRAMES", responses_request.SharedCache(8))
    first = translated(body)
    translated({**fields, "input": "an earlier request"})
    assert translated(body) == first


# ---------------------------------------------------------------- the request, over HTTP


def test_the_request_reaches_the_upstream_translated(stacks: Any) -> None:
    s = stacks(lambda b: Reply(content='{"t": 21}'))
    got = create(s, [{"role": "developer", "content": "Be terse."},
                     {"role": "user", "content": [{"type": "input_text", "text": "look:"},
                                                  {"type": "input_image", "image_url": "http://x/y.png",
                                                   "detail": "high"}]}],
                 instructions="You answer in JSON.", max_output_tokens=100, reasoning={"effort": "low"},
                 text={"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}}},
                 metadata={"ticket": "T-1"}, temperature=0.3, tool_choice="auto", parallel_tool_calls=False,
                 tools=[WEATHER, {"type": "web_search"}])
    assert items(got) == [("message", '{"t": 21}')]
    assert got.metadata == {"ticket": "T-1"} and got.instructions == "You answer in JSON."
    assert got.max_output_tokens == 100 and got.temperature == 0.3 and got.parallel_tool_calls is False
    assert got.text.format.type == "json_schema"
    sent = s.upstream.requests[-1]
    assert sent["messages"] == [
        {"role": "system", "content": "You answer in JSON.\n\nBe terse."},
        {"role": "user", "content": [{"type": "text", "text": "look:"},
                                     {"type": "image_url", "image_url": {"url": "http://x/y.png", "detail": "high"}}]}]
    assert (sent["max_tokens"], sent["reasoning_effort"], sent["temperature"]) == (100, "low", 0.3)
    assert sent["response_format"] == {"type": "json_schema",
                                       "json_schema": {"name": "w", "schema": {"type": "object"}}}
    assert [t["function"]["name"] for t in sent["tools"]] == ["get_weather"], "web_search left out"
    assert sent["parallel_tool_calls"] is False and sent["tool_choice"] == "auto"
    assert not {"metadata", "instructions", "input", "max_output_tokens", "text", "reasoning"} & sent.keys()


@pytest.mark.parametrize("choice, sent_choice", [
    ("none", "none"),
    ("auto", "auto"),
    ({"type": "function", "name": "get_weather"}, {"type": "function", "function": {"name": "get_weather"}}),
    pytest.param({"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "get_weather"}]},
                 {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [
                     {"type": "function", "function": {"name": "get_weather"}}]}}),
])
def test_tool_choice_over_http(stacks: Any, choice: Any, sent_choice: Any) -> None:
    call = written("hermes", "get_weather", {"city": "Oslo"})
    s = stacks(lambda b: Reply(content=call))
    got = create(s, tool_choice=choice)
    sent = s.upstream.requests[-1]
    if choice == "none":
        assert items(got) == [("message", call)], "no tools: the text is the answer"
    else:
        assert items(got) == [("function_call", ("get_weather", {"city": "Oslo"}, None))]
    assert sent["tool_choice"] == sent_choice
    assert (got.tool_choice if isinstance(got.tool_choice, str) else got.tool_choice.type) == \
        (choice if isinstance(choice, str) else choice["type"])


def test_parallel_tool_calls_false_keeps_the_first_call(stacks: Any) -> None:
    text = written("hermes", "read_file", {"path": "a"}) + written("hermes", "read_file", {"path": "b"})
    s = stacks(lambda b: Reply(content=text))
    got = create(s, parallel_tool_calls=False)
    assert items(got) == [("function_call", ("read_file", {"path": "a"}, None))] and got.parallel_tool_calls is False
    assert s.upstream.requests[-1]["parallel_tool_calls"] is False


def test_a_named_custom_tool_is_required(stacks: Any) -> None:
    s = stacks(lambda b: Reply(content=written("hermes", "apply_patch", {"input": PATCHES["add"]})))
    got = create(s, tools=[READ, apply_patch()], tool_choice={"type": "custom", "name": "apply_patch"})
    assert items(got) == [("custom_tool_call", ("apply_patch", PATCHES["add"]))]
    assert s.upstream.requests[-1]["tool_choice"] == {"type": "function", "function": {"name": "apply_patch"}}
    assert got.tool_choice.type == "custom" and got.tool_choice.name == "apply_patch"
    s.upstream.script = lambda b: Reply(content=written("hermes", "read_file", {"path": "a"}))
    with pytest.raises(openai.APIStatusError) as failed:
        create(s, tools=[READ, apply_patch()], tool_choice={"type": "custom", "name": "apply_patch"})
    assert failed.value.status_code == 502 and failed.value.body["code"] == "tool_choice_unmet"


def test_a_required_call_the_model_did_not_make_is_an_error(stacks: Any) -> None:
    s = stacks(lambda b: Reply(content="No call."))
    with pytest.raises(openai.APIStatusError) as failed:
        create(s, tool_choice="required")
    assert failed.value.status_code == 502 and failed.value.body["code"] == "tool_choice_unmet"
    with pytest.raises(openai.APIStatusError):
        create(s, tool_choice={"type": "function", "name": "read_file"})


@pytest.mark.parametrize("tool, refused", [
    ({"type": "web_search"}, False),
    ({"type": "web_search_preview"}, False),
    ({"type": "tool_search", "execution": "client", "description": "Find tools.",
      "parameters": {"type": "object"}}, False),
    ({"type": "file_search", "vector_store_ids": ["vs_1"]}, True),
    ({"type": "code_interpreter", "container": {"type": "auto"}}, True),
    ({"type": "mcp", "server_label": "x", "server_url": "http://x"}, True),
    ({"type": "image_generation"}, True),
    ({"type": "computer_use_preview", "display_width": 10, "display_height": 10, "environment": "linux"}, True),
    ({"type": "local_shell"}, True),
])
def test_built_in_tools_are_dropped_or_refused(stacks: Any, caplog: pytest.LogCaptureFixture,
                                               monkeypatch: pytest.MonkeyPatch, tool: dict[str, Any],
                                               refused: bool) -> None:
    monkeypatch.setattr(responses_request, "_drop", Dropped("responses"))  # each case logs afresh
    caplog.set_level(logging.INFO, logger="toolbridge.gateway")
    s = stacks(lambda b: Reply(content="ok"))
    before = len(s.upstream.requests)
    if refused:
        with pytest.raises(openai.BadRequestError) as failed:
            create(s, tools=[READ, tool])
        assert failed.value.body["param"] == "tools[1].type"
        assert repr(tool["type"]) in failed.value.body["message"]
        assert len(s.upstream.requests) == before, "nothing reached the upstream"
        return
    assert items(create(s, tools=[READ, tool])) == [("message", "ok")]
    assert [t["function"]["name"] for t in s.upstream.requests[-1]["tools"]] == ["read_file"]
    assert any(tool["type"] in r.getMessage() and "dropped" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("replay", ["full_input", "previous_response_id"])
def test_namespaced_functions(stacks: Any, replay: str) -> None:
    space = {"type": "namespace", "name": "agents", "description": "Sub-agents.", "tools": [
        {"type": "function", "name": "spawn", "strict": False,
         "parameters": {"type": "object", "properties": {"task": {"type": "string"}}}},
        {"type": "function", "name": "close", "parameters": {"type": "object", "properties": {}}}]}
    jobs = {"type": "namespace", "name": "jobs", "tools": [{"type": "function", "name": "close"}]}
    tools = [READ, space, jobs]

    def script(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply(content="Spawned.")
        return Reply(content=written("hermes", "spawn", {"task": "t"}) + written("hermes", "jobs__close", {}))

    s = stacks(script)
    first = create(s, tools=tools)
    assert items(first) == [("function_call", ("spawn", {"task": "t"}, "agents")),
                            ("function_call", ("close", {}, "jobs"))]
    offered = [t["function"]["name"] for t in s.upstream.requests[-1]["tools"]]
    assert offered == ["read_file", "spawn", "agents__close", "jobs__close"]
    results = [{"type": "function_call_output", "call_id": c.call_id, "output": c.name} for c in first.output]
    if replay == "full_input":
        create(s, [{"role": "user", "content": USER}, *first.output, *results], tools=tools)
    else:
        create(s, results, previous_response_id=first.id, tools=tools)
    sent = s.upstream.requests[-1]["messages"]
    assert [c["function"]["name"] for c in sent[1]["tool_calls"]] == ["spawn", "jobs__close"]


def test_additional_tools_items_are_offered_with_the_tools(stacks: Any) -> None:
    # Codex, asked for a model it has no metadata for, sends its tools in an additional_tools
    # input item (a developer's), namespaced, and no ``tools``.
    space = {"type": "namespace", "name": "functions", "description": "", "tools": [READ]}
    extra = {"type": "additional_tools", "id": "at_1", "role": "developer", "tools": [space, WEATHER]}

    def script(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply(content="Read.")
        return Reply(content=written("hermes", "read_file", {"path": "a.txt"}))

    s = stacks(script)
    first = create(s, [extra, {"role": "user", "content": "Read a.txt"}], tools=openai.NOT_GIVEN)
    assert items(first) == [("function_call", ("read_file", {"path": "a.txt"}, "functions"))]
    sent = s.upstream.requests[-1]
    assert [t["function"]["name"] for t in sent["tools"]] == ["read_file", "get_weather"]
    assert [m["role"] for m in sent["messages"]] == ["user"]  # the item is no message
    result = {"type": "function_call_output", "call_id": first.output[0].call_id, "output": "hello"}
    create(s, [extra, {"role": "user", "content": "Read a.txt"}, *first.output, result], tools=[READ])
    status, body = raw(s, "/v1/responses", {"model": "m", "input": [extra, {**extra, "id": "at_2"}]})
    assert status == 400 and "offered twice" in body["error"]["message"]
    assert body["error"]["param"] == "input[1].tools[0].tools[0].name"


def unsealed(s: Any) -> int:
    """The gateway's count of reasoning items whose seal did not verify."""
    text = urllib.request.urlopen(s.url.removesuffix("/v1") + "/metrics").read().decode()
    return sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("toolbridge_reasoning_unsealed_total "))


def test_reasoning_is_sealed_and_given_back(stacks: Any, caplog: pytest.LogCaptureFixture) -> None:
    s = stacks(agent("hermes"))
    first = create(s, include=["reasoning.encrypted_content"], store=False)
    reasoning, message, call = first.output
    assert reasoning.encrypted_content and THOUGHT not in reasoning.encrypted_content
    assert first.store is False
    sealed = {"type": "reasoning", "id": reasoning.id, "summary": [], "encrypted_content": reasoning.encrypted_content}
    result = {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}
    create(s, [{"role": "user", "content": USER}, sealed, message, call, result], store=False)
    assert s.upstream.requests[-1]["messages"][1]["reasoning_content"] == THOUGHT, "opened from the seal alone"
    payload = reasoning.encrypted_content
    tampered = payload[:-6] + ("AAAAAA" if not payload.endswith("AAAAAA") else "BBBBBB")
    caplog.set_level(logging.WARNING, logger="toolbridge.gateway")
    before = unsealed(s)
    for changed in (tampered, "tb1.bm90IHNlYWxlZA", "opaque-from-openai"):
        again = create(s, [{"role": "user", "content": USER}, {**sealed, "encrypted_content": changed},
                           message, call, result])
        assert items(again) == [("message", FINAL)], "dropped, not fatal"
        assert "reasoning_content" not in s.upstream.requests[-1]["messages"][1]
    assert any("encrypted_content is dropped" in r.getMessage() for r in caplog.records)
    assert unsealed(s) == before + 3, "each counted"
    plain = create(s)
    assert plain.output[0].encrypted_content is None, "sealed only when asked"


def test_stored_responses_are_retrieved_and_deleted(stacks: Any) -> None:
    s = stacks(lambda b: Reply(content="kept"))
    with s.client() as c:
        kept = c.responses.create(model="m", input="hi", metadata={"k": "v"})
        got = c.responses.retrieve(kept.id)
        assert got.id == kept.id and items(got) == [("message", "kept")] and got.metadata == {"k": "v"}
        assert c.responses.delete(kept.id) is None
        with pytest.raises(openai.NotFoundError) as gone:
            c.responses.retrieve(kept.id)
        assert gone.value.body["code"] == "not_found"
        with pytest.raises(openai.NotFoundError):
            c.responses.delete(kept.id)
        with pytest.raises(openai.BadRequestError) as unknown:
            c.responses.create(model="m", input="hi", previous_response_id=kept.id)
        assert unknown.value.body["param"] == "previous_response_id" and kept.id in unknown.value.body["message"]
        unstored = c.responses.create(model="m", input="hi", store=False)
        assert unstored.store is False
        with pytest.raises(openai.NotFoundError):
            c.responses.retrieve(unstored.id)
        with pytest.raises(openai.BadRequestError):
            c.responses.create(model="m", input="hi", previous_response_id=unstored.id)


def test_a_chain_of_previous_responses_keeps_the_whole_conversation(stacks: Any) -> None:
    s = stacks(lambda b: Reply(content=f"answer {len(b['messages'])}"))
    one = create(s, "first", instructions="Sys.")
    two = create(s, "second", previous_response_id=one.id, instructions="Sys2.")
    create(s, [{"role": "user", "content": "third"}], previous_response_id=two.id)
    assert s.upstream.requests[-1]["messages"] == [
        {"role": "user", "content": "first"}, {"role": "assistant", "content": "answer 2"},
        {"role": "user", "content": "second"}, {"role": "assistant", "content": "answer 4"},
        {"role": "user", "content": "third"}], "instructions are not carried over"


@pytest.mark.parametrize("name", ["codex-1-first-turn", "codex-2-first-turn-known-model"])
def test_codexs_own_request_is_accepted(stacks: Any, name: str) -> None:
    path = CAPTURES / f"{name}.json"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    body = {**json.loads(path.read_text())["body"], "stream": False}
    call = written("qwen3_coder", "exec_command", {"cmd": "ls"})
    s = stacks(lambda b: Reply(content=call, reasoning="List."), tool_call_parser="qwen3_coder")
    status, got = raw(s, "/v1/responses", body)
    assert status == 200, got
    assert [o["type"] for o in got["output"]] == ["reasoning", "function_call"]
    assert got["output"][1]["name"] == "exec_command" and json.loads(got["output"][1]["arguments"]) == {"cmd": "ls"}
    assert got["output"][0]["encrypted_content"].startswith("tb1.") and got["store"] is False
    sent = s.upstream.requests[-1]
    assert sent["messages"][0]["role"] == "system" and [m["role"] for m in sent["messages"][1:]] == ["user", "user"]
    names = [t["function"]["name"] for t in sent["tools"]]
    assert "exec_command" in names and not {"web_search", "tool_search"} & set(names)
    assert all(t["type"] == "function" for t in sent["tools"])
    assert ("apply_patch" in names) == (name == "codex-2-first-turn-known-model")
    assert "client_metadata" not in sent and "include" not in sent


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("status, error", [(500, openai.InternalServerError), (429, openai.RateLimitError),
                                           (400, openai.BadRequestError)])
def test_the_upstreams_error_keeps_its_status(stacks: Any, status: int, error: type) -> None:
    s = stacks(lambda b: Reply(status=status, error="the upstream says no"))
    with pytest.raises(error) as failed:
        create(s)
    assert failed.value.status_code == status and failed.value.body["message"] == "the upstream says no"


def test_an_upstream_that_cannot_be_reached_is_a_502() -> None:
    with Stack(lambda b: Reply(content="ok"), tool_call_parser="hermes", upstream="http://127.0.0.1:9/v1") as s:
        with pytest.raises(openai.APIStatusError) as failed:
            create(s)
        assert failed.value.status_code == 502 and failed.value.body["type"]


def test_an_unreadable_answer_is_a_502(stacks: Any) -> None:
    s = stacks(lambda b: Reply(fault="garbage"))
    with pytest.raises(openai.APIStatusError) as failed:
        create(s)
    assert failed.value.status_code == 502


@pytest.mark.parametrize("store", [False, True])
def test_a_long_answer_is_whole_with_the_fields_it_repeats(stacks: Any, store: bool) -> None:
    """A body past the length from which it is joined from a view of it (``_LONG_BODY``):
    the same object, its call and the request's fields after it."""
    path = "x" * 20_000 + " \"quoted\" \\ \u00e9\n"
    s = stacks(lambda b: Reply(content="Reading. " + written("hermes", "read_file", {"path": path})))
    got = create(s, store=store, instructions="Be brief.")
    assert items(got)[1] == ("function_call", ("read_file", {"path": path}, None))
    assert got.instructions == "Be brief." and got.store is store and [t.name for t in got.tools] == [
        "get_weather", "read_file"]


@pytest.mark.parametrize(("usage", "expected"), [
    ({"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}, (10, 20, 30, 0, 0)),
    ({"prompt_tokens": 10, "completion_tokens": 20}, (10, 20, 30, 0, 0)),  # no total: the sum
    ({"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 0}, (10, 20, 30, 0, 0)),
    ({"prompt_tokens": -1, "completion_tokens": True, "total_tokens": "7"}, (0, 0, 0, 0, 0)),  # not counts
    ({"prompt_tokens": 5, "completion_tokens": 2.0, "total_tokens": 9}, (5, 0, 9, 0, 0)),
    ({"prompt_tokens": 8, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 6},
      "completion_tokens_details": {"reasoning_tokens": 3}}, (8, 4, 12, 6, 3)),
    ({"prompt_tokens_details": {"cached_tokens": -2}, "completion_tokens_details": None}, (0, 0, 0, 0, 0)),
])
def test_usage_in_this_apis_terms(usage: dict[str, Any], expected: tuple[int, ...]) -> None:
    from toolbridge.gateway.fronts.responses.items import usage_of
    got = usage_of(usage)
    assert (got["input_tokens"], got["output_tokens"], got["total_tokens"],
            got["input_tokens_details"]["cached_tokens"], got["output_tokens_details"]["reasoning_tokens"]) == expected
    assert usage_of(None) is None and usage_of([1]) is None
