"""One turn as the pipeline sees it (``Turn``), and the plan for sending it upstream (``Plan``).

A front translates its client's request into a ``Turn``: messages in the Chat Completions shape
(the lingua franca of upstreams and chat templates), the offered function tools, ``tool_choice``,
the stream flags and ``options``, every other field passed to the upstream as it is (sampling,
``max_tokens``, ``stop``, ``chat_template_kwargs`` ...). ``plan_turn`` checks the tool fields and
records everything later stages need: the offered tools (restricted to what ``tool_choice``
allows), whether the answer is parsed for calls at all, whether a call is required, and the body
to send upstream (with ``skip_special_tokens: false`` when the dialect's markers are special
tokens and the policy asks for it). Nothing else in the body is changed.

Every malformed shape in the fields read here is a ``RequestError`` (400) naming the field, never
another exception; so is a turn nested deeper than ``MAX_NESTING`` arrays and objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson


from ..dialects import get_dialect
from ..errors import ConfigError, ToolBridgeError
from ..freeform import Format
from ..limits import deeper_than
from ..parsing.auto import special_tokens
from ..syntax.dialect import Dialect
from ..tools import SharedCache, Toolset, schema_error
from .nesting import MAX_NESTING, SHOWN, deep_path, deep_where, spelled, too_deep
from .nesting import encoded_within as _encoded_within
from .thinking import mode as thinking_mode

KEEP_SPECIAL = ("auto", "always", "never")


class RequestError(ToolBridgeError):
    """A request the gateway refuses; carries the HTTP status and an OpenAI-style error body."""

    def __init__(self, message: str, *, status: int = 400, param: str | None = None,
                 type: str = "invalid_request_error", code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.param, self.type, self.code = status, param, type, code

    def body(self) -> dict[str, Any]:
        return {"error": {"message": str(self), "type": self.type, "param": self.param, "code": self.code}}


@dataclass(frozen=True)
class Settings:
    """What the operator configured for translation."""

    dialect: str = "auto"
    recover_from_reasoning: bool = False
    keep_special_tokens: str = "auto"  # auto: when tools are offered and the markers are special
    on_invalid: str = "pass"  # what becomes of a call whose arguments fail the schema (validation.py)
    coerce: bool = True  # type recovered calls' arguments by the schema (parsing/argtyper.py)
    repair: bool = False  # read JSON arguments leniently (trailing commas, single quotes ...)
    stream_arguments: bool = False  # stream a call's arguments as written (default: each call whole)
    max_held: int = 64 << 20  # characters of calls a stream may hold (--max-answer)
    reasoning_in_content: str = "auto"  # reasoning written inside the content: auto, on, off (thinking.py)


@dataclass
class Plan:
    """How one request is forwarded and its answer read."""

    body: dict[str, Any]
    stream: bool
    include_usage: bool
    dialect: Dialect | str  # a Dialect, or "auto"
    tools: Toolset | None  # the tools a call may name (None: do not parse for calls)
    required: str | None = None  # "any" or a function name when a call must come
    parallel: bool = True
    recover_from_reasoning: bool = False
    drop_tokens: tuple[str, ...] = ()
    model: str | None = None  # the request's model: auto's hint
    # The name the client asked for when it was sent under another (upstream/models.py): the
    # answer names it, so that a client comparing names (Claude Code keeps a turn's thinking
    # only for the model it asked for) sees its own.
    asked: str | None = None
    on_invalid: str = "pass"  # "pass", "reject" or "retry" (gateway/validation.py)
    coerce: bool = True
    repair: bool = False
    strict: frozenset[str] = frozenset()  # the offered tools with "strict": true
    stream_arguments: bool = False  # calls not enforced stream as written (validation.Gate)
    max_held: int = 64 << 20  # characters of held calls a stream may keep
    freeforms: dict[str, Format] = field(default_factory=dict)  # the turn's freeform tools
    context: Any = None  # the front's own (what its answer repeats of the request)
    constraint: Any = None  # upstream/constraint.Outcome: the grammar sent with the body, or why none
    # The JSON text of body fields made while planning (the tools, for the shared Toolset's
    # key; every field the nesting check encoded), each with the value it is the text of, by
    # key: spliced into the upstream body's encoding instead of encoding them again.
    texts: dict[str, tuple[Any, bytes]] = field(default_factory=dict)
    # How reasoning written inside the content is read (thinking.mode): None as written, "opens"
    # or "asked".
    think: str | None = None
    # The calls a whole answer's reading made, each one's arguments and their value by its id
    # (``repair``): a front that writes arguments as an object takes the value of the same text
    # rather than decoding it again. The answer's own: never kept with the plan.
    decoded: dict[str, tuple[str, Any]] | None = None

    def enforced(self, name: str) -> bool:
        """Whether a call to ``name`` must have valid arguments: under ``reject`` and ``retry``
        every call, under ``pass`` the calls to strict tools."""
        return self.on_invalid != "pass" or name in self.strict

    @property
    def enforcing(self) -> bool:
        """Whether any call of the answer may have to be valid."""
        return self.tools is not None and (self.on_invalid != "pass" or bool(self.strict))

    def held(self, name: str) -> bool:
        """Whether a streamed call to ``name`` is held until it has ended and been checked (and
        then sent whole): every call, unless ``stream_arguments``; then the enforced ones."""
        return not self.stream_arguments or self.enforced(name)

    @property
    def holding(self) -> bool:
        """Whether any call of the answer may be held."""
        return self.tools is not None and (not self.stream_arguments or self.enforcing)

    @property
    def parser_options(self) -> dict[str, Any]:
        """StreamParser's options for this request (auto also takes the model as a hint)."""
        options = {"drop_tokens": self.drop_tokens, "coerce": self.coerce, "repair": self.repair}
        return {**options, "model": self.model} if self.dialect == "auto" else options


