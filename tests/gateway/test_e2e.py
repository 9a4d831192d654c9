"""End to end: the official openai SDK -> toolbridge gateway -> a replaying upstream, over HTTP."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from toolbridge.gateway.replay.stack import Stack
from tests.harness import tool
from toolbridge.gateway.replay.upstream import Reply

READ = tool("read_file", path={"type": "string"})
WEATHER = tool("get_weather", city={"type": "string"}, days={"type": "integer"})
TOOLS = [READ, WEATHER]

CALLS = {
    "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
    "qwen3_coder": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
                   "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
    "glm45": "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
             "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
}
FINAL = "It will be sunny in Paris for 3 days: 20 < t < 25 degrees."


def agent(call_text: str, chunk: int = 3) -> Any:
    """An upstream model: calls the tool, then answers once it sees the tool's result."""
    def script(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply(content=FINAL, chunk=chunk)
        return Reply(content="Let me check.\n" + call_text, chunk=chunk)
    return script


def ask(client: openai.OpenAI, messages: list[Any], stream: bool, **kw: Any) -> dict[str, Any]:
    """One completion, streamed or not, as the assistant message dict plus finish_reason."""
    if not stream:
        c = client.chat.completions.create(model="m", messages=messages, tools=TOOLS, **kw)
        msg = c.choices[0].message.model_dump(exclude_none=True)
        return {"content": msg.get("content"), "tool_calls": _calls(msg.get("tool_calls")),
                "finish": c.choices[0].finish_reason}
    content, calls, finish = "", {}, None
    for chunk in client.chat.completions.create(model="m", messages=messages, tools=TOOLS, stream=True, **kw):
        if not chunk.choices:
            continue
        d = chunk.choices[0].delta
        content += d.content or ""
        for part in d.tool_calls or ():
            entry = calls.setdefault(part.index, {"id": part.id, "name": "", "arguments": ""})
            assert part.id is None or entry["id"] == part.id
            entry["name"] += (part.function.name or "") if part.function else ""
            entry["arguments"] += (part.function.arguments or "") if part.function else ""
        finish = chunk.choices[0].finish_reason or finish
    listed = [{"id": c["id"], "function": {"name": c["name"], "arguments": c["arguments"]}}
              for _, c in sorted(calls.items())]
    return {"content": content or None, "tool_calls": _calls(listed), "finish": finish}


def _calls(calls: Any) -> list[tuple[str, Any]]:
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls or ()]


@pytest.mark.parametrize("dialect", sorted(CALLS))
def test_two_turn_agent_loop_streamed_and_not(dialect: str) -> None:
    with Stack(agent(CALLS[dialect]), tool_call_parser=dialect) as s:
        client = s.client()
        results = {}
        for stream in (False, True):
            messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
            first = ask(client, messages, stream)
            assert first["tool_calls"] == [("get_weather", {"city": "Paris", "days": 3})], dialect
            assert first["finish"] == "tool_calls" and first["content"] == "Let me check."
            call_id = f"call_{stream}"
            messages += [
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": call_id, "type": "function",
                     "function": {"name": "get_weather", "arguments": '{"city": "Paris", "days": 3}'}}]},
                {"role": "tool", "tool_call_id": call_id, "content": "sunny, 20-25 C"},
            ]
            second = ask(client, messages, stream)
            assert second == {"content": FINAL, "tool_calls": [], "finish": "stop"}
            sent = s.upstream.requests[-1]["messages"]
            assert sent[-1] == {"role": "tool", "tool_call_id": call_id, "content": "sunny, 20-25 C"}
            assert sent[-2]["tool_calls"][0]["id"] == call_id
            results[stream] = (first, second)
        assert results[False] == results[True]


def test_calls_in_reasoning_are_recovered_only_when_asked() -> None:
    script = lambda body: Reply(content="", reasoning="I should look. " + CALLS["hermes"])  # noqa: E731
    for flag, expected in ((False, []), (True, [("get_weather", {"city": "Paris", "days": 3})])):
        with Stack(script, tool_call_parser="hermes", recover_from_reasoning=flag) as s:
            for stream in (False, True):
                got = ask(s.client(), [{"role": "user", "content": "?"}], stream)
                assert got["tool_calls"] == expected, (flag, stream)


