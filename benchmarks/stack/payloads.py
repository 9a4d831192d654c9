"""Fixed, realistic OpenAI payloads shared by the upstream and the load generator.

- ``REQUEST`` / ``STREAM_REQUEST``: a ~1 KB chat request (system + user message, one tool).
- ``COMPLETION``: a ~1 KB ``chat.completion`` with a tool call (the non-streamed answer).
- ``chunk(seq, n, sent_ns)``: one ``chat.completion.chunk`` (~300 bytes). Two extra fields,
  ``x_seq`` and ``x_sent_ns`` (the upstream's CLOCK_MONOTONIC send time), let the load generator
  check order and loss and measure delay; a decoding/re-encoding proxy carries them through.
"""

from __future__ import annotations

import json

MODEL = "qwen3-coder-30b-a3b-instruct"
PATH = "/v1/chat/completions"

_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file from the workspace and return its content.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path relative to the root"},
                    "start_line": {"type": "integer", "minimum": 1},
                    "end_line": {"type": "integer", "minimum": 1},
                },
                "required": ["path"],
            },
        },
    }
]

_REQUEST = {
    "model": MODEL,
    "messages": [
        {
            "role": "system",
            "content": "You are a careful coding assistant. Use the tools to inspect the "
            "repository before answering, and answer concisely with code where helpful.",
        },
        {
            "role": "user",
            "content": "The gateway drops the last chunk of a streamed answer when the client "
            "is slow. Read toolbridge/stream.py and tell me where the flush happens, then "
            "propose a fix with a short patch and a test that reproduces the problem.",
        },
    ],
    "tools": _TOOLS,
    "tool_choice": "auto",
    "temperature": 0.2,
    "top_p": 0.95,
    "max_tokens": 1024,
    "user": "bench-user-0001",
}


def request_body(stream: bool, **extra: object) -> bytes:
    body = dict(_REQUEST, stream=stream, **extra)
    if stream:
        body["stream_options"] = {"include_usage": False}
    return json.dumps(body, separators=(",", ":")).encode()


REQUEST = request_body(False)
STREAM_REQUEST = request_body(True)

COMPLETION = json.dumps(
    {
        "id": "chatcmpl-8a1f0c2e9b7d4e6f8a0b1c2d3e4f5a6b",
        "object": "chat.completion",
        "created": 1733140000,
        "model": MODEL,
        "system_fingerprint": "fp_44709d6fcb",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "I'll start by reading the streaming module to find where the "
                    "buffered text is flushed at the end of the stream, then check how the "
                    "final chunk is emitted when the client applies back-pressure. If the writer "
                    "returns early while paused, the tail is lost; the fix is to await the "
                    "drain and then emit the pending text before the final chunk.",
                    "tool_calls": [
                        {
                            "id": "call_3b1f2a9c8d7e6f5a4b3c2d1e",
                            "type": "function",
                            "function": {
                                "name": "read_file",
                                "arguments": json.dumps(
                                    {"path": "toolbridge/stream.py", "start_line": 1,
                                     "end_line": 200}
                                ),
                            },
                        }
                    ],
                },
                "logprobs": None,
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 412, "completion_tokens": 87, "total_tokens": 499,
                  "prompt_tokens_details": {"cached_tokens": 384}},
    },
    separators=(",", ":"),
).encode()

_WORDS = [
    " The", " flush", " happens", " in", " `close()`", ",", " after", " the", " parser",
    " drains", " its", " pending", " buffer", ";", " when", " the", " writer", " is",
    " paused", " we", " return", " early", " and", " never", " emit", " the", " tail", ".",
    " Here", "'s", " a", " fix", ":", "\n\n```python\n", "def", " close", "(self", "):",
]
_HEAD = (
    '{"id":"chatcmpl-8a1f0c2e9b7d4e6f8a0b1c2d3e4f5a6b","object":"chat.completion.chunk",'
    f'"created":1733140000,"model":"{MODEL}","system_fingerprint":"fp_44709d6fcb",'
    '"choices":[{"index":0,"delta":'
)
_FIRST = (_HEAD + '{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],'
          '"usage":null,"x_seq":%d,"x_sent_ns":%d}').encode()
_LAST = (_HEAD + '{},"logprobs":null,"finish_reason":"stop"}],'
         '"usage":null,"x_seq":%d,"x_sent_ns":%d}').encode()
_MIDDLE = [
    (_HEAD + '{"content":' + json.dumps(w) + '},"logprobs":null,"finish_reason":null}],'
     '"usage":null,"x_seq":%d,"x_sent_ns":%d}').encode()
    for w in _WORDS
]


def chunk(seq: int, n: int, sent_ns: int) -> bytes:
    """JSON of chunk ``seq`` (0-based) of an ``n``-chunk stream."""
    if seq == 0:
        tpl = _FIRST
    elif seq == n - 1:
        tpl = _LAST
    else:
        tpl = _MIDDLE[seq % len(_MIDDLE)]
    return tpl % (seq, sent_ns)


if __name__ == "__main__":
    import time

    print("request", len(REQUEST), "completion", len(COMPLETION))
    print("chunk sizes", sorted({len(chunk(i, 60, time.monotonic_ns())) for i in range(60)}))
    json.loads(COMPLETION)
    for i in range(60):
        json.loads(chunk(i, 60, 1))
