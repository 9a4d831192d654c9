"""Which server the upstream is, for sending it a grammar (``--upstream-kind auto``).

Read once per upstream from its ``GET /v1/models`` answer, the answer's body and its headers,
by what each server writes about itself (checked in their sources):

- vLLM: every model's ``owned_by`` is ``"vllm"``; SGLang's is ``"sglang"`` (the two share the
  listing's shape and often a port, so only this tells them apart);
- llama.cpp: ``owned_by: "llamacpp"``, a ``meta`` object per model and an Ollama-style
  ``models`` list beside ``data``; its HTTP server also sends ``Server: llama.cpp``;
- llama-cpp-python's server: ``owned_by: "me"``;
- Ollama: ``owned_by`` is the model name's namespace, ``"library"`` for the models it ships;
- OpenAI: ``owned_by`` is ``"openai"``, ``"system"`` or ``"openai-internal"``.

Anything else is unknown: the gateway then sends no grammar and says so once.
"""

from __future__ import annotations

from typing import Any

import orjson

_OWNERS = {"vllm": "vllm", "sglang": "sglang", "llamacpp": "llamacpp", "me": "llama-cpp-python", "library": "ollama",
           "openai": "openai", "system": "openai", "openai-internal": "openai"}


def kind_of(body: bytes, headers: list[tuple[bytes, bytes]]) -> str | None:
    """The upstream's kind from its ``/v1/models`` answer, or None when it says nothing known."""
    for name, value in headers:
        if name == b"server" and value.lower().startswith(b"llama.cpp"):
            return "llamacpp"
    try:
        listing = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(listing, dict) or not isinstance(listing.get("data"), list):
        return None
    models = [m for m in listing["data"] if isinstance(m, dict)]
    if "models" in listing and any(isinstance(m.get("meta"), dict) for m in models):
        return "llamacpp"
    kinds = {_OWNERS.get(m.get("owned_by")) for m in models if isinstance(m.get("owned_by"), str)}
    kinds.discard(None)
    return kinds.pop() if len(kinds) == 1 else None


def describe(body: bytes) -> str:
    """What the listing's ``owned_by`` fields say, for the log line of an unknown upstream."""
    try:
        listing: Any = orjson.loads(body)
        owners = sorted({str(m.get("owned_by")) for m in listing["data"] if isinstance(m, dict)})
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return "no model listing"
    return "owned_by " + (", ".join(owners)[:200] if owners else "absent")
