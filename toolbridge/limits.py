"""The bounds the parsing core keeps on what a model writes, and JSON reading within them.

A model's output is untrusted input: every value the core reads is bounded, so no answer can
raise a foreign exception or cost more than linear work.

- ``MAX_DEPTH``: arrays and objects nest at most this deep in a call's arguments. Deeper JSON is
  malformed (the block stays text); a raw-text value nested deeper stays a string.
- ``MAX_INT_DIGITS``: an integer with more digits than Python converts (its int-string limit)
  is kept as its digits in a JSON string (reported as repaired): never lost, never a crash, and
  a client's own JSON parser can read the arguments.
- ``NaN`` and ``Infinity`` are not JSON: a value written so, or a number beyond a float's range,
  is not read as a number (typed arguments stay the text the model wrote).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

MAX_DEPTH = 128
MAX_INT_DIGITS = min(4300, sys.get_int_max_str_digits() or 4300) if hasattr(sys, "get_int_max_str_digits") else 4300

_BRACKETS = re.compile(r'"(?:[^"\\]++|\\.)*+"?|[\[\]{}]', re.DOTALL)  # a string read in one match


_CONTAINERS = frozenset({dict, list})


def deeper_than(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a decoded ``value`` nests arrays and objects more than ``limit`` levels (a
    scalar: 0).

    Level by level, without recursion; a container holding only scalars is passed over by
    ``map(type, ...)`` at C speed, so the walk costs about what decoding the value did.
    """
    level = [value] if type(value) in _CONTAINERS else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        inner: list[Any] = []
        for container in level:
            items = container.values() if type(container) is dict else container
            if not _CONTAINERS.isdisjoint(map(type, items)):
                inner += [v for v in items if type(v) in _CONTAINERS]
        level = inner
    return False


def too_deep(text: str, limit: int = MAX_DEPTH) -> bool:
    """True when JSON-like ``text`` nests brackets deeper than ``limit`` (strings skipped)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for m in _BRACKETS.finditer(text):
        ch = m.group()
        if ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def big_int(literal: str) -> bool:
    """True for an integer literal with more digits than Python converts."""
    return len(literal) - literal.startswith("-") > MAX_INT_DIGITS


BIG_INT_KEPT = f"an integer of more than {MAX_INT_DIGITS} digits kept as a string"


def number_text(literal: str) -> str:
    """A JSON number literal as arguments carry it: itself, or an integer too long for Python
    to convert as a string of its digits (report ``BIG_INT_KEPT``)."""
    return f'"{literal}"' if big_int(literal) and literal.lstrip("-").isdigit() else literal


def _int(literal: str) -> int:
    if big_int(literal):
        raise ValueError(f"an integer of {len(literal)} digits")
    return int(literal)


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _float(literal: str) -> float:
    value = float(literal)
    if value in (_INF, -_INF):
        raise ValueError(f"{literal[:20]}... is beyond a float's range")
    return value


_INF = float("inf")
# Made once: json.loads with hooks makes a decoder at every call, which costs more than a
# small value's decoding.
_DECODER = json.JSONDecoder(parse_int=_int, parse_float=_float, parse_constant=_constant)


def loads(text: str) -> Any:
    """``json.loads`` within the bounds; every failure is a ValueError."""
    if too_deep(text):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    try:
        return _DECODER.decode(text)
    except RecursionError as exc:  # not reachable within MAX_DEPTH; kept as a guard
        raise ValueError("nested too deep") from exc