# The tool fields of a Turn, by their Chat Completions names (how they go upstream).
TOOL_FIELDS = ("tools", "tool_choice", "parallel_tool_calls")


@dataclass
class Turn:
    """One request, whatever API it came in: what the pipeline is asked to do.

    ``tools``, ``tool_choice`` and ``parallel`` are None when the client did not give them (and
    are then not sent upstream); ``options`` holds every other field for the upstream, as is.
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None  # OpenAI function tools: {"type": "function", "function": {...}}
    tool_choice: Any = None  # "none" | "auto" | "required" | {"type": "function", ...} | allowed_tools
    parallel: Any = None  # parallel_tool_calls
    stream: bool = False
    include_usage: bool = False
    model: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    # Freeform (``custom``) tools, by name: ``tools`` offers each as a function whose one string
    # parameter is its raw input (``freeform.declaration``); their calls go back as raw text.
    freeforms: dict[str, Format] = field(default_factory=dict)
    context: Any = None  # the front's own, handed back with the plan (``Plan.context``)
    # Where each tool's schema is in the client's request, in the front's spelling, for the
    # errors that name it (None: the chat front's ``tools[i].function.parameters``).
    schema_paths: list[str] | None = None
    # The tools and their JSON text (``tools_text``), as a front keeps the tools it makes (once
    # per distinct tools list): planning reads the text while ``tools`` is that very list.
    tools_json: tuple[Any, bytes | None] | None = None
    # What a front kept this turn's fields but its messages as, one object for every turn whose
    # fields are equal (agents send the same tools and settings with every request): planning
    # keeps what it made of them by it (``plan_turn``). None: the fields are read each time.
    fields: Any = None
    # Whether the front found no two tool results in a row (``order.in_call_order`` then has no
    # run to put in order, and is not run).
    ordered: bool = False

    def serve_as(self, model: str | None) -> None:
        """Send the turn upstream under ``model``, the name the upstream serves
        (``upstream.models``): everything keyed by model then reads it. The options are
        replaced, not changed: a front may share them between turns (``fields``)."""
        if model is not None and (model != self.model or self.options.get("model") != model):
            self.model = model
            self.options = {**self.options, "model": model}

    def body(self) -> dict[str, Any]:
        """The Chat Completions request body this turn is (what a chat upstream is sent)."""
        out = dict(self.options)
        out["messages"] = self.messages
        if self.tools is not None:  # (the TOOL_FIELDS, in their order)
            out["tools"] = self.tools
        if self.tool_choice is not None:
            out["tool_choice"] = self.tool_choice
        if self.parallel is not None:
            out["parallel_tool_calls"] = self.parallel
        return out


def kept_head(head: Turn) -> dict[str, Any]:
    """The fields of ``head``, a front's turn of a request's fields but its messages, with
    ``head`` as their ``fields``: what a front keeps once per distinct JSON text of those fields
    (agents send the same tools and settings with every request) and makes each turn of them
    with (``turn_of``), so that planning keeps what it made of them too (``plan_turn``). What
    is kept is not changed by its users (its options may be shared: ``Turn.serve_as`` replaces
    them)."""
    fields = dict(vars(head))
    fields["fields"] = head
    return fields


def turn_of(head: dict[str, Any], messages: Any) -> Turn:
    """A turn of the fields ``kept_head`` kept and its own ``messages``: a bare Turn given
    them (a dataclass call costs some times more)."""
    turn: Turn = object.__new__(Turn)
    turn.__dict__.update(head)
    turn.messages = messages
    return turn


def plan_turn(turn: Turn, settings: Settings, shallow: bool = False, checked: bool = False) -> Plan:
    """Check a turn's tool fields and plan it; raises RequestError (400) naming the field.
    ``shallow``: the turn is known to nest well within ``MAX_NESTING`` (``shallow_body``), so
    its nesting is not walked. ``checked``: the request body it was built from passed
    ``check_body``; the translation may have added up to ``NESTING_SLACK`` levels.
    A turn whose front kept its fields (``Turn.fields``) is planned from what the first turn of
    the same fields, model and settings made (``_PLANS``): only its messages are its own."""
    text = _tools_text(turn)
    limit = MAX_NESTING + NESTING_SLACK if checked else MAX_NESTING
    texts = {} if shallow else check_nesting(  # tools that made a shared Toolset passed it then
        turn, limit, known_tools=text is not None and _known(text, turn.freeforms))
    if text is not None:
        texts["tools"] = (turn.tools, text)
    fields = turn.fields
    if fields is None:
        return _planned(turn, settings, texts, text)
    key = (id(fields), turn.model, id(settings))  # (the kept entry holds both: their ids stay theirs)
    kept = _PLANS.get(key)
    if kept is None:
        plan = _planned(turn, settings, texts, text)
        _PLANS.put(key, _kept_plan(plan, fields, settings))
        return plan
    return _from_kept(kept, turn, texts)


def _kept_plan(plan: Plan, fields: Any, settings: Settings) -> tuple[Any, ...]:
    """What ``_from_kept`` plans a turn of the same fields with: the plan's fields but its own
    (the body, the texts), its body's fields before and after the messages, and the objects
    the entry is kept by the ids of."""
    own = dict(vars(plan))
    own["body"] = own["context"] = own["texts"] = own["decoded"] = None  # (each plan's own: the request's objects are not kept)
    head: dict[str, Any] = {}
    tail: dict[str, Any] = {}
    part = head
    for key, value in plan.body.items():
        if key == "messages":
            part = tail
        else:
            part[key] = value
    return own, head, tail, fields, settings


def _from_kept(kept: tuple[Any, ...], turn: Turn, texts: dict[str, tuple[Any, bytes]]) -> Plan:
    """A plan as ``_kept_plan`` kept it, with a body of its own around the turn's messages (the
    same body ``_planned`` makes) and the turn's context."""
    own, head, tail = kept[0], kept[1], kept[2]
    body = dict(head)
    body["messages"] = turn.messages
    body.update(tail)
    plan: Plan = object.__new__(Plan)
    fields = plan.__dict__
    fields.update(own)  # (every field, in their order)
    fields["body"] = body
    fields["context"] = turn.context
    fields["texts"] = texts
    return plan


