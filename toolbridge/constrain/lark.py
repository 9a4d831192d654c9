"""The grammar written as Lark for llguidance (vLLM's guidance backend).

A subtree made only of literals and character sets becomes one regular expression: one lexeme,
so that llguidance's greedy lexer never has to choose where one of ours ends. A ``Text`` node is
one lazy terminal, which ends at the first occurrence of its stop string; ``Json`` is embedded as
``%json {...}`` and a freeform tool's grammar as ``%lark {...}`` or a regex terminal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from .grammar import Alt, Chars, Embed, Grammar, Json, Lit, Node, Ref, Rep, Seq, Text, bounds

_REGEX_META = set("\\.+*?()|[]{}^$#&-~/\"")


def _rx_char(c: str, in_class: bool = False) -> str:
    if c == "\n":
        return "\\n"
    if c == "\r":
        return "\\r"
    if c == "\t":
        return "\\t"
    if ord(c) < 0x20 or ord(c) == 0x7F:
        return f"\\x{{{ord(c):02X}}}"
    return "\\" + c if c in _REGEX_META else c


def _rx(node: Node) -> str:
    if isinstance(node, Lit):
        return "".join(_rx_char(c) for c in node.text)
    if isinstance(node, Chars):
        body = "".join(_rx_char(a) + ("" if a == b else "-" + _rx_char(b)) for a, b in node.chars)
        return f"[{'^' if node.negated else ''}{body}]"
    if isinstance(node, Seq):
        return "".join(_rx_group(i) for i in node.items)
    if isinstance(node, Alt):
        return "(?:" + "|".join(_rx(i) for i in node.items) + ")"
    assert isinstance(node, Rep)
    return _rx_atom(node.item) + bounds(node)


def _rx_group(node: Node) -> str:
    return f"(?:{_rx(node)})" if isinstance(node, Alt) else _rx(node)


def _rx_atom(node: Node) -> str:
    if isinstance(node, Chars) or (isinstance(node, Lit) and len(node.text) == 1):
        return _rx(node)
    return f"(?:{_rx(node)})"


class _Lark:
    def __init__(self, grammar: Grammar, special: Iterable[str]) -> None:
        self.grammar = grammar
        self.special = sorted(set(special), key=len, reverse=True)
        self.terminals: list[str] = []
        self.named: dict[str, str] = {}  # a text terminal's expression -> its name

    def text(self) -> str:
        lines = [f"start: {self.node(self.grammar.root, True)}"]
        for name, node in self.grammar.rules.items():
            lines.append(f"{_lark_name(name)}: {self.node(node, True)}")
        lines += self.terminals
        return "\n".join(lines) + "\n"

    def regexable(self, node: Node) -> bool:
        if isinstance(node, Lit):
            return not any(tok in node.text for tok in self.special)
        if isinstance(node, Chars):
            return True
        if isinstance(node, (Seq, Alt)):
            return all(self.regexable(i) for i in node.items)
        # A repetition of whole literals (calls of tools without parameters) stays a Lark
        # repetition: as one regex it would run on into what follows when that starts as the
        # next repetition does, and the lexer does not give back what it took.
        return isinstance(node, Rep) and self.regexable(node.item) and _character_level(node.item)

    def node(self, node: Node, top: bool = False) -> str:
        if isinstance(node, Lit) and node.text and not self.regexable(node):
            return self.lit(node.text)
        if isinstance(node, Lit) or (self.regexable(node) and not isinstance(node, Lit)):
            return json.dumps(node.text, ensure_ascii=False) if isinstance(node, Lit) else f"/{_rx(node)}/"
        if isinstance(node, Ref):
            return _lark_name(node.name)
        if isinstance(node, Seq):
            inner = " ".join(self.node(i) for i in node.items)
            return inner if top else f"({inner})"
        if isinstance(node, Alt):
            items = node.items
            opens = "".join(_json_opens(i) for i in items)
            if opens:
                items = tuple(_split_head(i, opens) for i in items)
            inner = " | ".join(self.node(i) for i in items)
            return inner if top else f"({inner})"
        if isinstance(node, Rep):
            return self.rep(node)
        if isinstance(node, Text):
            return self.text_terminal(node)
        if isinstance(node, Embed):
            then = json.dumps(node.then, ensure_ascii=False)
            if node.syntax == "regex":
                return "/" + node.definition.replace("/", "\\/") + "/ " + then
            return "%lark {\n" + node.definition.strip("\n") + "\n} " + then
        assert isinstance(node, Json)
        return f"%json {node.schema}"

    def text_terminal(self, node: Text) -> str:
        """A ``Text`` as one terminal: lazy, so that it ends at the first ``then``; the other
        avoided strings are excluded from it. A special token is never part of text (it is a
        token of its own, not bytes): avoided strings holding one need no exclusion, and a
        ``then`` that starts with one follows the text as its token reference."""
        then = node.then
        if then is not None and any(then.startswith(t) for t in self.special):
            return f"{self.text_terminal(Text(node.avoid, None, node.not_first))} {self.lit(then)}"
        others = [a for a in node.avoid if a != then and not any(t in a for t in self.special)]
        rx = "/(?s:.*)/" if then is None else f"/(?s:.*){_rx(Lit(then))}/"
        if others:
            rx += f" & ~/(?s:.*(?:{'|'.join(_rx(Lit(a)) for a in others)}).*)/"
        if node.not_first:
            rx += f" & ~/{_rx(Lit(node.not_first))}(?s:.*)/"
        if rx in self.named:
            return self.named[rx]
        name = f"text_{len(self.named)}"
        if then is None:
            name = name.upper()
            self.terminals.append(f"{name}: {rx}")
        else:
            self.terminals.append(f"{name}[lazy]: {rx}")
        self.named[rx] = name
        return name

    def rep(self, node: Rep) -> str:
        item = self.node(node.item)
        if node.most is None or (node.least, node.most) == (0, 1):
            return f"({item}){bounds(node)}"
        return " ".join([item] * node.least + [f"({item})?"] * (node.most - node.least))

    def lit(self, text: str) -> str:
        """A literal holding special tokens, each written as the engine's token reference."""
        pieces = re.split("(" + "|".join(re.escape(t) for t in self.special) + ")", text)
        return " ".join(p if p in self.special else json.dumps(p, ensure_ascii=False)
                        for p in pieces if p)


