"""A constraint written for each kind of engine: GBNF, Lark, structural tag, JSON schema."""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import ConfigError
from ..syntax.dialect import Dialect
from ..syntax.shape import Args
from .compiler import Constraint
from .gbnf import to_gbnf
from .lark import to_lark
from .schema import expand_json
from .tag import structural_tag

FORMATS = ("structural-tag", "gbnf", "lark", "json-schema")
_SPECIAL = re.compile(r"<\|[^|<>]+\|>|<｜[^｜<>]+｜>")


def gbnf(constraint: Constraint, lazy: bool = False) -> str:
    """GBNF for llama.cpp (xgrammar reads it as EBNF too). ``lazy``: the grammar of the calls
    from a trigger on, for ``grammar_lazy`` with ``constraint.triggers`` as its triggers."""
    grammar = constraint.lazy() if lazy else constraint.whole()
    return to_gbnf(grammar, expand_json)


def special_tokens(dialect: Dialect) -> tuple[str, ...]:
    """The dialect's markers that are special tokens of its models' tokenizers (``<|...|>``
    and ``<｜...｜>`` spellings), where it declares its markers special."""
    if not dialect.special_markers or dialect.shape is None:
        return ()
    shape = dialect.shape
    text = " ".join([*shape.calls, *shape.section, *(dialect.reasoning or ()),
                     shape.args if isinstance(shape.args, str) else "", shape.answer or ""])
    return tuple(sorted(set(_SPECIAL.findall(text))))


def lark(constraint: Constraint, special: bool = False) -> str:
    """Lark for llguidance. Markers are quoted text, which any engine and a byte-level matcher
    accept; ``special``: markers that are special tokens written as token references."""
    return to_lark(constraint.whole(), special_tokens(constraint.dialect) if special else ())


def json_schema(constraint: Constraint) -> dict[str, Any]:
    """A JSON schema of the answer, for a dialect whose call is one plain JSON object (Ollama's
    ``format``). Raises ConfigError where that cannot say the constraint."""
    c = constraint
    keys = _envelope(c)
    if keys is None:
        raise ConfigError(f"dialect {c.dialect.name!r} does not write a call as one JSON object: "
                          "it has no JSON schema form (use gbnf, lark or structural-tag)")
    if c.mode == "auto" and c.final is None:
        raise ConfigError("a JSON schema cannot leave the answer free under tool_choice auto: "
                          "it says only a required or named call")
    name_key, args_key = keys
    options: list[Any] = [
        {"type": "object", "properties": {name_key: {"const": f.tool}, args_key: _schema_of(f.body)},
         "required": [name_key, args_key], "additionalProperties": False}
        for f in c.forms]
    if c.final is not None:
        options.append(json.loads(c.final.schema))  # type: ignore[union-attr]
    return options[0] if len(options) == 1 else {"anyOf": options}


def _envelope(c: Constraint) -> tuple[str, str] | None:
    """(name key, arguments key) when every call template is a bare JSON object."""
    if c.shape.args is not Args.JSON or any(c.shape.section):
        return None
    for template in c.shape.calls:
        try:
            value = json.loads(template.replace("{NAME}", "N").replace("{ARGS}", "0"))
        except ValueError:
            return None
        if not isinstance(value, dict) or sorted(value.values(), key=str) != [0, "N"]:
            return None
        return (next(k for k, v in value.items() if v == "N"), next(k for k, v in value.items() if v == 0))
    return None


def _schema_of(body: Any) -> Any:
    return json.loads(body.schema)


def build(constraint: Constraint, fmt: str, special: bool = False, lazy: bool = False) -> Any:
    """The constraint in ``fmt`` (one of FORMATS, or ``triggers``): text for ``gbnf`` and
    ``lark``, a dict for ``structural-tag`` and ``json-schema``, a tuple for ``triggers``."""
    if fmt == "gbnf":
        return gbnf(constraint, lazy)
    if fmt == "lark":
        return lark(constraint, special)
    if fmt == "structural-tag":
        return structural_tag(constraint)
    if fmt == "json-schema":
        return json_schema(constraint)
    if fmt == "triggers":
        return constraint.lazy_triggers
    raise ConfigError(f"unknown grammar format {fmt!r}; known: {', '.join(FORMATS)}")


def write(constraint: Constraint, fmt: str, special: bool = False) -> str:
    """The constraint as text in ``fmt`` (one of FORMATS)."""
    value = build(constraint, fmt, special)
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
