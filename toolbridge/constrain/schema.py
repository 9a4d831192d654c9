"""JSON schemas as grammar rules: values spelled as JSON, or as Python literals (pythonic calls).

Covered: ``type`` (one or a list), ``enum``, ``const``, ``properties`` with ``required``,
``additionalProperties`` (a schema for the values of an object without ``properties``),
``items`` with ``minItems``/``maxItems``, strings' ``minLength``/``maxLength``, ``anyOf``,
``oneOf``, ``allOf`` (merged), and ``$ref`` to ``#/$defs/...`` or ``#/definitions/...``, which may
be recursive. An object with ``properties`` is written with its declared properties only, in their
declared order, the optional ones optional (what constrained decoding engines do: any order would
make the grammar grow with the factorial of the count). Numbers are those a 64-bit integer or
a double holds (up to 18 digits, exponents up to 308). Numeric bounds, ``pattern`` and
``format`` are not expressed: the arguments' validation still checks them.

Whitespace between tokens is at most ``WS_MOST`` blanks, so that a sampler cannot wander in it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .grammar import EMPTY, Grammar, Lit, Node, Ref, Rep, alt, chars, opt, seq

WS_MOST = 8
WS = Rep(chars(" \t\n"), 0, WS_MOST)
_HEX = chars("0-9a-fA-F")
# Numbers a 64-bit integer or a double holds (18 digits, exponents up to 308; a negative one
# up to 999, which at worst reads as 0.0): JSON's syntax
# allows any, but a reader of raw text or Python literals cannot type 1e400 as a number, and a
# sampler left free writes such exponents readily.
_INTEGER = seq(opt(Lit("-")), alt(Lit("0"), seq(chars("1-9"), Rep(chars("0-9"), 0, 17))))
_NUMBER = seq(_INTEGER, opt(seq(Lit("."), Rep(chars("0-9"), 1, 32))),
              opt(seq(chars("eE"), alt(
                  seq(Lit("-"), Rep(chars("0-9"), 1, 3)),  # small numbers at worst become 0.0
                  seq(opt(Lit("+")), alt(Rep(chars("0-9"), 1, 2), seq(chars("12"), Rep(chars("0-9"), 2, 2)),
                                         seq(Lit("30"), chars("0-8"))))))))
_JSON_CHAR = alt(chars('"\\\\\x00-\x1f', True),
                 seq(Lit("\\"), alt(chars('"\\\\/bfnrt'), seq(Lit("u"), Rep(_HEX, 4, 4)))))
# \U names a code point: at most 0010FFFF (Python refuses a larger one).
_PY_ESCAPE = seq(Lit("\\"), alt(chars("\\\\'\"nrt0abfv"), seq(Lit("x"), Rep(_HEX, 2, 2)),
                                seq(Lit("u"), Rep(_HEX, 4, 4)),
                                seq(Lit("U00"), alt(seq(Lit("0"), Rep(_HEX, 5, 5)), seq(Lit("10"), Rep(_HEX, 4, 4))))))


def _key(schema: Any, python: bool) -> str:
    text = json.dumps(schema, sort_keys=True, ensure_ascii=False)
    return ("py-" if python else "json-") + hashlib.sha1(text.encode()).hexdigest()[:10]


class Values:
    """Builds the rules of one grammar's values; ``root`` is the schema ``$ref`` resolves in."""

    def __init__(self, grammar: Grammar, python: bool = False, root: Any = None) -> None:
        self.grammar = grammar
        self.python = python
        self.root = root if isinstance(root, dict) else {}

    def value(self, schema: Any) -> Node:
        """A value following ``schema``: a reference to its rule."""
        if schema is True or not isinstance(schema, dict) or not schema:
            return self.any()
        return self.grammar.define(_key(schema, self.python), lambda: self._build(schema))

    def any(self) -> Ref:
        name = "py-any" if self.python else "json-any"
        return self.grammar.define(name, lambda: alt(
            self.string(), Ref(self._number()), *self._words(), self.array({}), self.object({})))

    def _number(self) -> str:
        return self.grammar.define("number", _NUMBER).name

    def _words(self) -> list[Node]:
        return [Lit(w) for w in (("True", "False", "None") if self.python else ("true", "false", "null"))]

    def _build(self, schema: dict[str, Any]) -> Node:
        if "$ref" in schema:
            return self.value(self._resolve(schema["$ref"]))
        if "const" in schema:
            return self.literal(schema["const"])
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return alt(*(self.literal(v) for v in schema["enum"]))
        for word in ("anyOf", "oneOf"):
            if isinstance(schema.get(word), list) and schema[word]:
                return alt(*(self.value({**_without(schema, word), **s} if isinstance(s, dict) else s)
                             for s in schema[word]))
        if isinstance(schema.get("allOf"), list):
            return self.value(_merge(_without(schema, "allOf"), schema["allOf"]))
        types = schema.get("type")
        if isinstance(types, list):
            return alt(*(self._typed(t, schema) for t in types)) if types else self.any()
        if types is None:
            types = "object" if "properties" in schema else "array" if "items" in schema else None
        return self._typed(types, schema) if types else self.any()

    def _typed(self, kind: str, schema: dict[str, Any]) -> Node:
        if kind == "string":
            return self.string(schema.get("minLength", 0), schema.get("maxLength"))
        if kind == "integer":
            return self.grammar.define("integer", _INTEGER)
        if kind == "number":
            return Ref(self._number())
        if kind == "boolean":
            return alt(*self._words()[:2])
        if kind == "null":
            return self._words()[2]
        if kind == "array":
            return self.array(schema)
        if kind == "object":
            return self.object(schema)
        return self.any()

    def literal(self, value: Any) -> Node:
        if self.python:
            return Lit(_python_literal(value))
        return Lit(json.dumps(value, ensure_ascii=False))

    def string(self, least: int = 0, most: int | None = None) -> Node:
        if not self.python:
            body = Rep(_JSON_CHAR, least, most)
            return seq(Lit('"'), body, Lit('"')) if (least, most) != (0, None) else \
                self.grammar.define("json-string", seq(Lit('"'), body, Lit('"')))
        # A raw line break (CR too) or NUL ends Python source's string literal or the source.
        quoted = [seq(Lit(q), Rep(alt(chars(q + "\\\\\n\r\x00", True), _PY_ESCAPE), least, most), Lit(q))
                  for q in ("'", '"')]
        return alt(*quoted) if (least, most) != (0, None) else self.grammar.define("py-string", alt(*quoted))

    def array(self, schema: dict[str, Any]) -> Node:
        item = self.value(schema.get("items", True))
        least, most = int(schema.get("minItems", 0)), schema.get("maxItems")
        more = Rep(seq(WS, Lit(","), WS, item), max(least - 1, 0), None if most is None else max(most - 1, 0))
        items = seq(item, more)
        if most == 0:
            items = EMPTY
        elif least == 0:
            items = opt(items)
        return seq(Lit("["), WS, items, WS, Lit("]"))

    def object(self, schema: dict[str, Any]) -> Node:
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            if schema.get("additionalProperties") is False and "properties" in schema:
                return seq(Lit("{"), WS, Lit("}"))
            pair = seq(self.string(), WS, Lit(":"), WS, self.value(schema.get("additionalProperties", True)))
            return seq(Lit("{"), WS, opt(seq(pair, Rep(seq(WS, Lit(","), WS, pair)))), WS, Lit("}"))
        required = set(schema.get("required") or ())
        members = [(seq(self.literal(k), WS, Lit(":"), WS, self.value(s)), k in required)
                   for k, s in props.items()]
        return seq(Lit("{"), WS, members_node(self.grammar, _key(schema, self.python), members,
                                              seq(WS, Lit(","), WS)), WS, Lit("}"))

    def kwargs(self, schema: Any) -> Node:
        """Python keyword arguments ``k=v, ...`` for an arguments schema (pythonic calls)."""
        props = schema.get("properties") if isinstance(schema, dict) else None
        if props == {} and schema.get("additionalProperties") is False:
            return EMPTY
        if not isinstance(props, dict) or not props:
            pair = seq(Rep(chars("a-zA-Z0-9_"), 1, None), Lit("="), self.any())
            return opt(seq(pair, Rep(seq(Lit(","), WS, pair))))
        required = set(schema.get("required") or ())
        members = [(seq(Lit(k + "="), self.value(s)), k in required) for k, s in props.items()]
        return members_node(self.grammar, "kw-" + _key(schema, True), members, seq(Lit(","), WS))

    def _resolve(self, ref: Any) -> Any:
        node: Any = self.root
        if not isinstance(ref, str) or not ref.startswith("#"):
            return True
        for part in [p for p in ref[1:].split("/") if p]:
            if not isinstance(node, dict) or part not in node:
                return True
            node = node[part]
        return node


