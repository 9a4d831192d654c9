"""Upstream errors that say "this model takes no tools" (Ollama, vLLM, llama.cpp), and the flag
that works around them named in the error a client gets."""

from __future__ import annotations

import orjson

from ...errors import FLAG_HINT

# How upstreams say that they will not take ``tools`` (Ollama, vLLM, llama.cpp), lower-cased.
REFUSALS = ("does not support tools", "--enable-auto-tool-choice", "--tool-call-parser",
            "tools param requires --jinja")
def is_refusal(raw: bytes) -> bool:
    """Whether an upstream error body says that it does not take tools."""
    text = raw[:4000].decode("utf-8", "replace").lower()
    return any(fragment in text for fragment in REFUSALS)


def name_the_flag(raw: bytes) -> bytes:
    """An upstream "tools not supported" error with the flag that works around it added."""
    if not is_refusal(raw):
        return raw
    try:
        body = orjson.loads(raw)
        message = str(body["error"]["message"])
    except (orjson.JSONDecodeError, KeyError, TypeError):
        message = raw[:2000].decode("utf-8", "replace")
    hint = f" (toolbridge: the upstream takes no tools; {FLAG_HINT} writes them into the prompt)"
    return orjson.dumps({"error": {"message": message + hint, "type": "invalid_request_error",
                                   "param": "tools", "code": "tool_fallback_required"}})