_PLANS = SharedCache(256)  # by the ids of Turn.fields and the settings, and the model


def _planned(turn: Turn, settings: Settings, texts: dict[str, tuple[Any, bytes]], text: bytes | None) -> Plan:
    """``plan_turn`` once the nesting is checked (``texts``: the texts it made; ``text``: the
    tools' JSON text)."""
    offered = _toolset(turn.tools, turn.freeforms, text)
    mode, named = _tool_choice(turn.tool_choice, offered)
    parallel = True if turn.parallel is None else turn.parallel
    if not isinstance(parallel, bool):
        raise RequestError("'parallel_tool_calls' must be a boolean", param="parallel_tool_calls")
    model = turn.model
    reader = _READERS.get(settings.dialect)
    dialect, special, end_tokens = reader if reader is not None else _reader(settings.dialect, model)
    parse = offered is not None and mode != "none"
    tools = (_restrict(turn.tools or [], named, turn.freeforms) if parse and named
             else (offered if parse else None))
    upstream = turn.body()
    policy = settings.keep_special_tokens
    if policy == "always" or (policy == "auto" and parse and special):
        upstream.setdefault("skip_special_tokens", False)
        upstream.setdefault("spaces_between_special_tokens", False)
    required = None
    if mode == "required" and parse:
        required = named[0] if len(named) == 1 else "any"
    # Made field by field on a bare object: a call passing a Plan's fields by keyword costs
    # some times what setting them does (each keyword is matched to its parameter; under
    # callgrind, 15k instructions against 3k), and a class called so also passes them through a
    # dict. Every field is set, in their order (a test holds this to the fields).
    plan: Plan = object.__new__(Plan)
    plan.body = upstream
    plan.stream = turn.stream
    plan.include_usage = turn.include_usage
    plan.dialect = dialect
    plan.tools = tools
    plan.required = required
    plan.parallel = parallel
    plan.recover_from_reasoning = settings.recover_from_reasoning
    plan.drop_tokens = end_tokens if upstream.get("skip_special_tokens") is False else ()
    plan.model = model
    plan.asked = None
    plan.on_invalid = settings.on_invalid
    plan.coerce = settings.coerce
    plan.repair = settings.repair
    plan.strict = _strict(turn.tools, offered, turn.schema_paths) if parse else frozenset()
    plan.stream_arguments = settings.stream_arguments
    plan.max_held = settings.max_held
    plan.freeforms = turn.freeforms
    plan.context = turn.context
    plan.constraint = None
    plan.texts = texts
    plan.think = thinking_mode(settings.reasoning_in_content, upstream)
    plan.decoded = None
    return plan


