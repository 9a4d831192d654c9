"""A small grammar, written out as GBNF (llama.cpp; xgrammar reads the same EBNF) or as Lark
(llguidance, vLLM's guidance backend).

Nodes are frozen values: literals, one character of a set, sequences, choices, bounded or open
repetition, references to named rules, ``Text`` (any text avoiding some strings, optionally
ended by one of them: ``until(stop)``) and ``Json`` (a JSON value following a schema). The two node kinds
that engines spell differently are expanded by each writer:

- ``Text`` (any text avoiding some strings, then one of them): GBNF has no lookahead, so it
  becomes one rule per state of the automaton that finds those strings (a state is the longest
  prefix of one that the text read so far ends with). Lark gets one lazy terminal, which ends at
  the first occurrence.
- ``Json``: GBNF gets the schema expanded into rules (``toolbridge.constrain.schema``); Lark
  embeds it as ``%json {...}``, which llguidance compiles itself.

In Lark, a subtree made only of literals and character sets becomes one regular expression: one
lexeme, so that llguidance's greedy lexer never has to choose where one of ours ends.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
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


# -- GBNF ------------------------------------------------------------------------------------

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
            return self.node(node.item) + _bounds(node)
        if isinstance(node, Text):
            return text_rules(self.grammar, node).name
        if isinstance(node, Embed):
            return self.node(node.fallback, top)
        return self.expand_json(self.grammar, node.schema).name


def _bounds(node: Rep) -> str:
    low, high = node.least, node.most
    if (low, high) == (0, None):
        return "*"
    if (low, high) == (1, None):
        return "+"
    if (low, high) == (0, 1):
        return "?"
    return f"{{{low},{'' if high is None else high}}}"


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


# -- Lark (llguidance) ------------------------------------------------------------------------

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
    return _rx_atom(node.item) + _bounds(node)


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
            return f"({item}){_bounds(node)}"
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
