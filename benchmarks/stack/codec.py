"""JSON codec used by every proxy: ``json`` (stdlib) or ``orjson``.

``get_codec(name)`` returns ``(loads, dumps)`` where ``loads`` takes bytes and ``dumps`` returns
compact UTF-8 bytes, so the proxies are identical apart from the HTTP stack.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Codec = tuple[Callable[[bytes], Any], Callable[[Any], bytes]]


def get_codec(name: str) -> Codec:
    if name == "orjson":
        import orjson

        return orjson.loads, orjson.dumps
    if name == "json":
        encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
        return json.loads, lambda obj: encode(obj).encode()
    raise ValueError(f"unknown codec {name!r} (json or orjson)")