REASONING_FIELDS = ("reasoning_content", "reasoning", "thinking")


def drop_reasoning(messages: list[Any]) -> None:
    """Take the reasoning of earlier assistant turns out of ``messages`` (in place), under each
    name clients and templates give it (``--drop-reasoning-history``)."""
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "assistant":
            for key in REASONING_FIELDS:
                message.pop(key, None)


# Levels a front's translation may add above the body's own nesting (a tool's schema under
# ``function.parameters``, a block's content under a message): a few; this many is generous.
NESTING_SLACK = 16


def shallow_body(body: bytes, brackets: int = 0) -> bool:
    """Whether a request ``body`` has too few brackets to nest, translated by any front, beyond
    ``MAX_NESTING`` (each level opens one): a count at C speed, instead of walking the turn.
    Counted over spans that double from ``SHALLOW_SPAN``: a large body (an agent's, with its
    tools) has more than enough of them early, and the rest of it is then not read.
    ``brackets``: those of the body counted already, its text read without them."""
    limit, size = MAX_NESTING - NESTING_SLACK - brackets, len(body)
    if size <= SHALLOW_SPAN:  # (most requests: one span)
        return body.count(b"{") + body.count(b"[") <= limit
    brackets, start, span = 0, 0, SHALLOW_SPAN
    while start < size:
        end = start + span
        brackets += body.count(b"{", start, end) + body.count(b"[", start, end)
        if brackets > limit:
            return False
        start, span = end, span * 2
    return True


SHALLOW_SPAN = 4096  # bytes: the first span shallow_body counts


def check_nesting(turn: Turn, limit: int = MAX_NESTING,
                  known_tools: bool = False) -> dict[str, tuple[Any, bytes]]:
    """Raise RequestError (400) naming the path (``nesting``) when the turn's body nests arrays
    and objects more than ``limit`` levels deep (the body itself is the first level).
    ``known_tools``: the tools are known to be within it, and are not read. Returns the JSON
    text of the fields it read by encoding them (``nesting.encoded_within``), each with its
    value, by key."""
    texts = {}
    for key, value in turn.body().items():
        if (known_tools and key == "tools") or type(value) not in _CONTAINERS:
            continue  # (a scalar nests nothing)
        text = _encoded_within(value, limit - 1)
        if text is not None:
            texts[key] = (value, text)
        elif deeper_than(value, limit - 1):
            where = spelled([key, *(deep_path(value, limit - 1) or ())][:SHOWN], "indexed")
            raise RequestError(too_deep(where, limit), param=where)
    return texts


def check_body(body: Any, paths: str) -> None:
    """Raise RequestError (400) naming the path, spelled as ``paths`` says (``nesting.PATHS``),
    when a decoded request ``body`` nests deeper than ``MAX_NESTING``: what a front that builds
    its turn out of the body runs before it reads the body."""
    where = deep_where(body, paths)
    if where is not None:
        raise RequestError(too_deep(where), param=where)


_CONTAINERS = (dict, list)


