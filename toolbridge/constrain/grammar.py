"""A small grammar that each engine's writer spells its own way (``gbnf``, ``lark``, ``tag``).

Nodes are frozen values: literals, one character of a set, sequences, choices, bounded or open
repetition, references to named rules, ``Text`` (any text avoiding some strings, optionally ended
by one of them: ``until(stop)``), ``Json`` (a JSON value following a schema) and ``Embed`` (text
following a freeform tool's own grammar). ``Grammar`` holds the named rules and the root.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True, slots=True)
class Lit:
    text: str


@dataclass(frozen=True, slots=True)
class Chars:
    """One character: any of ``chars`` (single characters and ``a-z`` ranges as pairs), or with
    ``negated`` any character but those."""

    chars: tuple[tuple[str, str], ...]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Alt:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Rep:
    item: Node
    least: int = 0
    most: int | None = None  # None: no bound


@dataclass(frozen=True, slots=True)
class Ref:
    name: str


@dataclass(frozen=True, slots=True)
class Text:
    """Any text in which none of ``avoid`` occurs, then ``then`` (one of ``avoid``: its first
    occurrence ends the text), or with ``then`` None the text runs to the end."""

    avoid: tuple[str, ...]
    then: str | None = None
    # A start the text does not have (an optional reasoning block's opener before prose). Only
    # Lark says it: llguidance's lexer, which does not backtrack, must not take the opener for
    # text; the other engines search every parse and need no such hint.
    not_first: str = ""


def until(stop: str) -> Text:
    """Any text up to and including the first ``stop``."""
    return Text((stop,), stop)


@dataclass(frozen=True, slots=True)
class Json:
    """A JSON value following ``schema`` (its JSON text, so that the node is hashable)."""

    schema: str


@dataclass(frozen=True, slots=True)
class Embed:
    """Text following a freeform tool's own grammar (``syntax`` ``lark`` or ``regex``), then the
    literal ``then``, where the engine reads that syntax (Lark: ``%lark {...}`` or a regex
    terminal); elsewhere ``fallback``, which must say the same text and ``then`` (GBNF has
    neither syntax)."""

    syntax: str
    definition: str
    then: str
    fallback: Node


Node = Union[Lit, Chars, Seq, Alt, Rep, Ref, Text, Json, Embed]
EMPTY = Lit("")


def chars(spec: str, negated: bool = False) -> Chars:
    """A character set from a class body such as ``a-zA-Z_`` (``-`` last or first is itself)."""
    pairs: list[tuple[str, str]] = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            pairs.append((spec[i], spec[i + 2]))
            i += 3
        else:
            pairs.append((spec[i], spec[i]))
            i += 1
    return Chars(tuple(pairs), negated)


def seq(*items: Node) -> Node:
    flat: list[Node] = []
    for item in items:
        if isinstance(item, Seq):
            flat.extend(item.items)
        elif item != EMPTY:
            flat.append(item)
    merged: list[Node] = []
    for item in flat:  # adjacent literals become one
        if merged and isinstance(item, Lit) and isinstance(merged[-1], Lit):
            merged[-1] = Lit(merged[-1].text + item.text)
        else:
            merged.append(item)
    return merged[0] if len(merged) == 1 else Seq(tuple(merged)) if merged else EMPTY


def alt(*items: Node) -> Node:
    unique = tuple(dict.fromkeys(items))
    return unique[0] if len(unique) == 1 else Alt(unique)


def opt(item: Node) -> Node:
    return Rep(item, 0, 1)


@dataclass
class Grammar:
    """Named rules and the root; ``define`` gives a rule a name once and returns its reference."""

    rules: dict[str, Node] = field(default_factory=dict)
    root: Node = EMPTY

    def define(self, name: str, build: Node | Callable[[], Node]) -> Ref:
        """The rule ``name`` (``build`` is called once, after the name is taken, so that a
        recursive schema can refer to itself)."""
        name = _name(name)
        if name not in self.rules:
            self.rules[name] = EMPTY
            self.rules[name] = build() if callable(build) else build
        return Ref(name)


def _name(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "r"


def bounds(node: Rep) -> str:
    """A repetition's bounds as both GBNF and regular expressions write them."""
    low, high = node.least, node.most
    if (low, high) == (0, None):
        return "*"
    if (low, high) == (1, None):
        return "+"
    if (low, high) == (0, 1):
        return "?"
    return f"{{{low},{'' if high is None else high}}}"
