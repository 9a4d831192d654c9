"""What the gateway benchmark's test upstream says, and what a client must receive from it.

One agent turn, as a model answers it: a sentence of content, then a call to ``edit_file``, in
the model's own dialect (``hermes`` JSON or ``qwen3_coder`` XML). The request offers three
tools, so the gateway parses and translates. The call's arguments come in sizes (``ARGS``,
``call_args(size)``): ``small``, about 300 characters, and ``33k`` (or any ``<N>k``), whose
``new_string`` is N thousand characters of code, streamed in the same 4-character deltas. The
size ``prose`` is the turn without a call: the sentence and a paragraph of prose (about as long
as the small turn), which the gateway must pass on as it is, still with the tools offered.

- ``pieces(dialect, size)``: the model text as a server's detokeniser streams it, one token per
  delta: markers (special tokens) whole, everything else 4 characters at a time.
- ``Script``: the upstream's chunk templates (a ``%b`` slot for the response id, which carries
  the stream's number so the load generator can match chunks to the upstream's send times),
  the non-streamed answer, and, for a client of the gateway or of a plain proxy, which upstream
  chunk each received chunk comes from (``sources``) and the message it must assemble into.

Invariant: ``sources`` is computed by running the gateway's own translator over the same
chunks, and the load generator checks every stream's chunk count and assembled message against
it, so a mismatch shows up as a check failure, never as a wrong delay figure.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

MODEL = "qwen3-coder-30b-a3b-instruct"
PATH = "/v1/chat/completions"
TOKEN = 4  # characters per content delta, about one token
LEAD = "I'll fix `close()` so the held-back tail is written before the final chunk.\n\n"
CALL_NAME = "edit_file"
CALL_ARGS: dict[str, Any] = {
    "path": "toolbridge/gateway/streaming.py",
    "old_string": "        if resp.paused:\n            return\n        resp.end(tail)",
    "new_string": "        if resp.paused:\n            await resp.drain()\n"
                  "        resp.end(tail + DONE)  # the tail before [DONE]",
    "expected_replacements": 1,
}
_TOOL_PARAMS = {
    "read_file": {"path": {"type": "string"}, "start_line": {"type": "integer"}},
    "edit_file": {"path": {"type": "string"}, "old_string": {"type": "string"},
                  "new_string": {"type": "string"}, "expected_replacements": {"type": "integer"}},
    "run_tests": {"path": {"type": "string"}, "max_failures": {"type": "integer"}},
}
TOOLS = [{"type": "function", "function": {
    "name": name, "description": f"{name.replace('_', ' ').capitalize()} in the workspace.",
    "parameters": {"type": "object", "properties": props, "required": ["path"]}}}
    for name, props in _TOOL_PARAMS.items()]
REQUEST: dict[str, Any] = {
    "model": MODEL,
    "messages": [
        {"role": "system", "content": "You are a careful coding assistant. Use the tools."},
        {"role": "user", "content": "The gateway drops the last chunk of a streamed answer when "
                                    "the client is slow. Find the flush and fix it."},
    ],
    "tools": TOOLS,
    "tool_choice": "auto",
    "temperature": 0.2,
    "max_tokens": 1024,
}
PROSE = ("The flush happens in `close()`, but only when the client is ready to take more: a "
         "slow client leaves the tail in the buffer, and the final chunk goes out without it. "
         "Writing the tail first, then waiting for the drain, keeps the order and loses "
         "nothing. I will make that change and run the streaming tests again.")
DIALECTS = ("hermes", "qwen3_coder")
ARGS = ("small", "prose", "33k")  # the sizes ``make bench`` measures; any ``<N>k`` works
SHORT = ("small", "prose")  # the sizes streamed at the chat rate and at every stream level


def arg_chars(size: str) -> int:
    """Characters of ``new_string`` in a call of ``size`` (0: ``small``, the ~300-char call, and
    ``prose``, the turn without a call)."""
    if size in SHORT:
        return 0
    if size.endswith("k") and size[:-1].isdigit() and int(size[:-1]) > 0:
        return int(size[:-1]) * 1000
    raise ValueError(f"argument size {size!r} is neither 'small' nor '<N>k' (e.g. 33k)")


@functools.lru_cache(maxsize=8)
def call_args(size: str = "small") -> dict[str, Any]:
    """The call's arguments: ``CALL_ARGS``, with a ``new_string`` of ``arg_chars(size)``
    characters of code (indented numbered lines, ending in ``;``) unless ``small``."""
    n = arg_chars(size)
    if not n:
        return CALL_ARGS
    lines, total, i = [], 0, 0
    while total < n:
        line = (f"        tail_{i} = await resp.drain()  # flush {i}: the held-back tail "
                f"goes out before [DONE]\n")
        lines.append(line)
        total, i = total + len(line), i + 1
    text = "".join(lines)[:n - 1] + ";"
    return dict(CALL_ARGS, new_string=text)


def model_text(dialect: str, size: str = "small") -> str:
    """The model's raw answer in ``dialect``: content, then one call with ``size`` arguments
    (``prose``: content only)."""
    if size == "prose":
        return f"{LEAD}{PROSE}"
    args = call_args(size)
    if dialect == "hermes":
        call = json.dumps({"name": CALL_NAME, "arguments": args})
        return f"{LEAD}<tool_call>\n{call}\n</tool_call>"
    if dialect == "qwen3_coder":
        params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in args.items())
        return f"{LEAD}<tool_call>\n<function={CALL_NAME}>\n{params}</function>\n</tool_call>"
    raise ValueError(f"no benchmark script for dialect {dialect!r} (one of {DIALECTS})")


def pieces(dialect: str, size: str = "small") -> list[str]:
    """The model text as streamed deltas: special-token markers whole, the rest in 4 characters."""
    text, out = model_text(dialect, size), []
    for i, part in enumerate(text.replace("</tool_call>", "<tool_call>").split("<tool_call>")):
        if i:
            out.append("<tool_call>" if i == 1 else "</tool_call>")
        out += [part[j:j + TOKEN] for j in range(0, len(part), TOKEN)]
    assert "".join(out) == text
    return out


def _chunk(delta: dict[str, Any], finish: str | None) -> bytes:
    body = {"id": "@ID@", "object": "chat.completion.chunk", "created": 1733140000, "model": MODEL,
            "system_fingerprint": "fp_44709d6fcb",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
    return json.dumps(body, separators=(",", ":")).replace("%", "%%").replace("@ID@", "%b").encode()


@dataclass(frozen=True)
class Script:
    """Everything the upstream sends and the load generator checks, for one dialect and one
    argument size."""

    dialect: str
    chunks: tuple[bytes, ...]  # templates; ``template % (id,)`` is the chunk's JSON
    completion: bytes  # the non-streamed answer, a chat.completion with the text as content
    size: str = "small"  # of the call's arguments (``call_args``)

    @classmethod
    def build(cls, dialect: str, size: str = "small") -> Script:
        deltas = [{"role": "assistant", "content": ""},
                  *({"content": p} for p in pieces(dialect, size))]
        chunks = [_chunk(d, None) for d in deltas] + [_chunk({}, "stop")]
        message = {"role": "assistant", "content": model_text(dialect, size)}
        answer = {"id": "chatcmpl-bench", "object": "chat.completion", "created": 1733140000,
                  "model": MODEL, "choices": [{"index": 0, "logprobs": None,
                                               "finish_reason": "stop", "message": message}],
                  "usage": {"prompt_tokens": 412, "completion_tokens": 87, "total_tokens": 499}}
        return cls(dialect, tuple(chunks), json.dumps(answer, separators=(",", ":")).encode(), size)

    def request(self, stream: bool, **extra: Any) -> bytes:
        return json.dumps(dict(REQUEST, stream=stream, **extra), separators=(",", ":")).encode()

    def sources(self, translated: bool) -> list[int]:
        """For each chunk a client receives, the index of the upstream chunk it comes from.

        A plain proxy relays chunk for chunk; the gateway's translator may hold text back (a
        possible marker) or split a chunk, and its closing chunks come with the last one.
        """
        if not translated:
            return list(range(len(self.chunks)))
        from ..gateway.fronts.chat import StreamTranslator, plan_request
        from ..gateway.turn import Settings

        plan = plan_request(json.loads(self.request(True)), Settings(self.dialect))
        translator = StreamTranslator(plan)
        out: list[int] = []
        for seq, template in enumerate(self.chunks):
            out += [seq] * len(translator.feed(json.loads(template % (b"x",))))
        return out + [len(self.chunks) - 1] * len(translator.finish())

    def call_source(self) -> int | None:
        """The index of the upstream chunk the call comes out of, sent whole: the one whose text
        ends the call for the gateway's parser, which also holds the call's last character
        (None for ``prose``: no call)."""
        from ..gateway.fronts.chat import StreamTranslator, plan_request
        from ..gateway.turn import Settings

        plan = plan_request(json.loads(self.request(True)), Settings(self.dialect))
        translator = StreamTranslator(plan)
        for seq, template in enumerate(self.chunks):
            if any(has_call(c) for c in translator.feed(json.loads(template % (b"x",)))):
                return seq
        return None

    def check(self, chunks: list[dict[str, Any]], sources: list[int],
              translated: bool) -> str | None:
        """What is wrong with one stream as a client received it (None: nothing)."""
        if len(chunks) != len(sources):
            return f"{len(chunks)} chunks, expected {len(sources)}"
        return check_message(assemble(chunks), self.dialect, translated, self.size)


def has_call(chunk: dict[str, Any]) -> bool:
    """Whether a client chunk carries a piece of a tool call."""
    return any((choice.get("delta") or {}).get("tool_calls") for choice in chunk.get("choices") or ())


def assemble(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The message and finish reason a client builds from a stream's chunks."""
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    for chunk in chunks:
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            content.append(delta.get("content") or "")
            for part in delta.get("tool_calls") or ():
                call = calls.setdefault(part["index"], {"name": "", "arguments": "", "id": None})
                call["id"] = call["id"] or part.get("id")
                call["name"] += (part.get("function") or {}).get("name") or ""
                call["arguments"] += (part.get("function") or {}).get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    return {"content": "".join(content), "tool_calls": [calls[i] for i in sorted(calls)],
            "finish_reason": finish}


def check_message(message: dict[str, Any], dialect: str, translated: bool,
                  size: str = "small") -> str | None:
    """Compare an assembled (or non-streamed) message with what the script must give."""
    if not translated or size == "prose":
        ok = message.get("content") == model_text(dialect, size) and not message.get("tool_calls")
        if ok and translated and message.get("finish_reason") != "stop":
            return f"finish_reason {message.get('finish_reason')!r}, expected 'stop'"
        return None if ok else "the relayed text differs from the model's"
    calls = message.get("tool_calls") or []
    if (message.get("content") or "").strip() != LEAD.strip():
        return f"content {message.get('content')!r}, expected {LEAD.strip()!r}"
    if len(calls) != 1 or not calls[0].get("id"):
        return f"{len(calls)} tool calls (or no id), expected one"
    fn = calls[0].get("function") or calls[0]
    if fn.get("name") != CALL_NAME or json.loads(fn.get("arguments") or "null") != call_args(size):
        return f"call {fn.get('name')!r} with {fn.get('arguments')!r:.300} is not the expected one"
    if message.get("finish_reason") != "tool_calls":
        return f"finish_reason {message.get('finish_reason')!r}, expected 'tool_calls'"
    return None
