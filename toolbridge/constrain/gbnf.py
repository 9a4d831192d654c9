"""The grammar written as GBNF (llama.cpp; xgrammar reads the same EBNF).

GBNF has no lookahead, so a ``Text`` node (any text avoiding some strings, then one of them)
becomes one rule per state of the automaton that finds those strings, a state being the longest
prefix of one that the text read so far ends with; ``Json`` nodes are expanded into rules by the
given function (``toolbridge.constrain.schema.expand_json``); an ``Embed`` is written as its
fallback. Only the rules the root reaches are written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from .grammar import EMPTY, Alt, Chars, Embed, Grammar, Json, Lit, Node, Ref, Rep, Seq, Text, bounds, seq

_GBNF_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\"}
# Codes are written \uXXXX: llama.cpp knows no \^ (it rejects the grammar), and xgrammar reads
# \x with every hex digit that follows (\x01a as \x1a), where \u takes exactly four.
_CLASS_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\", "]": "\\]", "[": "\\[",
                  "^": "\\u005E", "-": "\\-"}


def _gbnf_char(c: str, table: dict[str, str]) -> str:
    if c in table:
        return table[c]
    return f"\\u{ord(c):04X}" if ord(c) < 0x20 or ord(c) == 0x7F else c


def _gbnf_class(node: Chars) -> str:
    body = "".join(_gbnf_char(a, _CLASS_ESCAPES) + ("" if a == b else "-" + _gbnf_char(b, _CLASS_ESCAPES))
                   for a, b in node.chars)
    return f"[{'^' if node.negated else ''}{body}]"


def _gbnf_lit(text: str) -> str:
    return '"' + "".join(_gbnf_char(c, _GBNF_ESCAPES) for c in text) + '"'


class _Gbnf:
    """Writes a grammar as GBNF, expanding ``Text`` and ``Json`` into rules of their own."""

    def __init__(self, grammar: Grammar, expand_json: Callable[[Grammar, str], Ref]) -> None:
        self.grammar = Grammar(dict(grammar.rules), grammar.root)
        self.expand_json = expand_json

    def text(self) -> str:
        """The root rule, then the rules it reaches (expansions add rules as they are met)."""
        lines = [f"root ::= {self.node(self.grammar.root, True)}"]
        done: set[str] = set()
        todo = self.reached(self.grammar.root)
        while todo:
            name = todo.pop(0)
            if name in done:
                continue
            done.add(name)
            rule = self.grammar.rules[name]
            lines.append(f"{name} ::= {self.node(rule, True)}")
            todo += [n for n in self.reached(rule) if n not in done]
        return "\n".join(lines) + "\n"

    def reached(self, node: Node) -> list[str]:
        """The rules ``node`` refers to once written (expanding its Text and Json nodes)."""
        if isinstance(node, Ref):
            return [node.name]
        if isinstance(node, (Seq, Alt)):
            return [n for i in node.items for n in self.reached(i)]
        if isinstance(node, Rep):
            return self.reached(node.item)
        if isinstance(node, (Text, Json)):
            return [self.node(node)]
        if isinstance(node, Embed):
            return self.reached(node.fallback)
        return []

    def node(self, node: Node, top: bool = False) -> str:
        if isinstance(node, Lit):
            return _gbnf_lit(node.text)
        if isinstance(node, Chars):
            return _gbnf_class(node)
        if isinstance(node, Ref):
            return node.name
        if isinstance(node, Seq):
            inner = " ".join(self.node(i) for i in node.items)
            return inner if top else f"({inner})"
        if isinstance(node, Alt):
            inner = " | ".join(self.node(i) for i in node.items)
            return inner if top else f"({inner})"
        if isinstance(node, Rep):
            return self.node(node.item) + bounds(node)
        if isinstance(node, Text):
            return text_rules(self.grammar, node).name
        if isinstance(node, Embed):
            return self.node(node.fallback, top)
        return self.expand_json(self.grammar, node.schema).name


def text_rules(grammar: Grammar, node: Text) -> Ref:
    """Rules for a ``Text`` node: one per state of the automaton that finds the avoided strings,
    a state being the longest prefix of one of them that the text read so far ends with."""
    digest = hashlib.sha1(repr((node.avoid, node.then)).encode()).hexdigest()[:8]
    key = f"text-{digest}"
    states = sorted({""} | {a[:k] for a in node.avoid for k in range(len(a))}, key=lambda p: (len(p), p))
    number = {p: i for i, p in enumerate(states)}
    if f"{key}-0" in grammar.rules:
        return Ref(f"{key}-0")
    alphabet = sorted({c for a in node.avoid for c in a})
    for state in states:
        moves: list[Node] = [EMPTY] if node.then is None else []
        for c in alphabet:
            read = state + c
            found = [a for a in node.avoid if read.endswith(a)]
            if found:
                if node.then in found:
                    moves.append(Lit(c))
                continue
            after = next(read[i:] for i in range(len(read) + 1) if read[i:] in number)
            moves.append(seq(Lit(c), Ref(f"{key}-{number[after]}")))
        other = alphabet or ["\x00"]  # with nothing to avoid, any character (but NUL)
        moves.append(seq(Chars(tuple((c, c) for c in other), True), Ref(f"{key}-0")))
        grammar.rules[f"{key}-{number[state]}"] = Alt(tuple(moves))
    return Ref(f"{key}-0")


def to_gbnf(grammar: Grammar, expand_json: Callable[[Grammar, str], Ref]) -> str:
    """The grammar as GBNF text, root rule ``root``."""
    return _Gbnf(grammar, expand_json).text()


