"""Compiled constraints shared by requests that offer the same tools (agents resend theirs every
turn): keyed by the dialect, the tools' canonical JSON and the options, least recently used
dropped first."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from ..syntax.dialect import Dialect
from .compiler import compile_tools
from .writers import build

SIZE = 256

try:  # the gateway's extra: a key of 128 tools in ~60 us instead of ~800
    import orjson

    def _key(value: Any) -> bytes:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=str)
except ImportError:  # pragma: no cover - the library without the serve extra
    def _key(value: Any) -> bytes:
        return json.dumps(value, sort_keys=True, default=str).encode()

_lock = threading.Lock()
_entries: OrderedDict[bytes, Any] = OrderedDict()


def grammar_for(dialect: Dialect, tools: list[dict[str, Any]], fmt: str, *, tool_choice: Any = "auto",
                parallel_tool_calls: bool = True, strict: bool | None = None, reasoning: str = "auto",
                response_format: Any = None, special: bool = False, lazy: bool = False, drift: str = "off") -> Any:
    """The constraint in ``fmt``: ``gbnf`` (text; ``lazy`` for the calls from a trigger on),
    ``lark`` (text), ``structural-tag`` or ``json-schema`` (dicts; do not change them), and
    ``triggers`` (a tuple). Raises ConfigError as ``compile_tools`` and the writers do (errors
    are not cached)."""
    options = (tool_choice, parallel_tool_calls, strict, reasoning, response_format, special, lazy, drift)
    key = _key([dialect.name, fmt, tools, options])
    with _lock:
        if key in _entries:
            _entries.move_to_end(key)
            return _entries[key]
    constraint = compile_tools(dialect, tools, tool_choice=tool_choice,
                               parallel_tool_calls=parallel_tool_calls, strict=strict,
                               reasoning=reasoning, response_format=response_format, drift=drift)
    value = build(constraint, fmt, special, lazy)
    with _lock:
        _entries[key] = value
        while len(_entries) > SIZE:
            _entries.popitem(last=False)
    return value


def clear() -> None:
    """Forget every compiled constraint (the benchmark times compiling without the cache)."""
    with _lock:
        _entries.clear()
