"""A constraint as an xgrammar structural tag (what vLLM and SGLang take over HTTP).

The calls become tags (begin, content, end) dispatched by the dialect's trigger: under
``tool_choice`` ``auto`` free text runs until a trigger (``triggered_tags``), otherwise the
answer is the calls alone (``tags_with_separator`` with at least one). The dialect's section
markers wrap them; the reasoning block comes first. Argument bodies are JSON schemas where the
dialect writes JSON, sequences of parameter tags for XML dialects, and an EBNF grammar for what
structural tags cannot say themselves (Python literals, character sets).
"""

from __future__ import annotations

import json
from typing import Any

from .compiler import Constraint
from .gbnf import to_gbnf
from .grammar import EMPTY, Alt, Chars, Embed, Grammar, Json, Lit, Node, Ref, Rep, Seq, Text
from .schema import WS, expand_json


def structural_tag(constraint: Constraint) -> dict[str, Any]:
    """The structural tag of a whole answer (``{"type": "structural_tag", "format": ...}``)."""
    c = constraint
    parts = [] if c.reasoning == EMPTY else [_format(c, c.reasoning)]
    parts.append(_main(c))
    main = parts[0] if len(parts) == 1 else {"type": "sequence", "elements": parts}
    return {"type": "structural_tag", "format": main}


def _main(c: Constraint) -> dict[str, Any]:
    shape = c.shape
    tags = [{"type": "tag", "begin": f.head, "content": _format(c, f.body), "end": f.tail}
            for f in c.forms]
    calls: dict[str, Any] = {"type": "tags_with_separator", "tags": tags, "separator": shape.separator,
                             "at_least_one": True, "stop_after_first": not c.parallel}
    opener, closer = shape.section
    if opener or closer:
        calls = {"type": "sequence", "elements": [
            *([_const(opener)] if opener else []), calls, *([_const(closer)] if closer else [])]}
    if c.final is not None:
        return _after_blank(c, {"type": "or", "elements": [calls, _format(c, c.final)]})
    if c.mode != "auto":
        return _after_blank(c, calls)
    if c.triggers and shape.answer is None:
        if opener:
            section = {"type": "tag", "begin": opener, "content": calls["elements"][1],
                       "end": closer}
            if all(opener.startswith(t) for t in c.triggers):
                return {"type": "triggered_tags", "triggers": list(c.triggers), "tags": [section],
                        "at_least_one": False, "stop_after_first": True}
        elif all(any(t["begin"].startswith(x) for x in c.triggers) for t in tags):
            return {"type": "triggered_tags", "triggers": list(c.triggers), "tags": tags,
                    "at_least_one": False, "stop_after_first": not c.parallel}
    return _format(c, c.root())


def _after_blank(c: Constraint, main: dict[str, Any]) -> dict[str, Any]:
    """Blanks may separate the reasoning from what must follow it."""
    if c.reasoning == EMPTY:
        return main
    return {"type": "sequence", "elements": [_format(c, WS), main]}


def _const(text: str) -> dict[str, Any]:
    return {"type": "const_string", "value": text}


def _format(c: Constraint, node: Node) -> dict[str, Any]:
    """One node as a structural tag format (recursive rules and character sets as EBNF)."""
    if isinstance(node, Lit):
        return _const(node.text)
    if isinstance(node, Seq):
        return {"type": "sequence", "elements": [_format(c, i) for i in node.items]}
    if isinstance(node, Alt):
        return {"type": "or", "elements": [_format(c, i) for i in node.items]}
    if isinstance(node, Json):
        return {"type": "json_schema", "json_schema": json.loads(node.schema)}
    if isinstance(node, Embed):
        own = ({"type": "regex", "pattern": node.definition} if node.syntax == "regex"
               else {"type": "grammar", "syntax": "lark", "grammar": node.definition})
        return {"type": "sequence", "elements": [own, _const(node.then)]}
    if isinstance(node, Text):
        others = [a for a in node.avoid if a != node.then]
        text = {"type": "any_text", "excludes": others} if others else {"type": "any_text"}
        return text if node.then is None else {"type": "tag", "begin": "", "content": text,
                                               "end": node.then}
    if isinstance(node, Rep) and not isinstance(node.item, Chars):
        inner = _format(c, node.item)
        if (node.least, node.most) == (0, 1):
            return {"type": "optional", "content": inner}
        if (node.least, node.most) == (0, None):
            return {"type": "star", "content": inner}
        if (node.least, node.most) == (1, None):
            return {"type": "plus", "content": inner}
        return {"type": "repeat", "min": node.least, "max": -1 if node.most is None else node.most,
                "content": inner}
    assert isinstance(node, (Ref, Chars, Rep))
    return {"type": "grammar", "grammar": to_gbnf(Grammar(c.grammar.rules, node), expand_json)}