def _json_opens(node: Node) -> str:
    """The brackets a JSON value at the start of ``node`` may open with."""
    if isinstance(node, Json):
        schema = json.loads(node.schema)
        kind = schema.get("type") if isinstance(schema, dict) else None
        return {"object": "{", "array": "["}.get(kind, "") if isinstance(kind, str) else "{["
    if isinstance(node, Seq):
        return _json_opens(node.items[0]) if node.items else ""
    return "".join(_json_opens(i) for i in node.items) if isinstance(node, Alt) else ""


def _split_head(node: Node, opens: str) -> Node:
    """``node`` with a leading literal that opens as a JSON choice beside it does cut after its
    bracket. Beside a final JSON answer, ``{"name": ...`` calls would keep llguidance's lexer,
    which looks back one byte at most, inside their long literal where the JSON's ``{`` ends.
    (Other literals stay whole: cut, they could meet the same trouble with their neighbours, a
    ``[`` beside ``[THINK]``.)"""
    if isinstance(node, Lit) and len(node.text) > 1 and node.text[0] in opens:
        return Seq((Lit(node.text[0]), Lit(node.text[1:])))
    if isinstance(node, Seq) and node.items:
        head = _split_head(node.items[0], opens)
        return Seq((*(head.items if isinstance(head, Seq) else (head,)), *node.items[1:]))
    if isinstance(node, Alt):
        return Alt(tuple(_split_head(i, opens) for i in node.items))
    return node


def _character_level(node: Node) -> bool:
    """Whether a node reads a character or an escape at a time (no literal word in it)."""
    if isinstance(node, Lit):
        return len(node.text) <= 2
    if isinstance(node, (Seq, Alt)):
        return all(_character_level(i) for i in node.items)
    if isinstance(node, Rep):
        return _character_level(node.item)
    return isinstance(node, Chars)


def _lark_name(name: str) -> str:
    return name.replace("-", "_")


def to_lark(grammar: Grammar, special_tokens: Iterable[str] = ()) -> str:
    """The grammar as Lark for llguidance; ``special_tokens`` are written ``<|name|>`` (the
    engine's reference to a token) instead of as quoted text."""
    return _Lark(grammar, special_tokens).text()