def _reader(name: str, model: str | None) -> tuple[Dialect | str, bool, tuple[str, ...]]:
    """The dialect to read answers with, whether its markers are special tokens, its end tokens
    (a named dialect's kept in ``_READERS``: they do not depend on the model)."""
    if name == "auto":
        return "auto", *special_tokens(model)
    dialect = get_dialect(name)
    return _READERS.setdefault(name, (dialect, dialect.special_markers, dialect.end_tokens))


_READERS: dict[str, tuple[Dialect, bool, tuple[str, ...]]] = {}  # by the dialect's name


def tools_text(tools: Any) -> bytes | None:
    """The JSON text of a non-empty tools list; None for anything else, or for a list that is
    not JSON (from the Python API: ``_toolset`` tells why)."""
    if not isinstance(tools, list) or not tools:
        return None
    try:
        return orjson.dumps(tools)
    except orjson.JSONEncodeError:
        return None


def fields_text(fields: dict[str, Any]) -> bytes | None:
    """The JSON text of a request's ``fields`` (a dict of the caller's own, the fields it keeps
    what it made of by their text: ``KnownTools.fields_key``), as agents send the same settings
    with every request (equal texts are equal fields for a body decoded from JSON, the
    gateway's; a Python caller's tuple reads as the list of the same text). None for a value
    JSON does not have (a subclass, a dataclass, a date) or one nested deeper than orjson
    writes: such a request is read each time."""
    try:
        return orjson.dumps(fields, option=_JSON_ONLY)
    except orjson.JSONEncodeError:
        return None


_JSON_ONLY = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def _tools_text(turn: Turn) -> bytes | None:
    """``tools_text`` of the turn's tools: the text its front kept with them, when it did."""
    kept = turn.tools_json
    if kept is not None and kept[0] is turn.tools and kept[1] is not None:
        return kept[1]
    return tools_text(turn.tools)


def _key(text: bytes, freeforms: dict[str, Format] | None) -> bytes:
    """What a Toolset is shared under: the tools' JSON text, and the freeform formats."""
    return text + repr(sorted(freeforms.items())).encode() if freeforms else text


def _known(text: bytes, freeforms: dict[str, Format] | None) -> bool:
    """Whether tools of JSON ``text`` made a shared Toolset (so passed ``plan_turn``'s checks)."""
    return _TOOLSETS.get(_key(text, freeforms)) is not None


def _toolset(tools: Any, freeforms: dict[str, Format] | None = None,
             text: bytes | None = None) -> Toolset | None:
    """The shared Toolset of ``tools`` (``text``: their JSON text, when already made)."""
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise RequestError("'tools' must be an array", param="tools")
    if not tools:
        return None
    try:
        key = _key(orjson.dumps(tools) if text is None else text, freeforms)
    except orjson.JSONEncodeError:  # not JSON (from the Python API): the shape's error first, as ever
        _check_functions(tools)
        raise
    cached = _TOOLSETS.get(key)
    if cached is not None:  # built from the same tools, so they passed the checks below
        return cached
    _check_functions(tools)
    try:
        toolset = Toolset(tools, freeforms)
    except ConfigError as exc:
        raise RequestError(str(exc), param="tools") from exc
    if len(toolset.schemas) < len(tools):
        _unique_names(tools)
    return _TOOLSETS.put(key, toolset)


def _unique_names(tools: list[Any]) -> None:
    """Raise RequestError naming the first tool whose name an earlier one has."""
    seen = set()
    for i, tool in enumerate(tools):
        name = tool.get("function", tool)["name"]
        if name in seen:
            raise RequestError(f"tools[{i}].function.name: tool names must be unique ({name!r:.80} is "
                               "offered twice)", param=f"tools[{i}].function.name")
        seen.add(name)


def _check_functions(tools: list[Any]) -> None:
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or tool.get("type", "function") != "function":
            kind = tool.get("type") if isinstance(tool, dict) else type(tool).__name__
            raise RequestError(f"tools[{i}]: only function tools are supported, not {kind!r}", param=f"tools[{i}]")


# Agents send the same tools with every request: their Toolsets (name tables, schema
# validators) are built once and shared; a Toolset is not changed after it is built.
_TOOLSETS = SharedCache(256)


def _strict(tools: Any, offered: Toolset, paths: list[str] | None) -> frozenset[str]:
    """The names of the function tools marked ``"strict": true`` (a checked tools list), found
    once per shared Toolset ``offered`` (made of the same tools); a bad flag, or a strict tool
    whose schema is not a valid JSON Schema (its calls could not be checked), is never kept, so
    it is refused every time. ``paths``: see ``Turn.schema_paths``."""
    names = _STRICT.get(offered)
    if names is None:
        names = _STRICT.put(offered, _strict_names(tools, paths))
    return names  # type: ignore[no-any-return]


