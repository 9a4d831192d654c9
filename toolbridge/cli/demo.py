"""``toolbridge demo``: the gateway in front of a replaying upstream, driven by the openai SDK.

Five model families answer a two-turn agent task in their own dialects (Hermes/Qwen3 JSON,
Qwen3-Coder XML, GLM-4.7 arg tags, Kimi K2 section tokens, Mistral ``[TOOL_CALLS]``; samples
written for this demo). For each, the gateway starts with its defaults (the ``auto`` parser, which
recognises the dialect from the output) in front of an embedded upstream that replays those
outputs, and the official ``openai`` client
runs the loop: ask with tools, get a tool call, send the tool's result, get the answer; once
whole and once streamed. The demo prints what the upstream sent beside what the client
received, and exits 1 if the client did not get the expected call and answer both ways.
Everything runs on loopback, offline.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from ..gateway.replay.stack import Stack
from ..gateway.replay.upstream import Reply

TOOLS = [{
    "type": "function",
    "function": {
        "name": "run_tests",
        "description": "Run the test suite and return the failures.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "max_failures": {"type": "integer"}, "verbose": {"type": "boolean"}},
            "required": ["path"]},
    },
}]
CALL = {"path": "tests/test_config.py", "max_failures": 3, "verbose": True}
SAMPLES = {
    "hermes": "I'll run the config tests.\n"
              '<tool_call>\n{"name": "run_tests", "arguments": {"path": "tests/test_config.py", '
              '"max_failures": 3, "verbose": true}}\n</tool_call>',
    "qwen3_coder": "I'll run the config tests.\n<tool_call>\n<function=run_tests>\n<parameter=path>\n"
                   "tests/test_config.py\n</parameter>\n<parameter=max_failures>\n3\n</parameter>\n"
                   "<parameter=verbose>\ntrue\n</parameter>\n</function>\n</tool_call>",
    "glm47": "I'll run the config tests.<tool_call>run_tests<arg_key>path</arg_key><arg_value>"
             "tests/test_config.py</arg_value><arg_key>max_failures</arg_key><arg_value>3</arg_value>"
             "<arg_key>verbose</arg_key><arg_value>true</arg_value></tool_call>",
    "kimi_k2": "I'll run the config tests.<|tool_calls_section_begin|><|tool_call_begin|>functions.run_tests:0"
               '<|tool_call_argument_begin|>{"path": "tests/test_config.py", "max_failures": 3, "verbose": true}'
               "<|tool_call_end|><|tool_calls_section_end|>",
    "mistral": "I'll run the config tests.[TOOL_CALLS]run_tests[ARGS]"
               '{"path": "tests/test_config.py", "max_failures": 3, "verbose": true}',
}
# The upstream split this off as reasoning_content (a server with a reasoning parser does).
REASONING = {"hermes": "The user wants the tests run first."}
RESULT = "2 failed: test_missing_key (KeyError 'port'), test_default_host"
ANSWER = "Two tests fail because load_config() expects a 'port' key; with x < 1 the default is never set."


def script(sample: str, reasoning: str | None) -> Any:
    def answer(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply(content=ANSWER, chunk=4)
        return Reply(content=sample, reasoning=reasoning, chunk=4)
    return answer


def turn(client: Any, messages: list[Any], stream: bool) -> dict[str, Any]:
    """One completion as the client sees it: content, calls, finish_reason, chunk count."""
    if not stream:
        raw = client.chat.completions.with_raw_response.create(model="demo", messages=messages, tools=TOOLS)
        c = raw.parse()
        m = c.choices[0].message
        calls = [(t.id, t.function.name, t.function.arguments) for t in m.tool_calls or []]
        return {"content": m.content, "calls": calls, "finish": c.choices[0].finish_reason, "chunks": 1,
                "calls_header": raw.headers.get("x-toolbridge-calls", "")}
    content, calls, finish, n = "", {}, None, 0
    for chunk in client.chat.completions.create(model="demo", messages=messages, tools=TOOLS, stream=True):
        n += 1
        if not chunk.choices:
            continue
        d = chunk.choices[0].delta
        content += d.content or ""
        for p in d.tool_calls or []:
            entry = calls.setdefault(p.index, [p.id, "", ""])
            entry[1] += (p.function.name or "") if p.function else ""
            entry[2] += (p.function.arguments or "") if p.function else ""
        finish = chunk.choices[0].finish_reason or finish
    return {"content": content or None, "calls": [tuple(v) for _, v in sorted(calls.items())],
            "finish": finish, "chunks": n}


def loop(client: Any, stream: bool, out: TextIO) -> bool:
    messages: list[Any] = [{"role": "user", "content": "The config tests fail. Find out why."}]
    first = turn(client, messages, stream)
    chunks = f", in {first['chunks']} chunks" if stream else ""
    out.write(f"    client got   : finish_reason={first['finish']}, content={first['content']!r}{chunks}\n")
    if "calls_header" in first:
        out.write(f"    x-toolbridge-calls: {first['calls_header']}\n")
    out.writelines(f"                   tool_call {name}({arguments})  id={call_id}\n" for call_id, name, arguments in first["calls"])
    ok = [(n, json.loads(a)) for _, n, a in first["calls"]] == [("run_tests", CALL)]
    if not first["calls"]:
        return False
    call_id, name, arguments = first["calls"][0]
    messages += [{"role": "assistant", "content": first["content"], "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": call_id, "content": RESULT}]
    second = turn(client, messages, stream)
    out.write(f"    tool result  : {RESULT!r}\n    client got   : {second['content']!r}"
              f" (finish_reason={second['finish']})\n")
    return ok and second["content"] == ANSWER and first["finish"] == "tool_calls"


# A front the demo drives: (its name, a client for a Stack, the loop, what the client gets).
Front = tuple[str, Callable[[Stack], Any], Callable[[Any, bool, TextIO], bool], str]
CHAT_FRONT: Front = ("chat", lambda stack: stack.client(), loop, "native tool_calls")


def main(out: TextIO | None = None, fronts: list[Front] | None = None) -> int:
    """Run the loop for every sample through each front (default: the chat front)."""
    out = out or sys.stdout
    fronts = fronts or [CHAT_FRONT]
    failures = 0
    for dialect, sample in SAMPLES.items():
        out.write(f"\n=== {dialect} sample: gateway (parser auto, the default) in front of a replaying upstream ===\n")
        if dialect in REASONING:
            out.write(f"  upstream sent reasoning_content: {REASONING[dialect]!r}\n")
        out.write("  upstream sent content (the model's raw text):\n")
        out.write("".join(f"    | {line}\n" for line in sample.splitlines()))
        with Stack(script(sample, REASONING.get(dialect))) as stack:
            for name, client_of, run, _ in fronts:
                client = client_of(stack)
                for stream in (False, True):
                    out.write(f"  {'streamed' if stream else 'whole'} ({name} front):\n")
                    if not run(client, stream, out):
                        failures += 1
                        out.write("    !! the client did not get the expected call and answer\n")
                client.close()
                sent = stack.upstream.requests[-1]["messages"]
                out.write(f"  the upstream's second request ended with: {json.dumps(sent[-2:])[:300]}...\n")
    got = " / ".join(what for *_, what in fronts)
    out.write(f"\n{f'all dialects: the client got {got}, whole and streamed' if not failures else f'{failures} run(s) failed'}\n")
    return 1 if failures else 0
