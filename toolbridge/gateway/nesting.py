"""The nesting bound on requests: one check for every front, and where a body passes it.

A request body nests arrays and objects at most ``MAX_NESTING`` levels, the body itself counting
as one (the bound the core keeps on a model's arguments; real requests stay well under 20).
Deeper input is refused with a 400 naming the path to where it passes the bound, spelled as the
front spells field paths (``PATHS``: ``messages.1.content.0.input`` for Messages,
``input[2].content[0]`` for Chat Completions and Responses), before anything walks it: the
fronts' translations, the encoder (orjson stops at 254 levels and raises a foreign error), and
the recursive walks of tool schemas.

A front that builds its turn out of the body (Messages, Responses) has the decoded body checked
here before it translates it (``check_body``); the chat front's turn holds the body's own values,
so its nesting is checked on the turn (``turn.check_nesting``, which names the path the same way).
Whether a body is within the bound is told at C speed by the encoder (``encoded_within``); the
path is found by a walk only for a body that is refused.
"""

from __future__ import annotations

import functools
from typing import Any

import orjson

from ..limits import MAX_DEPTH, deeper_than

MAX_NESTING = MAX_DEPTH
# The spellings of a field's path: Messages writes ``tools.0.name``, the OpenAI APIs ``tools[0].name``.
PATHS = ("dotted", "indexed")


def deep_where(body: Any, paths: str, limit: int = MAX_NESTING) -> str | None:
    """Where ``body`` (decoded JSON) nests arrays and objects more than ``limit`` levels deep
    (the body itself is the first level), spelled as ``paths`` says (``PATHS``); None when it
    is within the bound (``turn.check_body`` raises the 400)."""
    if type(body) not in _CONTAINERS or encoded_within(body, limit) is not None:
        return None
    path = deep_path(body, limit)
    return None if path is None else spelled(path, paths)


def too_deep(where: str, limit: int = MAX_NESTING) -> str:
    """The message refusing a body that passes ``limit`` below ``where``."""
    return f"{where}: nests arrays and objects more than {limit} levels deep (counting the request body)"


def deep_path(value: Any, limit: int) -> list[str | int] | None:
    """The keys and indices from ``value`` down to the first array or object below the first
    ``limit`` levels (``value`` itself is level 1), at most ``SHOWN`` of them; None when it
    nests no deeper. A walk with an explicit stack (no recursion however deep the value), each
    entry linking to its parent, so that only the path found is built."""
    if not deeper_than(value, limit):
        return None
    stack: list[tuple[Any, int, Any]] = [(value, 1, None)]  # (container, level, link to its parent)
    while stack:
        container, level, link = stack.pop()
        if level > limit:
            return _path(link)[:SHOWN]
        items = container.items() if type(container) is dict else enumerate(container)
        inner = [(v, level + 1, (k, link)) for k, v in items if type(v) in _CONTAINERS]
        stack += reversed(inner)  # the first member is walked first: the path is the document's first
    return None  # not reached: the walk above found it deeper


# The keys a refusal names: enough to tell which field of the request holds the nesting.
SHOWN = 8


def _path(link: Any) -> list[str | int]:
    out: list[str | int] = []
    while link is not None:
        key, link = link
        out.append(key)
    return out[::-1]


def spelled(path: list[str | int], paths: str) -> str:
    """``path`` as a front spells it: ``dotted`` (``tools.0.name``) or ``indexed``
    (``tools[0].name``); the empty path is the body."""
    if not path:
        return "the request body"
    if paths == "dotted":
        return ".".join(map(str, path))
    out = ""
    for key in path:
        out += f"[{key}]" if type(key) is int else f".{key}" if out else str(key)
    return out


_CONTAINERS = (dict, list)


def encoded_within(value: Any, levels: int) -> bytes | None:
    """The JSON text of ``value`` when it nests at most ``levels`` arrays and objects, told by
    the encoder at C speed: under as many arrays as take it to the encoder's own bound, one
    level more fails. None when that cannot tell (deeper, or not JSON): then walk the value.
    The encoder counts at least every dict and list the walk does, so its word is sound."""
    spare = encoder_depth() - levels
    if spare <= 0:
        return None if spare < 0 else _dumps(value)
    pool = _WRAPPERS.get(spare) or _WRAPPERS.setdefault(spare, [])
    try:
        outer, inner = pool.pop()
    except IndexError:  # none free (another thread may have taken the last one since)
        outer, inner = _wrapper(spare)
    inner.append(value)
    try:
        text = orjson.dumps(outer)
    except orjson.JSONEncodeError:
        return None
    finally:
        inner.clear()
        pool.append((outer, inner))
    return text[spare:len(text) - spare]


def _dumps(value: Any) -> bytes | None:
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return None


def _wrapper(spare: int) -> tuple[list[Any], list[Any]]:
    """``spare`` arrays nested in one another (the outermost, the innermost), the innermost
    empty, for the value."""
    outer = inner = []
    for _ in range(spare - 1):
        inner.append([])
        inner = inner[0]
    return outer, inner


# Wrappers by depth, free for use: building them is most of the cost of a small value's check,
# so they are kept. A thread takes one for itself (a list's pop and append are atomic), and only
# a thread that finds none free makes one: a pool holds at most one per thread.
_WRAPPERS: dict[int, list[tuple[list[Any], list[Any]]]] = {}


@functools.cache
def encoder_depth() -> int:
    """How many arrays orjson nests before it refuses (254 in the versions known), found once by
    trying, so that another version's bound is used as it is."""
    value: Any = []
    for depth in range(1, MAX_ENCODER_DEPTH + 1):
        try:
            orjson.dumps(value)
        except orjson.JSONEncodeError:
            return depth - 1
        value = [value]
    return 0  # no bound found: never rely on one


MAX_ENCODER_DEPTH = 1024