def test_dotted_and_escaped_names_map_to_the_offered_tool() -> None:
    offered = [tool("os__fs__read", path={"type": "string"})]
    text = '<tool_call>{"name": "os.fs.read", "arguments": {"path": "/etc/hosts"}}</tool_call>'
    with Stack(lambda body: Reply(content=text), tool_call_parser="hermes") as s:
        for stream in (False, True):
            c = s.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}],
                                                    tools=offered, stream=stream)
            if stream:
                names = [p.function.name for ch in c for p in (ch.choices[0].delta.tool_calls or []) if ch.choices
                         and p.function and p.function.name]
            else:
                names = [t.function.name for t in c.choices[0].message.tool_calls]
            assert names == ["os__fs__read"]


def test_parameters_are_typed_by_the_schema() -> None:
    schema = tool("configure", s={"type": "string"}, i={"type": "integer"}, n={"type": "number"},
                  b={"type": "boolean"}, a={"type": "array", "items": {"type": "integer"}},
                  o={"type": "object"}, z={"type": "null"}, zip={"type": "string"})
    params = {"s": "text", "i": "42", "n": "2.5", "b": "true", "a": "[1, 2]", "o": '{"k": "v"}', "z": "null",
              "zip": "02134"}
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    text = f"<tool_call>\n<function=configure>\n{body}</function>\n</tool_call>"
    want = {"s": "text", "i": 42, "n": 2.5, "b": True, "a": [1, 2], "o": {"k": "v"}, "z": None, "zip": "02134"}
    with Stack(lambda b: Reply(content=text, chunk=5), tool_call_parser="qwen3_coder") as s:
        for stream in (False, True):
            c = s.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}],
                                                    tools=[schema], stream=stream)
            if stream:
                args = "".join(p.function.arguments or "" for ch in c if ch.choices
                               for p in (ch.choices[0].delta.tool_calls or []) if p.function)
            else:
                args = c.choices[0].message.tool_calls[0].function.arguments
            assert json.loads(args) == want, stream


def test_several_calls_keep_order_and_distinct_indices() -> None:
    text = "".join(f'<tool_call>{{"name": "read_file", "arguments": {{"path": "f{i}"}}}}</tool_call>\n'
                   for i in range(3))
    with Stack(lambda b: Reply(content=text, chunk=7), tool_call_parser="hermes") as s:
        stream = s.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}],
                                                     tools=TOOLS, stream=True)
        openings = [(p.index, p.id) for ch in stream if ch.choices for p in (ch.choices[0].delta.tool_calls or [])
                    if p.id]
        assert [i for i, _ in openings] == [0, 1, 2] and len({i for _, i in openings}) == 3
        whole = ask(s.client(), [{"role": "user", "content": "x"}], False)
        assert whole["tool_calls"] == [("read_file", {"path": f"f{i}"}) for i in range(3)]


@pytest.mark.parametrize("stream_arguments", [False, True])
def test_a_call_malformed_after_it_began_ends_with_length_streamed_or_not(stream_arguments: bool) -> None:
    """Both answers end with length and are the same: the text, no call. By default nothing of
    the call was sent; with --stream-arguments its opening was, and cannot be taken back
    ("discard the unfinished call"). (A short call block is read whole when it closes: its
    opening and its abortion come from one upstream chunk, and nothing of it is sent.)"""
    text = 'Reading.\n<tool_call>{"name": "read_file", "arguments": {"path": "' + "a" * 200 + '", </tool_call>'
    with Stack(lambda b: Reply(content=text), tool_call_parser="hermes", stream_arguments=stream_arguments) as s:
        whole = ask(s.client(), [{"role": "user", "content": "x"}], False)
        assert whole == {"content": text, "tool_calls": [], "finish": "length"}  # never a call
        chunks = list(s.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}],
                                                          tools=TOOLS, stream=True))
        content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        began = [p for c in chunks if c.choices for p in c.choices[0].delta.tool_calls or ()]
        assert content == text and bool(began) == stream_arguments
        assert chunks[-1].choices[0].finish_reason == "length"


