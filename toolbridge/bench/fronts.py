"""The client fronts side by side: what the Anthropic Messages and OpenAI Responses fronts cost
beside the chat front.

The same agent turn as the gateway benchmark (``script``: content, then an ``edit_file`` call in
4-character deltas), asked for through each front with the same tools:

- streamed: each front's translation of the upstream's chunks (decoding a chunk, the pipeline's
  events, the front's encoder), in process, as microseconds per upstream chunk; the median of
  ``repeat`` runs, each over every chunk of the turn. The server's other costs per chunk (reading
  and writing the sockets) do not depend on the front and are measured by ``--gateway``.
- whole: non-streamed requests per second through the real gateway over HTTP on loopback, one
  keep-alive client, the replaying upstream in the gateway's process.

Every stream and answer is checked (the text, the call and its arguments, the stop reason):
a wrong translation cannot pass for a fast one.
"""

from __future__ import annotations

import http.client
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import orjson

from ..gateway.fronts.chat import ChatFront
from ..gateway.fronts.messages import MessagesFront
from ..gateway.fronts.responses import ResponsesFront
from ..gateway.replay.stack import Stack
from ..gateway.replay.upstream import Reply
from ..gateway.streaming import AnswerStream
from ..gateway.turn import Settings, plan_turn
from .script import CALL_ARGS, CALL_NAME, LEAD, REQUEST, Script, assemble, check_message, model_text

FRONTS: dict[str, tuple[Any, str]] = {"chat": (ChatFront(), "/v1/chat/completions"),
                                      "messages": (MessagesFront(), "/v1/messages"),
                                      "responses": (ResponsesFront(), "/v1/responses")}
OTHERS = ("messages", "responses")  # each compared with chat


def messages_request(stream: bool) -> dict[str, Any]:
    """The benchmark's request as an Anthropic Messages client sends it."""
    system, user = REQUEST["messages"]
    tools = [{"name": t["function"]["name"], "description": t["function"]["description"],
              "input_schema": t["function"]["parameters"]} for t in REQUEST["tools"]]
    return {"model": REQUEST["model"], "system": system["content"], "messages": [user], "tools": tools,
            "tool_choice": {"type": "auto"}, "temperature": REQUEST["temperature"],
            "max_tokens": REQUEST["max_tokens"], "stream": stream}


def responses_request(stream: bool) -> dict[str, Any]:
    """The benchmark's request as an OpenAI Responses client sends it."""
    system, user = REQUEST["messages"]
    tools = [{"type": "function", "name": t["function"]["name"], "description": t["function"]["description"],
              "parameters": t["function"]["parameters"], "strict": False} for t in REQUEST["tools"]]
    return {"model": REQUEST["model"], "instructions": system["content"], "input": user["content"],
            "tools": tools, "tool_choice": "auto", "temperature": REQUEST["temperature"],
            "max_output_tokens": REQUEST["max_tokens"], "stream": stream, "store": False}


def request(front: str, stream: bool) -> dict[str, Any]:
    if front == "messages":
        return messages_request(stream)
    return responses_request(stream) if front == "responses" else dict(REQUEST, stream=stream)


def check(front: str, body: bytes, stream: bool, dialect: str) -> str | None:
    """What is wrong with one answer as a client of ``front`` receives it (None: nothing)."""
    if front == "chat":
        if stream:
            chunks = [orjson.loads(e[6:]) for e in body.split(b"\n\n") if e.startswith(b"data: {")]
            return check_message(assemble(chunks), dialect, True)
        choice = orjson.loads(body)["choices"][0]
        return check_message({**choice["message"], "finish_reason": choice["finish_reason"]}, dialect, True)
    if front == "responses":
        return _check_response(_sse_response(body) if stream else orjson.loads(body))
    message = _sse_message(body) if stream else orjson.loads(body)
    texts = "".join(b["text"] for b in message["content"] if b["type"] == "text")
    calls = [(b["name"], b["input"]) for b in message["content"] if b["type"] == "tool_use"]
    if texts.strip() != LEAD.strip() or calls != [(CALL_NAME, CALL_ARGS)] or message["stop_reason"] != "tool_use":
        return f"unexpected message: {texts[:60]!r}, {calls!r:.120}, {message['stop_reason']!r}"
    return None


def _check_response(response: dict[str, Any]) -> str | None:
    texts = "".join(p["text"] for item in response["output"] if item["type"] == "message" for p in item["content"])
    calls = [(i["name"], json.loads(i["arguments"])) for i in response["output"] if i["type"] == "function_call"]
    if texts.strip() != LEAD.strip() or calls != [(CALL_NAME, CALL_ARGS)] or response["status"] != "completed":
        return f"unexpected response: {texts[:60]!r}, {calls!r:.120}, {response['status']!r}"
    return None


def _sse_response(body: bytes) -> dict[str, Any]:
    """The response a Responses stream assembles into: its deltas joined into the items it
    announced (the final event's own copy is not read), numbered from 0 without a gap."""
    items: dict[int, dict[str, Any]] = {}
    status, numbers = None, []
    for frame in body.split(b"\n\n"):
        if not frame.startswith(b"event: "):
            continue
        data = orjson.loads(frame.split(b"\ndata: ", 1)[1])
        numbers.append(data["sequence_number"])
        kind = data["type"]
        if kind == "response.output_item.added":
            items[data["output_index"]] = dict(data["item"], content=[{"text": ""}])
        elif kind == "response.output_text.delta":
            items[data["output_index"]]["content"][0]["text"] += data["delta"]
        elif kind == "response.function_call_arguments.delta":
            items[data["output_index"]]["arguments"] += data["delta"]
        elif kind in ("response.completed", "response.incomplete"):
            status = data["response"]["status"]
    if numbers != list(range(len(numbers))):
        status = "misnumbered events"
    return {"output": [items[i] for i in sorted(items)], "status": status}