def members_node(grammar: Grammar, key: str, members: list[tuple[Node, bool]], sep: Node) -> Node:
    """Members in order, the optional ones optional, with ``sep`` between those written: rule
    ``first(i)`` writes from member i on with none written yet, so that no separator leads."""
    def after(i: int) -> Node:  # members i.. once one has been written
        return seq(*(seq(sep, m) if req else opt(seq(sep, m)) for m, req in members[i:]))

    def first(i: int) -> Node:
        if i == len(members):
            return EMPTY
        member, req = members[i]
        if req:
            return seq(member, after(i + 1))
        return alt(seq(member, after(i + 1)), grammar.define(f"{key}-from-{i + 1}", lambda: first(i + 1)))

    return grammar.define(f"{key}-members", lambda: first(0))


def expand_json(grammar: Grammar, schema_text: str) -> Ref:
    """The rule of a ``Json`` node's schema (the GBNF writer's expansion)."""
    schema = json.loads(schema_text)
    node = Values(grammar, root=schema).value(schema)
    return node if isinstance(node, Ref) else grammar.define(_key(schema, False) + "-v", node)


def _python_literal(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return repr(value)


def _without(schema: dict[str, Any], word: str) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != word}


def _merge(base: dict[str, Any], parts: list[Any]) -> dict[str, Any]:
    merged = dict(base)
    for part in parts:
        if not isinstance(part, dict):
            continue
        for k, v in part.items():
            if k == "properties" and isinstance(v, dict):
                merged["properties"] = {**merged.get("properties", {}), **v}
            elif k == "required" and isinstance(v, list):
                merged["required"] = [*merged.get("required", []), *v]
            else:
                merged.setdefault(k, v)
    return merged