@pytest.mark.parametrize("text", [
    '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>',
    '<tool_call>{"name": "read_file" "arguments": {}}</tool_call>',
    "Compare: a <b> c, x < y, and <tool_call> is how I would call a tool.",
    "<div class='x'>html</div> and if (a<b && c>d) {}",
])
def test_unknown_malformed_and_prose_are_not_calls(text: str) -> None:
    with Stack(lambda b: Reply(content=text), tool_call_parser="hermes") as s:
        for stream in (False, True):
            got = ask(s.client(), [{"role": "user", "content": "x"}], stream)
            assert got["tool_calls"] == [] and got["content"] == text


def test_native_tool_calls_are_preferred_and_kept() -> None:
    native = [{"id": "call_native1", "type": "function",
               "function": {"name": "read_file", "arguments": '{"path": "/a"}'}}]
    for quirk in ("", "whole", "id_every_chunk", "no_index", "object_arguments"):
        script = lambda b, q=quirk: Reply(content="", tool_calls=native, quirk=q, finish_reason="tool_calls")  # noqa: E731
        with Stack(script, tool_call_parser="hermes") as s:
            for stream in (False, True):
                c = s.client()
                got = ask(c, [{"role": "user", "content": "x"}], stream)
                assert got["tool_calls"] == [("read_file", {"path": "/a"})], (quirk, stream)
                assert got["finish"] == "tool_calls"


def test_provenance_header_and_metrics() -> None:
    with Stack(agent(CALLS["hermes"]), tool_call_parser="hermes") as s:
        raw = s.client().chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "x"}], tools=TOOLS)
        assert raw.headers["x-toolbridge-calls"] == "native=0; content=1; reasoning=0; rejected=0; aborted=0; repaired=0; invalid=0"
        import urllib.request

        text = urllib.request.urlopen(s.url.removesuffix("/v1") + "/metrics").read().decode()
        assert 'toolbridge_tool_calls_total{front="chat",source="content"} 1' in text
        health = json.loads(urllib.request.urlopen(s.url.removesuffix("/v1") + "/health").read())
        assert health["status"] == "ok"
        assert [m.id for m in s.client().models.list()] == ["replay"]


@pytest.mark.parametrize("dialect", sorted(CALLS))
def test_default_parser_is_auto_and_says_what_it_found(dialect: str) -> None:
    with Stack(agent(CALLS[dialect])) as s:  # no --tool-call-parser: auto
        for stream in (False, True):
            got = ask(s.client(), [{"role": "user", "content": "Weather in Paris?"}], stream)
            assert got["tool_calls"] == [("get_weather", {"city": "Paris", "days": 3})], (dialect, stream)
            assert got["content"] == "Let me check."
        raw = s.client().chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "?"}], tools=TOOLS)
        detected = raw.headers["x-toolbridge-calls"].split("dialect=")[1]
        assert detected == dialect or (dialect, detected) == ("glm45", "glm47")  # GLM 4.5 and 4.7 write alike


def test_model_name_hint_reaches_auto() -> None:
    """The request's model names the family: its markers decide whether special tokens are kept."""
    cases = (("Qwen/Qwen3-8B", None), ("deepseek-ai/DeepSeek-V3.1", False), ("my-model", False))
    with Stack(lambda body: Reply(content=CALLS["hermes"]), models=tuple(m for m, _ in cases)) as s:
        for model, keep in cases:
            c = s.client().chat.completions.create(model=model, messages=[{"role": "user", "content": "?"}],
                                                    tools=TOOLS)
            assert c.choices[0].message.tool_calls[0].function.name == "get_weather"
            assert s.upstream.requests[-1].get("skip_special_tokens") is keep, model
