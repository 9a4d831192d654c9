"""A request's tools, in a dialect's own call format, as one grammar.

``compile_tools`` reads the dialect's ``Shape`` and the offered tools and builds a ``Constraint``:
the grammar of a whole answer, which it writes as GBNF (llama.cpp, also lazy with its triggers),
Lark (llguidance), an xgrammar structural tag (vLLM, SGLang) or, for dialects whose call is a
plain JSON object, a JSON schema (Ollama). An answer is, in order:

1. the reasoning block, unconstrained (optional; or already open when the prompt opened it);
2. under ``tool_choice`` ``auto``: free text in which no call trigger occurs, then optionally the
   calls; under ``required`` or a named function: the calls alone;
3. the calls: one, or with parallel calls one or more, joined by the dialect's separator inside
   its section markers, each a tool's call with arguments following its schema.

With a JSON ``response_format`` the answer is either the calls or the final JSON, so that
neither constraint makes the other impossible.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..dialects import get_dialect
from ..errors import ConfigError
from ..freeform import Format
from ..syntax.dialect import Dialect, raw_value
from ..syntax.shape import Args, Shape
from .grammar import EMPTY, Alt, Chars, Embed, Grammar, Json, Lit, Node, Rep, Seq, Text, alt, chars, opt, seq, until
from .schema import WS, Values

REASONING = ("auto", "open", "off")
# Under ``auto``, what to do with the openers recovery reads besides the dialect's own marker
# (small models write a JSON call in a markdown fence, or bare, rather than in their template's
# tags): "constrain" them (a fenced or bare call is a valid call of an offered tool; lazily, they
# are triggers too), "steer" them (prose may hold no fence and not start as a call, so the
# model's way to call is the canonical marker), or "off" (prose is free; only the marker counts).
DRIFT = ("off", "constrain", "steer")
FENCE_OPEN, FENCE_CLOSE, BARE_OPEN = "```json", "```", '{"name"'


@dataclass(frozen=True)
class Tool:
    """An offered tool as the compiler needs it."""

    name: str
    schema: dict[str, Any]
    strict: bool = True
    freeform: bool = False  # a custom tool: its input is text
    grammar: Format | None = None  # a custom tool's own grammar


@dataclass(frozen=True)
class CallForm:
    """One way to write one tool's call: ``head`` (literal), ``body`` (the rest up to the
    literal ``tail``)."""

    tool: str
    head: str
    body: Node
    tail: str

    @property
    def node(self) -> Node:
        return seq(Lit(self.head), self.body, Lit(self.tail))


@dataclass
class Constraint:
    """A compiled constraint: the grammar of a whole answer, and the parts the writers of each
    target need."""

    dialect: Dialect
    tools: tuple[Tool, ...]
    forms: tuple[CallForm, ...]
    grammar: Grammar
    mode: str  # "auto" | "required" | "one"
    parallel: bool
    reasoning: Node
    triggers: tuple[str, ...]
    final: Node | None = None
    notes: list[str] = field(default_factory=list)
    drift: str = "off"

    def calls(self, skip: str = "") -> Node:
        """The calls node; ``skip``: a trigger already read, cut from its front."""
        shape = self.shape
        one = alt(*(f.node for f in self.forms))
        more = Rep(seq(Lit(shape.separator), one)) if self.parallel else EMPTY
        whole = seq(Lit(shape.section[0]), one, more, Lit(shape.section[1]))
        cut = _strip(whole, skip)
        if cut is None:
            raise ConfigError(f"the trigger {skip!r} does not start every call")  # a bad shape
        return cut

    @property
    def shape(self) -> Shape:
        assert self.dialect.shape is not None
        return self.dialect.shape

    def root(self) -> Node:
        """The grammar of a whole answer."""
        if self.final is not None:
            return seq(self.reasoning, WS, alt(self.calls(), self.final))
        if self.mode != "auto":
            return seq(self.reasoning, WS, self.calls())
        if self.shape.answer is not None:
            head, _, tail = self.shape.answer.partition("{TEXT}")
            return seq(self.reasoning, alt(seq(Lit(head), Text((tail,), tail) if tail else Text(())),
                                           self.calls()))
        first = self.dialect.reasoning[0] if self.reasoning != EMPTY and self.dialect.reasoning else ""
        if self._drifts():
            return seq(self.reasoning, self._drifted_root(first))
        if not self.triggers:
            return seq(self.reasoning, alt(self.prose(first), self.calls()))
        routes = [seq(Text(self.triggers, t, first), self.calls(skip=t)) for t in self.triggers]
        return seq(self.reasoning, alt(Text(self.triggers, not_first=first), *routes))

    def prose(self, not_first: str = "") -> Node:
        """Free text where the calls are the whole answer: it does not start (after blanks) as
        a call does, since a reader takes such an answer for calls (a bare ``[`` or ``{``), and
        a malformed call must not pass as prose."""
        opens = {(self.shape.section[0] + f.head)[:1] for f in self.forms} - {""}
        blanks = " \t\n\r"
        other = Chars(tuple((c, c) for c in sorted(opens | set(blanks))), True)
        return seq(Rep(chars(blanks)), opt(seq(other, Text((), not_first=not_first))))

    def whole(self) -> Grammar:
        """The grammar with ``root()`` as its root."""
        return Grammar(self.grammar.rules, self.root())

    def lazy(self) -> Grammar:
        """The grammar from a trigger on (what a lazy engine applies once a trigger is seen)."""
        if self._drifts() and self.drift == "constrain":
            return Grammar(self.grammar.rules, alt(self.calls(), seq(Lit(FENCE_OPEN), self._fenced()),
                                                   self._objects()))
        return Grammar(self.grammar.rules, self.calls())

    @property
    def lazy_triggers(self) -> tuple[str, ...]:
        """The triggers of ``lazy()``: the dialect's own, and the drifted openers it constrains."""
        if self._drifts() and self.drift == "constrain":
            return (*self.triggers, FENCE_OPEN, BARE_OPEN)
        return self.triggers

    # ---------------------------------------------------------------- drifted openers

    def _drifts(self) -> bool:
        """Whether ``drift`` applies: under ``auto``, for a dialect whose call is the JSON object
        ``{"name": .., "arguments": ..}`` and whose recovery reads it fenced (Hermes and kin)."""
        return (self.drift != "off" and self.mode == "auto" and self.final is None and bool(self.triggers)
                and FENCE_OPEN in self.dialect.call_start
                and all(f.head.endswith('{"name": "' + f.tool + '", "arguments": ') for f in self.forms))

    def _objects(self) -> Node:
        """One call object of an offered tool (any JSON spacing), or several with parallel calls."""
        one = alt(*(seq(Lit("{"), WS, Lit('"name"'), WS, Lit(":"), WS, Lit(json.dumps(f.tool)), WS, Lit(","), WS,
                        Lit('"arguments"'), WS, Lit(":"), WS, f.body, WS, Lit("}")) for f in self.forms))
        return seq(one, Rep(seq(WS, one))) if self.parallel else one

    def _fenced(self) -> Node:
        """What follows a fence's opener: the call objects, then the fence's close."""
        return seq(WS, self._objects(), WS, Lit(FENCE_CLOSE))

    def _drifted_root(self, first: str) -> Node:
        """The answer under ``auto`` with ``drift``: prose that neither starts as a bare call nor
        holds a trigger (nor, steered, any fence), or that prose then the calls; constrained,
        also prose then a fenced call, or a bare call as the whole answer."""
        blanks = " \t\n\r"
        avoid = (*self.triggers, FENCE_OPEN if self.drift == "constrain" else FENCE_CLOSE)
        # Prose's first character is not "{" (that is a bare call), nor the first of a string it
        # avoids (the text after it would not see that string begin there).
        other = Chars(tuple((c, c) for c in sorted(set(blanks) | {"{"} | {a[0] for a in avoid})), True)

        def prose(then: str | None) -> Node:
            rest = Text(avoid, then, first)
            if then is None:
                return seq(Rep(chars(blanks)), opt(seq(other, rest)))
            return seq(Rep(chars(blanks)), alt(Lit(then), seq(other, rest)))

        routes = [prose(None), *(seq(prose(t), self.calls(skip=t)) for t in self.triggers)]
        if self.drift == "constrain":
            routes += [seq(prose(FENCE_OPEN), self._fenced()), seq(Rep(chars(blanks)), self._objects())]
        return alt(*routes)


def _strip(node: Node, prefix: str) -> Node | None:
    """``node`` with the literal ``prefix`` read off its front (None: it cannot start so)."""
    if not prefix:
        return node
    if isinstance(node, Lit):
        if node.text.startswith(prefix):
            return Lit(node.text[len(prefix):])
        return None
    if isinstance(node, Alt):
        kept = [n for n in (_strip(i, prefix) for i in node.items) if n is not None]
        return alt(*kept) if kept else None
    if isinstance(node, Seq) and node.items:
        first = node.items[0]
        if isinstance(first, Lit) and len(first.text) < len(prefix):
            if not prefix.startswith(first.text):
                return None
            return _strip(seq(*node.items[1:]), prefix[len(first.text):])
        cut = _strip(first, prefix)
        return None if cut is None else seq(cut, *node.items[1:])
    return None


def _own_grammar(spec: dict[str, Any], name: str) -> Format | None:
    """A custom tool's own grammar (either API's shape), read as the gateway reads it."""
    fmt = Format.of(spec.get("format"), f"tool {name!r}: format")
    return None if fmt.syntax == "text" else fmt


def tools_of(tools: list[dict[str, Any]], strict: bool | None = None) -> tuple[Tool, ...]:
    """The request's tools (Chat Completions or Responses shapes; ``function`` and ``custom``).
    ConfigError where a custom tool's format is malformed, as the gateway refuses it."""
    found: list[Tool] = []
    for tool in tools or []:
        if not isinstance(tool, dict):
            continue
        kind = tool.get("type", "function")
        spec = tool.get(kind) if isinstance(tool.get(kind), dict) else tool
        name = spec.get("name")
        if not isinstance(name, str) or not name:
            continue
        if kind == "custom":
            found.append(Tool(name, {"type": "object", "properties": {"input": {"type": "string"}},
                                     "required": ["input"]}, True, True, _own_grammar(spec, name)))
        elif kind == "function":
            params = spec.get("parameters")
            own = spec.get("strict")
            found.append(Tool(name, params if isinstance(params, dict) else {"type": "object"},
                              bool(own) if strict is None and own is not None else strict is not False))
    return tuple(found)


def compile_tools(dialect: str | Dialect, tools: list[dict[str, Any]], *, tool_choice: Any = "auto",
                  parallel_tool_calls: bool = True, strict: bool | None = None,
                  reasoning: str = "auto", response_format: Any = None, drift: str = "off") -> Constraint:
    """Compile the offered tools into ``dialect``'s call format.

    Args:
        tool_choice: ``auto``, ``required``, ``none`` or a named function (either API's shape).
        strict: True: every object's properties are only those declared; False: as each schema
            says; None: each tool's own ``strict`` (default True).
        reasoning: ``auto`` (an optional reasoning block first), ``open`` (the prompt opened it:
            the answer starts inside it) or ``off``.
        response_format: the request's ``response_format`` (``json_object`` or ``json_schema``).
        drift: ``off``, ``constrain`` or ``steer`` (see DRIFT): under ``auto``, the drifted
            openers recovery reads (a fenced or bare JSON call), for dialects that have them.

    Raises:
        ConfigError: the dialect declares no shape, no tool is left to call, an argument is
            not one of the allowed values, or a custom tool's format is malformed.
    """
    dialect = get_dialect(dialect)
    if dialect.shape is None:
        raise ConfigError(f"dialect {dialect.name!r} cannot be constrained: its call format is "
                          "not declared for grammars (see the README's constraint table)")
    if reasoning not in REASONING:
        raise ConfigError(f"reasoning must be one of {', '.join(REASONING)}, not {reasoning!r}")
    if drift not in DRIFT:
        raise ConfigError(f"drift must be one of {', '.join(DRIFT)}, not {drift!r}")
    offered = tools_of(tools, strict)
    mode, offered = _choice(tool_choice, offered)
    final = _final(response_format)
    if not offered and final is None:
        raise ConfigError("nothing to constrain: no tool may be called and no JSON format is asked")
    grammar = Grammar()
    forms = tuple(f for t in offered for f in _forms(grammar, dialect.shape, t))
    return Constraint(dialect, offered, forms, grammar, mode, parallel_tool_calls and mode != "one",
                      _reasoning(dialect, reasoning), _triggers(dialect.shape), final, drift=drift)


def _choice(choice: Any, offered: tuple[Tool, ...]) -> tuple[str, tuple[Tool, ...]]:
    if choice in (None, "auto"):
        return "auto", offered
    if choice == "required":
        return "required", offered
    if choice == "none":
        return "auto", ()
    if isinstance(choice, dict):
        spec = choice.get("function") if isinstance(choice.get("function"), dict) else choice
        name = spec.get("name")
        chosen = tuple(t for t in offered if t.name == name)
        if not chosen:
            raise ConfigError(f"tool_choice names {name!r}, which is not among the tools")
        return "one", chosen
    raise ConfigError(f"tool_choice {choice!r} cannot be constrained")


def _final(response_format: Any) -> Node | None:
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_object":
        return Json(json.dumps({"type": "object"}))
    if kind == "json_schema":
        spec = response_format.get("json_schema") or {}
        schema = spec.get("schema", True) if isinstance(spec, dict) else True
        return Json(json.dumps(_strict(schema) if spec.get("strict") else schema, ensure_ascii=False))
    return None


def _reasoning(dialect: Dialect, reasoning: str) -> Node:
    """The reasoning block: any text up to its end marker. Where a call marker inside reasoning
    ends it and starts a call (``calls_in_reasoning``), the text holds no trigger, so that what
    the grammar takes for reasoning the parser does too."""
    if dialect.reasoning is None or reasoning == "off":
        return EMPTY
    start, end = dialect.reasoning
    triggers = _triggers(dialect.shape) if dialect.calls_in_reasoning and dialect.shape else ()
    text = Text((end, *triggers), end)
    if reasoning == "open":
        return text
    return opt(seq(Lit(start), text))


def _forms(grammar: Grammar, shape: Shape, tool: Tool) -> list[CallForm]:
    args = _args(grammar, shape, tool)
    forms = []
    for template in shape.calls:
        holes = {"{NAME}": Lit(tool.name), "{ARGS}": args, "{INDEX}": Rep(chars("0-9"), 1, 3)}
        node = seq(*(holes.get(part, Lit(part)) for part in _holes(template)))
        items = list(node.items) if isinstance(node, Seq) else [node]
        head = items.pop(0).text if items and isinstance(items[0], Lit) else ""
        tail = items.pop().text if items and isinstance(items[-1], Lit) else ""
        forms.append(CallForm(tool.name, head, seq(*items), tail))
    return forms


def _holes(template: str) -> list[str]:
    out, i = [], 0
    while i < len(template):
        j = min((template.find(h, i) for h in ("{NAME}", "{ARGS}", "{INDEX}", "{KEY}", "{VALUE}")
                 if template.find(h, i) >= 0), default=-1)
        if j < 0:
            out.append(template[i:])
            break
        if j > i:
            out.append(template[i:j])
        end = template.index("}", j) + 1
        out.append(template[j:end])
        i = end
    return out


def _args(grammar: Grammar, shape: Shape, tool: Tool) -> Node:
    schema = _strict(tool.schema) if tool.strict else tool.schema
    if shape.args is Args.JSON:
        return Json(json.dumps(schema, ensure_ascii=False))
    if shape.args is Args.PYTHON:
        return Values(grammar, python=True, root=schema).kwargs(schema)
    if tool.grammar is not None:  # raw text: the tool's own grammar can say it
        return _custom(shape.args, tool.grammar)
    return _params(grammar, shape.args, schema, shape.value_ends)


def _value_end(template: str) -> tuple[str, str, str, str]:
    """A parameter template read around its value: (what comes before it, the blanks after it,
    the close tag that ends a raw value, what follows that tag)."""
    before, _, after = template.partition("{VALUE}")
    stripped = after.lstrip()
    close = stripped[: stripped.index(">") + 1] if stripped.startswith("<") and ">" in stripped else stripped
    return before, after[: len(after) - len(stripped)], close, stripped[len(close):]


def _custom(template: str, own: Format) -> Node:
    """A freeform tool's one parameter, ``input``, as raw text following its own grammar where
    the engine reads that grammar's syntax (any text up to the close tag elsewhere)."""
    before, lead, close, trail = _value_end(template)
    embedded = Embed(own.syntax, own.definition, lead + close, until(close))
    return seq(Lit(before.replace("{KEY}", "input")), embedded, Lit(trail))


def _params(grammar: Grammar, template: str, schema: dict[str, Any], ends: tuple[str, ...] = ()) -> Node:
    """Arguments as repeated parameter templates: strings raw (up to the close tag, holding none
    of ``ends``), anything else as JSON."""
    before, _, close, rest = _value_end(template)
    after = template.partition("{VALUE}")[2]
    raw = Text((close, *ends), close)
    props = schema.get("properties")
    if props == {} and schema.get("additionalProperties") is False:
        return EMPTY
    if not isinstance(props, dict) or not props:
        key_head, _, key_tail = before.partition("{KEY}")
        name = Rep(chars((key_tail or "\n")[0] + "\n", True), 1, None)
        return Rep(seq(Lit(key_head), name, Lit(key_tail), raw, Lit(rest)))
    required = set(schema.get("required") or ())
    values = Values(grammar, root=schema)
    parts = []
    for key, sub in props.items():
        if _takes_text(sub):
            value = seq(raw, Lit(rest))
        elif isinstance(sub, dict) and ("enum" in sub or "const" in sub):
            allowed = sub["enum"] if "enum" in sub else [sub["const"]]
            value = seq(alt(*(Lit(raw_value(v)) for v in allowed)), Lit(after))
        elif "$ref" in json.dumps(sub):  # its definitions are the whole schema's
            value = seq(values.value(sub), Lit(after))
        else:  # JSON that each engine compiles itself (a structural tag's json_schema, %json)
            value = seq(Json(json.dumps(sub, ensure_ascii=False)), Lit(after))
        member = seq(Lit(before.replace("{KEY}", key)), value)
        parts.append(member if key in required else opt(member))
    return seq(*parts)


def _takes_text(schema: Any) -> bool:
    """Whether a raw-text value may be any text: the schema allows strings and is not an enum."""
    if not isinstance(schema, dict) or "enum" in schema or "const" in schema:
        return not isinstance(schema, dict)
    kind = schema.get("type")
    if kind is None:
        return not any(k in schema for k in ("properties", "items"))
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def _triggers(shape: Shape) -> tuple[str, ...]:
    """What starts the calls: the shape's trigger, or each template's text before its first hole
    (after the section's opener); none where the calls are the whole answer."""
    if shape.trigger == "":
        return ()
    if shape.trigger is not None:
        return (shape.trigger,)
    found = sorted({shape.section[0] + _holes(t)[0] for t in shape.calls}, key=len)
    return tuple(t for i, t in enumerate(found) if t and not any(t.startswith(s) for s in found[:i]))


def _strict(schema: Any) -> Any:
    """A schema whose objects with properties allow no others (OpenAI's strict mode)."""
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict(v) for k, v in schema.items()}
    if isinstance(schema.get("properties"), dict) and "additionalProperties" not in schema:
        out["additionalProperties"] = False
    return out