def _sse_message(body: bytes) -> dict[str, Any]:
    """The message a Messages stream assembles into (text blocks, tool_use inputs, stop reason)."""
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    stop = None
    for frame in body.split(b"\n\n"):
        if not frame.startswith(b"event: "):
            continue
        data = orjson.loads(frame.split(b"\ndata: ", 1)[1])
        if data["type"] == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"])
        elif data["type"] == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                blocks[data["index"]]["text"] += delta["text"]
            elif delta["type"] == "input_json_delta":
                partial[data["index"]] = partial.get(data["index"], "") + delta["partial_json"]
        elif data["type"] == "message_delta":
            stop = data["delta"]["stop_reason"]
    for index, text in partial.items():
        blocks[index]["input"] = json.loads(text)
    return {"content": [blocks[i] for i in sorted(blocks)], "stop_reason": stop}


def stream_cost(script: Script, front: str, repeat: int) -> tuple[float, str | None]:
    """Median microseconds per upstream chunk of ``front``'s translation, and a failed check."""
    translator = FRONTS[front][0]
    turn = translator.turn(request(front, True))
    raws = [template % (b"chatcmpl-bench",) for template in script.chunks]
    runs, problem = [], None
    for _ in range(repeat):
        plan = plan_turn(turn, Settings(script.dialect))
        encoder = translator.stream(AnswerStream(plan))
        started = time.perf_counter()
        out = [encoder.feed_sse(orjson.loads(raw)) for raw in raws]
        out.append(encoder.finish_sse())
        runs.append(time.perf_counter() - started)
        problem = problem or check(front, b"".join(out), True, script.dialect)
    return 1e6 * statistics.median(runs) / len(raws), problem


def whole_rate(script: Script, seconds: float) -> dict[str, tuple[float, str | None]]:
    """Non-streamed requests per second through the gateway, per front, and a failed check."""
    out = {}
    text = model_text(script.dialect)
    with Stack(lambda body: Reply(content=text), tool_call_parser=script.dialect) as stack:
        port = int(stack.url.rsplit(":", 1)[1].split("/")[0])
        for front, (_, path) in FRONTS.items():
            body = orjson.dumps(request(front, False))
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
            count, problem = 0, None
            started = time.perf_counter()
            while time.perf_counter() - started < seconds:
                conn.request("POST", path, body, {"content-type": "application/json"})
                answer = conn.getresponse().read()
                problem = problem or check(front, answer, False, script.dialect)
                count += 1
            out[front] = (count / (time.perf_counter() - started), problem)
            conn.close()
    return out


def measure(dialect: str = "hermes", quick: bool = False) -> dict[str, Any]:
    """Both fronts' figures: ``{"stream_us_per_chunk": {front: us}, "whole_rps": {front: rps},
    "ratio": {...}, "problems": [...]}``."""
    script = Script.build(dialect)
    stream = {front: stream_cost(script, front, 20 if quick else 200) for front in FRONTS}
    whole = whole_rate(script, 0.5 if quick else 2.0)
    problems = [f"{front} {kind}: {p}" for kind, figures in (("stream", stream), ("whole", whole))
                for front, (_, p) in figures.items() if p]
    return {"dialect": dialect, "upstream_chunks": len(script.chunks),
            "stream_us_per_chunk": {f: round(v, 2) for f, (v, _) in stream.items()},
            "whole_rps": {f: round(v, 1) for f, (v, _) in whole.items()},
            "ratio": {front: {"stream": round(stream[front][0] / stream["chat"][0], 3),
                              "whole": round(whole["chat"][0] / whole[front][0], 3)} for front in OTHERS},
            "problems": problems}


def report(figures: dict[str, Any]) -> str:
    s, w, r = figures["stream_us_per_chunk"], figures["whole_rps"], figures["ratio"]
    lines = [(f"Fronts ({figures['dialect']}, {figures['upstream_chunks']} upstream chunks a turn; "
              "goal: each within 1.2x of chat)"),
             "  streamed translation, us per upstream chunk: chat " + f"{s['chat']:.2f}" + "".join(
                 f", {f} {s[f]:.2f} ({r[f]['stream']:.2f}x)" for f in OTHERS),
             "  non-streamed through the gateway, req/s: chat " + f"{w['chat']:.0f}" + "".join(
                 f", {f} {w[f]:.0f} ({r[f]['whole']:.2f}x the time)" for f in OTHERS)]
    lines += [f"  FAILED CHECK: {p}" for p in figures["problems"]]
    return "\n".join(lines)


def print_figures(measure: Callable[..., dict[str, Any]], report: Callable[[dict[str, Any]], str],
                  quick: bool = False) -> int:
    """Measure, print the report; 1 when a check failed (what a bench command returns)."""
    figures = measure(quick=quick)
    print(report(figures))
    return 1 if figures["problems"] else 0


def main(quick: bool = False) -> int:
    return print_figures(measure, report, quick)


if __name__ == "__main__":
    raise SystemExit(main())
