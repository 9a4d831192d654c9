"""Random tools and calls for the constraint tests: schemas, arguments that satisfy them, and
the strings a dialect may carry inside an argument.

Schemas use the keywords the compiler expresses (``type`` string/integer/number/boolean/null,
``enum``, nested ``object`` with ``required``, ``array`` with ``items``). Arguments follow their
schema's property order, as the grammar writes members. Strings mix quotes, backslashes,
newlines, non-ASCII and the dialect's own markers, except those at which the dialect's reader ends
a raw-text value (``covered_dialects`` and ``value_markers`` say which).
"""

from __future__ import annotations

import keyword
import re
from typing import Any

from hypothesis import strategies as st

from toolbridge.dialects import get_dialect
from toolbridge.syntax.dialect import Dialect, registered

WORDS = ("alpha", "beta", "gamma", "delta", "Paris", "two words", "naïve")
PIECES = ('"', "'", "\\", "\\n", "\n", "\t", "{", "}", "[", "]", "<", ">", "é", "日本", "🙂", "a\\u0041", " ")


def covered_dialects() -> list[str]:
    """The dialects that declare a shape, one per distinct (shape, renderer, reasoning): rows
    that only rename a family (nemotron_v3, deepseek_r1 ...) are not compiled again."""
    seen: set[Any] = set()
    names = []
    for name, dialect in sorted(registered().items()):
        if name != dialect.name or dialect.shape is None or dialect.render is None:
            continue
        key = (dialect.shape, dialect.render, dialect.reasoning)
        if key not in seen:
            seen.add(key)
            names.append(name)
    return names


def raw_close(dialect: Dialect) -> tuple[str, ...]:
    """What ends a raw-text value of the dialect (none where arguments are JSON or Python)."""
    shape = dialect.shape
    assert shape is not None
    if not isinstance(shape.args, str):
        return ()
    after = shape.args.partition("{VALUE}")[2].lstrip()
    close = after[: after.index(">") + 1] if after.startswith("<") else after
    return (close, *shape.value_ends)


def value_markers(dialect: str | Dialect) -> list[str]:
    """The dialect's markers that may stand inside a string argument."""
    dialect = get_dialect(dialect)
    shape = dialect.shape
    assert shape is not None
    literal = " ".join([*shape.calls, *shape.section, shape.args if isinstance(shape.args, str) else "",
                        *(dialect.reasoning or ())])
    found = set(re.findall(r"<[^<>{}]*>|\[[A-Z_/]+\]", literal)) | set(dialect.reasoning or ())
    ends = raw_close(dialect)
    return sorted(m for m in found if not any(e in m or m in e for e in ends))


def strings(dialect: Dialect) -> st.SearchStrategy[str]:
    """Strings for the dialect's arguments."""
    ends = raw_close(dialect)
    # No NUL, and no DEL: llguidance's JSON strings refuse a raw DEL, which JSON allows.
    pieces = st.one_of(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\x7f"),
                               max_size=6),
                       st.sampled_from(PIECES + tuple(value_markers(dialect))))
    text = st.lists(pieces, max_size=4).map("".join)
    return text.filter(lambda s: not any(e in s for e in ends)) if ends else text


IDENT = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True).filter(lambda k: not keyword.iskeyword(k))

LEAVES = st.one_of(
    st.sampled_from([{"type": t} for t in ("string", "integer", "number", "boolean", "null")]),
    st.lists(st.one_of(st.sampled_from(WORDS), st.integers(-5, 5)), min_size=1, max_size=4, unique=True)
    .map(lambda values: {"enum": values}),
)


def objects(values: st.SearchStrategy[Any], least: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """Object schemas of ``values``: keys unique, a random subset required."""
    def build(members: list[tuple[str, Any, bool]]) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": {k: v for k, v, _ in members}}
        required = [k for k, _, req in members if req]
        if required:
            schema["required"] = required
        return schema

    member = st.tuples(IDENT, values, st.booleans())
    return st.lists(member, min_size=least, max_size=4, unique_by=lambda m: m[0]).map(build)


def _nested(leaves: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.recursive(
        leaves, lambda inner: st.one_of(objects(inner), inner.map(lambda s: {"type": "array", "items": s})),
        max_leaves=6)


SCHEMAS = _nested(LEAVES)
# Arguments whose JSON holds no free string, beside top-level strings: for raw-text dialects,
# whose readers end a value at a close tag even inside a JSON string of a typed value.
NO_JSON_STRINGS = st.one_of(st.just({"type": "string"}),
                            _nested(LEAVES.filter(lambda s: s.get("type") != "string")))


def tools(properties: st.SearchStrategy[dict[str, Any]] = SCHEMAS) -> st.SearchStrategy[list[dict[str, Any]]]:
    """One to three tools with distinct names, each an object schema of random ``properties``."""
    tool = st.tuples(IDENT, objects(properties))
    return st.lists(tool, min_size=1, max_size=3, unique_by=lambda t: t[0]).map(
        lambda found: [{"type": "function", "function": {"name": n, "parameters": p}} for n, p in found])


def value(schema: dict[str, Any], text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """A value satisfying ``schema`` (one of those ``SCHEMAS`` draws)."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema["type"]
    if kind == "object":
        return arguments(schema, text)
    if kind == "array":
        return st.lists(value(schema["items"], text), max_size=3)
    return {
        "string": text,
        "integer": st.integers(-(10**12), 10**12),
        "number": st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-999, 999)),
        "boolean": st.booleans(),
        "null": st.none(),
    }[kind]


def arguments(schema: dict[str, Any], text: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    """An object satisfying ``schema``, its keys in the schema's order, optional ones at random."""
    props = schema.get("properties", {})
    required = set(schema.get("required", ()))
    parts = [st.tuples(st.just(k), value(s, text), st.just(True) if k in required else st.booleans())
             for k, s in props.items()]
    return st.tuples(*parts).map(lambda found: {k: v for k, v, keep in found if keep})


def calls(offered: list[dict[str, Any]], dialect: Dialect) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """A call of one of the offered tools with arguments that satisfy its schema."""
    text = strings(dialect)
    return st.one_of(*(st.tuples(st.just(t["function"]["name"]), arguments(t["function"]["parameters"], text))
                       for t in offered))


def takes_text(dialect: Dialect, schema: dict[str, Any]) -> bool:
    """Whether any string is a valid raw value for ``schema`` in the dialect."""
    return isinstance(dialect.shape and dialect.shape.args, str) and schema.get("type") == "string"


def wrong(dialect: Dialect, schema: dict[str, Any]) -> Any:
    """A value ``schema`` refuses however the dialect spells it (None: there is none here)."""
    if schema.get("type") == "string":
        return None if takes_text(dialect, schema) else 7
    return "oops"