_STRICT = SharedCache(256)  # by Toolset, as _TOOLSETS holds them


def _strict_names(tools: Any, paths: list[str] | None) -> frozenset[str]:
    names = set()
    for i, tool in enumerate(tools):
        fn = tool.get("function", tool)
        flag = fn.get("strict")
        if flag is not None and not isinstance(flag, bool):
            raise RequestError(f"tools[{i}]: 'strict' must be a boolean", param=f"tools[{i}]")
        if flag:
            error = schema_error(fn.get("parameters") or {})
            if error is not None:
                where = paths[i] if paths else f"tools[{i}].function.parameters"
                raise RequestError(f"{where}: the tool {fn['name']!r:.80} is strict, but its schema is not "
                                   f"a valid JSON Schema, so its calls could not be checked: {error}",
                                   param=where)
            names.add(fn["name"])
    return frozenset(names)


def _tool_choice(choice: Any, offered: Toolset | None) -> tuple[str, list[str]]:
    """The mode ("none", "auto", "required") and the names a call is limited to ([] = all).

    ``allowed_tools`` comes as Chat Completions sends it (``{"type": "allowed_tools",
    "allowed_tools": {"mode", "tools"}}``) or flat, as the Responses API does (``mode`` and
    ``tools`` beside ``type``); its entries name functions either way (``{"type": "function",
    "function": {"name"}}`` or ``{"type": "function", "name"}``).
    """
    if choice is None:
        return ("auto" if offered else "none"), []
    if isinstance(choice, str) and choice in ("none", "auto", "required"):
        if choice == "required" and offered is None:
            raise RequestError("tool_choice 'required' needs 'tools'", param="tool_choice")
        return choice, []
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind == "function":
        return "required", [_offered_name(_function_name(choice, "tool_choice"), offered)]
    if kind == "allowed_tools":
        return _allowed_tools(choice, offered)
    raise RequestError("tool_choice must be 'none', 'auto', 'required', a function or allowed_tools",
                       param="tool_choice")


def _allowed_tools(choice: dict[str, Any], offered: Toolset | None) -> tuple[str, list[str]]:
    spec = choice.get("allowed_tools", choice)
    if not isinstance(spec, dict):
        raise RequestError("tool_choice.allowed_tools must be an object with 'mode' and 'tools'",
                           param="tool_choice.allowed_tools")
    mode, entries = spec.get("mode", "auto"), spec.get("tools")
    if not isinstance(mode, str) or mode not in ("auto", "required"):
        raise RequestError(f"tool_choice.allowed_tools.mode must be 'auto' or 'required', not {mode!r}",
                           param="tool_choice.allowed_tools.mode")
    if not isinstance(entries, list) or not entries:
        raise RequestError("tool_choice.allowed_tools.tools must be a non-empty array of functions",
                           param="tool_choice.allowed_tools.tools")
    names = []
    for i, entry in enumerate(entries):
        where = f"tool_choice.allowed_tools.tools[{i}]"
        if not isinstance(entry, dict) or entry.get("type", "function") != "function":
            raise RequestError(f"{where} must be a function: {{\"type\": \"function\", "
                               f"\"function\": {{\"name\": ...}}}}", param=where)
        names.append(_offered_name(_function_name(entry, where), offered))
    return mode, names


def _function_name(entry: dict[str, Any], where: str) -> Any:
    """The name a tool_choice entry gives: ``function.name``, or a flat ``name``."""
    if "function" not in entry:
        return entry.get("name")
    function = entry["function"]
    if not isinstance(function, dict):
        raise RequestError(f"{where}.function must be an object with a 'name', not "
                           f"{type(function).__name__} {function!r:.40}", param=f"{where}.function")
    return function.get("name")


def _offered_name(name: Any, offered: Toolset | None) -> str:
    if not isinstance(name, str) or offered is None or name not in offered.schemas:
        raise RequestError(f"tool_choice names {name!r:.80}, which is not among the offered tools",
                           param="tool_choice")
    return name


def _restrict(tools: list[dict[str, Any]], names: list[str], freeforms: dict[str, Format]) -> Toolset:
    keep = [t for t in tools if (t.get("function") or t).get("name") in names]
    return Toolset(keep, freeforms)

