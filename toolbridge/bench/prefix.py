"""What an upstream with prefix caching would re-read per turn: the prompt prefix consecutive
upstream requests share.

An upstream (vLLM, SGLang, llama.cpp) renders a chat request as its template does: the system
message, the tools, then the messages in order; its prefix cache reuses the longest prefix a
request shares with an earlier one, and reads the rest anew. ``prompt`` renders a chat request
in that order in a template-like text (role markers, the tools as JSON, each message's reasoning,
content, calls and result), so the prefix two renderings share is the prefix the upstream's
prompts share up to where a real template would put the same bytes. Tokens are estimated at 4
characters a token (the gateway's own estimate), so the figures compare, they do not count.

``session`` replays a Claude Code session from a captured ``/v1/messages`` request: turn by
turn, the assistant calls a tool and the result comes back, as Claude Code sends them (its
attribution block in the first system block, with the per-request values that block carries in
other set-ups: ``cch=``, a ``cc_version`` whose suffix follows the first user message), each
request read by the Messages front with the stable prompt on and off.
"""

from __future__ import annotations

import argparse
import copy
import json
import urllib.request
from pathlib import Path
from typing import Any

from ..gateway.replay.stack import Stack
from ..gateway.replay.upstream import Reply

CHARS_PER_TOKEN = 4


def prompt(body: dict[str, Any]) -> str:
    """A chat request's prompt as a template orders it (see the module docstring)."""
    messages = body.get("messages") or []
    out: list[str] = []
    start = 0
    if messages and messages[0].get("role") == "system":
        out.append("<|system|>\n" + _text(messages[0].get("content")))
        start = 1
    if body.get("tools"):
        out.append("<|tools|>\n" + json.dumps(body["tools"], sort_keys=True))
    for message in messages[start:]:
        out.append(_message(message))
    return "\n".join(out) + "\n"


def _message(message: dict[str, Any]) -> str:
    parts = [f"<|{message.get('role')}|>"]
    if message.get("reasoning_content"):
        parts.append("<think>" + message["reasoning_content"] + "</think>")
    if message.get("tool_call_id"):
        parts.append(f"[result {message['tool_call_id']}]")
    parts.append(_text(message.get("content")))
    for call in message.get("tool_calls") or ():
        parts.append(json.dumps(call, sort_keys=True))
    return "\n".join(parts)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def shared(a: str, b: str) -> int:
    """The length of the prefix two prompts share."""
    n = min(len(a), len(b))
    i = 0
    step = 4096
    while i < n and a[i:i + step] == b[i:i + step]:  # whole blocks first: prompts are long
        i += step
    while i < n and a[i] == b[i]:
        i += 1
    return min(i, n)


def rereads(prompts: list[str]) -> list[dict[str, int]]:
    """Per request: its length, the prefix it shares with the request before (the cached part),
    and the tokens the upstream reads anew (all of the first)."""
    out = []
    for k, text in enumerate(prompts):
        cached = shared(prompts[k - 1], text) if k else 0
        out.append({"chars": len(text), "shared": cached,
                    "reread_tokens": -(-(len(text) - cached) // CHARS_PER_TOKEN)})
    return out


def session(captured: dict[str, Any], turns: int, volatile: bool = True) -> list[dict[str, Any]]:
    """``turns`` Messages requests of one Claude Code session grown from a captured first
    request: each adds the assistant's call and the tool's result. ``volatile``: the attribution
    block's ``cch=`` changes every request (a hash of the body, as Claude Code sends it to
    Anthropic's API and Vertex) and its ``cc_version`` suffix once, midway (it follows the first
    user message, which a compaction replaces); else the block stays as captured."""
    bodies = []
    body = copy.deepcopy(captured)
    for turn in range(turns):
        request = copy.deepcopy(body)
        if volatile:
            suffix = "707" if turn < turns // 2 else "3fa"
            request["system"][0]["text"] = (f"x-anthropic-billing-header: cc_version=2.1.197.{suffix}; "
                                            f"cc_entrypoint=sdk-cli; cch={(0x1f3a7 * (turn + 3)) % 0xfffff:05x};")
        bodies.append(request)
        call_id = f"toolu_bench{turn:04d}"
        body["messages"].append({"role": "assistant", "content": [
            {"type": "thinking", "thinking": f"Step {turn + 1}: read the next file.", "signature": "c2ln"},
            {"type": "tool_use", "id": call_id, "name": "Read", "input": {"file_path": f"/work/f{turn}.txt"}}]})
        body["messages"].append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": f"{turn + 1}\tline {turn + 1} of the file\n" * 20}]})
    return bodies


CAPTURE = "claude-code-1-first-turn.json"
CAPTURES = Path(__file__).resolve().parents[3] / "shared" / "captures"  # beside the checkout


def replayed(bodies: list[dict[str, Any]], stable: bool) -> list[dict[str, int]]:
    """The bodies through a gateway (``--stable-prompt`` or not) in front of a replaying
    upstream, over HTTP: the figures of the prompts the upstream was sent."""
    with Stack(lambda body: Reply(content="Done."), stable_prompt=stable) as s:
        for body in bodies:
            asked = urllib.request.Request(s.url + "/messages", data=json.dumps({**body, "stream": False}).encode(),
                                           headers={"content-type": "application/json"})
            with urllib.request.urlopen(asked, timeout=60) as answer:
                answer.read()
        return rereads([prompt(sent) for sent in s.upstream.requests])


def main(argv: list[str] | None = None) -> int:
    """Print, per turn of a Claude Code session replayed from the captured request, the tokens an
    upstream with prefix caching would re-read, without and with the stable prompt: the block as
    captured (Claude Code 2.1.197 through a gateway), then with its per-request values (``cch``
    every request, the ``cc_version`` suffix midway). Returns 1 when the capture is absent or the
    stable prompt does not keep the whole earlier prompt cached."""
    parser = argparse.ArgumentParser(prog="toolbridge bench --prefix")
    parser.add_argument("--captures", default=str(CAPTURES), help="the folder of captured requests")
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args(argv)
    path = Path(args.captures) / CAPTURE
    if not path.exists():
        print(f"prefix: {path} is absent: nothing to replay")
        return 1
    captured = json.loads(path.read_text())["body"]
    print(f"prefix cache: a {args.turns}-turn Claude Code session replayed from {CAPTURE}; tokens the "
          f"upstream re-reads per turn (estimated at {CHARS_PER_TOKEN} characters a token)")
    ok = True
    for volatile, title in ((False, "attribution block as captured"), (True, "cch per request, cc_version midway")):
        bodies = session(captured, args.turns, volatile)
        before, after = replayed(bodies, False), replayed(bodies, True)
        print(f"  {title}:")
        print("    turn " + " ".join(f"{k + 1:>6}" for k in range(args.turns)) + "   total")
        for name, rows in (("before", before), ("after", after)):
            figures = [row["reread_tokens"] for row in rows]
            print(f"    {name:<6} " + " ".join(f"{n:>6}" for n in figures) + f" {sum(figures):>7}")
        ok = ok and all(row["shared"] == after[k - 1]["chars"] for k, row in enumerate(after) if k)
    return 0 if ok else 1
