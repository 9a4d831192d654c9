"""OpenAI Responses requests as the pipeline's ``Turn`` (``responses_turn``).

The body is checked field by field. ``input`` (a string, or items) becomes messages in the Chat
Completions shape: ``message`` items by role (``developer`` and ``system`` messages, with
``instructions``, become the one leading system message chat templates take), ``function_call``
and ``custom_tool_call`` items the ``tool_calls`` of an assistant message (with the text and the
``reasoning`` items just before them), ``function_call_output`` and ``custom_tool_call_output``
items ``tool`` messages; an ``item_reference`` is read as the stored item it names (``inputs``).
``previous_response_id`` puts the stored conversation first (``store``).
Tools: flat ``function`` tools (``strict`` defaults to true in this API), ``custom`` tools
(freeform: ``freeform.declaration``) and the functions of ``namespace`` tools, offered under their
own name (or ``namespace__name`` where two would share one) and given back with their namespace;
built-in tools are refused or dropped as ``BUILT_IN`` says. What cannot be honoured is a 400
naming the field's path (``input[2].content[0].type``); fields that change nothing an upstream
can do are dropped, each logged once per process (README: the Responses front).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from ....errors import ConfigError
from ....freeform import Format, arguments_of, declaration
from ....tools import SharedCache
from ...turn import RequestError, Turn, tools_text
from ..dropped import Dropped
from ..known import KnownTools
from ..ids import upstream_call_id
from .compaction import ITEM, TRIGGER, summary_message, trigger
from .inputs import Lookup, kept, referenced
from .sealed import Sealer

CALL_PREFIX = "call_"
# Built-in tools: None is dropped with a log line (a client sends it by default and works
# without it), a string is the 400's reason.
BUILT_IN: dict[str, str | None] = {
    "web_search": None,
    "web_search_preview": None,
    "tool_search": None,
    "file_search": "it searches OpenAI vector stores, which toolbridge has none of",
    "code_interpreter": "it runs code in OpenAI's containers",
    "computer_use": "it drives a computer OpenAI hosts",
    "computer_use_preview": "it drives a computer OpenAI hosts",
    "computer": "it drives a computer OpenAI hosts",
    "mcp": "OpenAI's servers connect to the MCP server; offer its tools as functions instead",
    "image_generation": "it runs OpenAI's image model",
    "local_shell": "a built-in tool of OpenAI's models; offer a function instead",
    "shell": "a built-in tool of OpenAI's models; offer a function instead",
    "apply_patch": "a built-in tool of OpenAI's models; offer a custom (freeform) tool instead",
}
_EFFORTS = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "high"}
_TURN_FIELDS = frozenset({
    "model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
    "max_output_tokens", "temperature", "top_p", "presence_penalty", "frequency_penalty", "reasoning",
    "text", "metadata", "stream",
    "store", "previous_response_id", "include", "prompt_cache_key", "user", "safety_identifier"})
_REFUSED = {
    "background": "background responses need OpenAI's job queue",
    "conversation": "conversations are OpenAI's server-side objects; send previous_response_id or the input",
    "prompt": "prompt templates are stored on OpenAI's servers",
}
_DROPPED = {
    "client_metadata": "it is the client's own bookkeeping",
    "service_tier": "the upstream has one tier",
    "truncation": "the client's input is sent whole",
    "stream_options": "obfuscation is not needed on loopback or behind TLS",
    "max_tool_calls": "the model's calls are returned as it makes them",
    "top_logprobs": "log probabilities are not passed through this front",
    "prompt_cache_retention": "prompt caching is the upstream's own",
    "context_management": "the client's history is sent whole",
}
_KNOWN = _TURN_FIELDS | _REFUSED.keys()  # not dropped (a refused field may come as null or false)
_drop = Dropped("responses")


@dataclass
class Context:
    """What the answer needs of the request: what the response object repeats, the tools' names
    as the model sees them, and where it is stored."""

    model: str
    echo: dict[str, Any]  # request fields the response object repeats
    stream: bool = False
    store: bool = True
    sealed: bool = False  # reasoning items carry encrypted_content
    summary: bool = False  # reasoning is given as the item's summary (the request asked for one)
    namespaces: dict[str, tuple[str, str]] = field(default_factory=dict)  # model name -> (ns, name)
    freeforms: dict[str, Format] = field(default_factory=dict)  # the custom tools, by model name
    history: list[dict[str, Any]] = field(default_factory=list)  # the conversation, for the store
    scope: str = ""  # the caller's, where the response is stored (``scope.Scopes``)
    size: int = 0  # bytes the stored conversation is accounted before the output (``ResponsesFront.size``)
    inputs: list[dict[str, Any]] = field(default_factory=list)  # the input items with ids (``inputs``)
    kept: Any = None  # the ``state.Record`` a whole answer made, for the front's ``keep``
    made: Any = None  # the response object a stream ended with (what a WebSocket holds of it)
    created: float = field(default_factory=time.time)  # the response's created_at, on the gateway's clock
    compaction: str = ""  # "v2": the input ended with a compaction_trigger; "v1": /v1/responses/compact
    time_limit: float | None = None  # seconds the upstream exchange may take (the pipeline's ``_bounded``)
    frame: Any = None  # the ``_Frame`` whose echo this is (None: the echo is this request's own)

    def echo_tail(self) -> bytes:
        """``echo``'s JSON text as the rest of an object (``,"instructions":...}``): made once
        per frame, for the requests that share it."""
        frame = self.frame
        if frame is None:
            return b"," + orjson.dumps(self.echo)[1:]
        if frame.echo_json is None:
            frame.echo_json = b"," + orjson.dumps(self.echo)[1:]
        return frame.echo_json  # type: ignore[no-any-return]

    def client_name(self, name: str) -> tuple[str, str | None]:
        """(name, namespace) of a call as the client knows the tool."""
        found = self.namespaces.get(name)
        return (found[1], found[0]) if found else (name, None)


def responses_turn(body: Any, previous: Any, sealer: Sealer, lookup: Lookup | None = None,
                   raw: bytes | None = None) -> Turn:
    """A Responses request as a Turn; raises RequestError (400) naming the field.
    ``previous(id)`` gives a stored response's conversation (raises RequestError when unknown),
    ``lookup(id)`` a stored item an ``item_reference`` names (None when unknown); ``raw``: the
    JSON text the body was decoded from, if it was (its tools are then learnt for ``decode``).

    An agent sends the same fields with every request of a session but its input (and the
    previous response's id): their translation (``_Frame``) is kept by their JSON text (tools
    ``decode`` read as a list it knows are not encoded again: ``known``), and a
    request whose fields were translated before has only its input read. Those fields passed
    every check then, so the error such a request gets (if any) is the one its input's steps
    give, as on the whole way (``_planned``), where they come in the same order."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    key = _KNOWN_TOOLS.fields_key(body, _PER_REQUEST)
    frame = _FRAMES.get(key) if key is not None else None
    if frame is None or _additional(body.get("input")):  # (a frame is kept without additional tools)
        return _planned(body, previous, sealer, lookup, key, raw)
    return _turn_of(frame, body, _conversation(body, frame, previous, sealer, lookup), True)


def _planned(body: dict[str, Any], previous: Any, sealer: Sealer, lookup: Lookup | None,
             key: Any, raw: bytes | None) -> Turn:
    """``responses_turn``'s whole way: every field checked and translated, in the order their
    errors come; the fields' translation is kept under ``key`` (None: not kept), the tools of
    a ``raw`` body then learnt."""
    for name, why in _REFUSED.items():
        if body.get(name) not in (None, False):
            raise RequestError(f"{name}: not supported: {why}", param=name)
    _drop.unknown(body, _KNOWN, _DROPPED)
    model = body.get("model")  # optional: the upstream's model (gateway/upstream/models.py)
    if model is not None and (not isinstance(model, str) or not model):
        raise RequestError("model: must be a model name (string)", param="model")
    stream, store = _flag(body, "stream", False), _flag(body, "store", True)
    options: dict[str, Any] = {} if model is None else {"model": model}
    _sampling(body, options)
    reasoning = body.get("reasoning")
    if reasoning is not None:  # (each optional field read only when given: most are left out)
        options.update(_reasoning(reasoning))
    if body.get("text") is not None:
        options.update(_text(body.get("text")))
    if stream:
        options["stream"] = True
        options["stream_options"] = {"include_usage": True}
    additional = _additional(body.get("input"))
    (tools, freeforms, namespaces, schema_paths), shown, text, names = _tools_of(body.get("tools"), additional)
    choice = body.get("tool_choice")
    if choice is not None and type(choice) is not str:
        choice = _tool_choice(choice, namespaces)
    parallel = body.get("parallel_tool_calls")
    if parallel is not None and not isinstance(parallel, bool):
        raise RequestError("parallel_tool_calls: must be a boolean", param="parallel_tool_calls")
    frame = _Frame(model, stream, store, options, tools, freeforms, namespaces, schema_paths, text, names, choice,
                   parallel)
    conversation = _conversation(body, frame, previous, sealer, lookup)
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise RequestError("instructions: must be a string", param="instructions")
    frame.instructions = instructions
    frame.echo = _echo(body, parallel, shown)
    include = body.get("include")
    frame.sealed = include is not None and "reasoning.encrypted_content" in _include(include)
    frame.summary = reasoning is not None and _summary(reasoning)
    kept = key is not None and not additional
    if kept:
        _FRAMES.put(key, frame)
        if raw is not None:
            _KNOWN_TOOLS.learn_own(raw, body.get("tools"))
    return _turn_of(frame, body, conversation, kept)


@dataclass(slots=True)
class _Frame:
    """What a request's fields but ``input`` and ``previous_response_id`` make (``_planned``),
    shared by the requests that send the same: nothing here is changed once it is kept."""

    model: str | None
    stream: bool
    store: bool
    options: dict[str, Any]  # the upstream's fields (each turn has its own copy: ``Turn.serve_as``)
    tools: list[dict[str, Any]] | None
    freeforms: dict[str, Format]
    namespaces: dict[str, tuple[str, str]]
    schema_paths: list[str]
    text: bytes | None  # the tools' JSON text (``Turn.tools_json``)
    names: dict[tuple[str, str], str]  # the namespaced functions' names (``_names``)
    choice: Any
    parallel: Any
    instructions: str | None = None
    echo: dict[str, Any] = field(default_factory=dict)  # without previous_response_id (``_turn_of``)
    sealed: bool = False
    summary: bool = False
    echo_json: bytes | None = None  # ``b"," + echo``'s JSON without its brace (``Context.echo_tail``)


_FRAMES = SharedCache(256)  # by ``KnownTools.fields_key`` without ``_PER_REQUEST``
_PER_REQUEST = ("input", "previous_response_id")  # the one request's fields, not a frame's
_KNOWN_TOOLS = KnownTools()  # the tools lists of kept frames, by their JSON text (``known``)
decode = _KNOWN_TOOLS.decode


def _conversation(body: dict[str, Any], frame: _Frame, previous: Any, sealer: Sealer,
                  lookup: Lookup | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]], bool, bool]:
    """The conversation (the previous response's, then the input's), the input items as they
    are kept, whether the input asks for a compaction, and whether no two tool results come
    in a row in it (``Turn.ordered``; a previous response's conversation is not looked at:
    False)."""
    previous_id = body.get("previous_response_id")
    history: list[dict[str, Any]] = []
    if previous_id is not None:
        if not isinstance(previous_id, str) or not previous_id:
            raise RequestError("previous_response_id: must be a response id", param="previous_response_id")
        history = list(previous(previous_id))
    inputs: list[dict[str, Any]] = []  # kept only when the response is (Codex sends its history unstored)
    given, compacting = trigger(body.get("input"))  # (the answer is then the summary: compaction)
    made, ordered = _items(given, frame.names, sealer, _call_ids(history) if history else set(), lookup,
                           inputs if frame.store else None)
    if history:
        history += made
        return history, inputs, compacting, False
    return made, inputs, compacting, ordered


def _turn_of(frame: _Frame, body: dict[str, Any],
             conversation: tuple[list[dict[str, Any]], list[dict[str, Any]], bool, bool], kept: bool) -> Turn:
    """The turn of ``frame``'s fields and the request's conversation; ``kept``: the frame is
    kept (``_FRAMES``), and is the turn's ``fields``: every turn of it is planned from what the
    first one's planning made (``turn.plan_turn``), as the chat front's turns of a kept head
    are (what a turn is planned from is all the frame's but its messages and context)."""
    history, inputs, compacting, ordered = conversation
    previous_id, echo, shared = body.get("previous_response_id"), frame.echo, frame
    if previous_id is not None:  # (the one field of the echo a frame does not hold)
        echo, shared = echo.copy(), None
        echo["previous_response_id"] = previous_id
    # (Its fields given in their order, not by keyword: see turn.plan_turn; scope and size are
    # the front's.)
    context = Context(frame.model or "", echo, frame.stream, frame.store, frame.sealed, frame.summary,
                      frame.namespaces, frame.freeforms, history, "", 0, inputs)
    context.frame = shared
    if compacting:
        context.compaction = "v2"
    # (Its fields given in their order, not by keyword: see turn.plan_turn.)
    turn = Turn(_lead_system(frame.instructions, history), frame.tools, frame.choice, frame.parallel, frame.stream,
                frame.stream, frame.model, dict(frame.options), frame.freeforms, context, frame.schema_paths,
                (frame.tools, frame.text), frame if kept else None)
    turn.ordered = ordered
    return turn


def _flag(body: dict[str, Any], key: str, default: bool) -> bool:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise RequestError(f"{key}: must be a boolean", param=key)
    return value


def _include(include: Any) -> list[str]:
    if include is None:
        return []
    if not isinstance(include, list) or not all(isinstance(i, str) for i in include):
        raise RequestError("include: must be an array of strings", param="include")
    for item in include:
        if item != "reasoning.encrypted_content":
            _drop(f"include:{item}", "only reasoning.encrypted_content is produced here")
    return include


def _echo(body: dict[str, Any], parallel: Any, tools: list[Any]) -> dict[str, Any]:
    """The request fields the response object repeats (``tools``: as it repeats them,
    ``_repeated``), and the settings it reports as used: the request's sampling (else the
    defaults the API reports: what an upstream applies when none is sent), and the ones this
    front has one value of (one tier, the input sent whole, no log probabilities, no cap on the
    calls). A copy of ``_ECHO``, with what the request gives."""
    get = body.get
    metadata = get("metadata")
    if metadata is not None and (not isinstance(metadata, dict) or len(metadata) > 16 or not all(
            isinstance(k, str) and len(k) <= 64 and isinstance(v, str) and len(v) <= 512
            for k, v in metadata.items())):
        raise RequestError("metadata: at most 16 string keys (64 characters) with string values "
                           "(512 characters)", param="metadata")
    echo = _ECHO.copy()
    for key in _GIVEN.intersection(body):  # (a few: each set in its place, the copy's order kept)
        if body[key] is not None:
            echo[key] = body[key]
    reasoning, text, choice = get("reasoning"), get("text"), get("tool_choice")
    echo["metadata"] = metadata or {}
    echo["tools"] = tools
    if choice:
        echo["tool_choice"] = choice
    if parallel is not None:
        echo["parallel_tool_calls"] = parallel
    echo["reasoning"] = {"effort": None, "summary": None, **reasoning} if isinstance(reasoning, dict) else \
        {"effort": None, "summary": None}
    echo["text"] = {"format": {"type": "text"}, **text} if isinstance(text, dict) else {"format": {"type": "text"}}
    return echo


# What the response object repeats when the request gives nothing, in its order (the fields
# holding None here are set for every request).
_ECHO: dict[str, Any] = {
    "instructions": None, "max_output_tokens": None, "previous_response_id": None, "prompt_cache_key": None,
    "user": None, "safety_identifier": None, "metadata": None, "tools": None, "tool_choice": "auto",
    "parallel_tool_calls": True, "reasoning": None, "text": None, "temperature": 1.0, "top_p": 1.0,
    "presence_penalty": 0.0, "frequency_penalty": 0.0, "top_logprobs": 0, "max_tool_calls": None,
    "truncation": "disabled", "service_tier": "default"}
# The fields repeated as given, when given (not null); previous_response_id too (``_turn_of``).
_GIVEN = frozenset({"instructions", "max_output_tokens", "prompt_cache_key", "user",
                    "safety_identifier", "temperature", "top_p", "presence_penalty", "frequency_penalty"})


def _repeated(tools: Any) -> list[Any]:
    """The tools as the response repeats them."""
    return [_strict_shown(t) for t in tools] if isinstance(tools, list) else []


def _strict_shown(tool: Any) -> Any:
    """A function tool as the response repeats it: ``strict`` as applied (true unless given),
    ``description`` and ``parameters`` null when not given (the API's shape has every field)."""
    if isinstance(tool, dict) and tool.get("type") == "function":
        strict = True if tool.get("strict") is None else tool["strict"]
        return {"description": None, "parameters": None, **tool, "strict": strict}
    return tool


# ---------------------------------------------------------------- sampling, reasoning, text


def _sampling(body: dict[str, Any], out: dict[str, Any]) -> None:
    """The output limit and the sampling fields, into the upstream's ``out``."""
    limit = body.get("max_output_tokens")
    if limit is not None:
        if type(limit) is not int or limit < 1:
            raise RequestError("max_output_tokens: must be a positive integer", param="max_output_tokens")
        out["max_tokens"] = limit
    for key in ("temperature", "top_p", "presence_penalty", "frequency_penalty"):
        value = body.get(key)
        if value is not None:
            if type(value) is bool or not isinstance(value, (int, float)):
                raise RequestError(f"{key}: must be a number", param=key)
            out[key] = value


def _reasoning(reasoning: Any) -> dict[str, Any]:
    """``reasoning.effort`` as upstreams read it: ``reasoning_effort`` (gpt-oss, vLLM, Ollama:
    low, medium or high) and the template switch (Qwen3, GLM: ``enable_thinking``; DeepSeek:
    ``thinking``), off for ``none``."""
    if reasoning is None:
        return {}
    if not isinstance(reasoning, dict):
        raise RequestError("reasoning: must be an object", param="reasoning")
    effort = reasoning.get("effort")
    if effort is None:
        return {}
    if effort == "none":
        return {"chat_template_kwargs": {"enable_thinking": False, "thinking": False}}
    if not isinstance(effort, str) or effort not in _EFFORTS:
        raise RequestError("reasoning.effort: must be one of none, minimal, low, medium, high, xhigh",
                           param="reasoning.effort")
    return {"reasoning_effort": _EFFORTS[effort],
            "chat_template_kwargs": {"enable_thinking": True, "thinking": True}}


def _summary(reasoning: Any) -> bool:
    """Whether reasoning is given as a summary: the request asked for one (``auto``, ``concise``,
    ``detailed``). Open models do not summarise: the summary is the reasoning itself, whole."""
    if not isinstance(reasoning, dict):
        return False
    kind = reasoning.get("summary", reasoning.get("generate_summary"))
    return kind in ("auto", "concise", "detailed")


def _text(text: Any) -> dict[str, Any]:
    """``text.format`` as the chat ``response_format`` (JSON schema output where the upstream
    supports it: an upstream that does not answers its own 400); ``verbosity`` is dropped."""
    if text is None:
        return {}
    if not isinstance(text, dict):
        raise RequestError("text: must be an object", param="text")
    if text.get("verbosity") is not None:
        _drop("text.verbosity", "open models have no verbosity setting")
    fmt = text.get("format")
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if fmt is None or kind == "text":
        return {}
    if kind == "json_object":
        return {"response_format": {"type": "json_object"}}
    if kind != "json_schema":
        raise RequestError("text.format.type: must be 'text', 'json_schema' or 'json_object'",
                           param="text.format.type")
    name, schema = fmt.get("name"), fmt.get("schema")
    if not isinstance(name, str) or not name or not isinstance(schema, dict):
        raise RequestError("text.format: a json_schema format needs 'name' and 'schema'", param="text.format")
    spec: dict[str, Any] = {"name": name, "schema": schema}
    for key in ("description", "strict"):
        if fmt.get(key) is not None:
            spec[key] = fmt[key]
    return {"response_format": {"type": "json_schema", "json_schema": spec}}


# ---------------------------------------------------------------- tools


_Offered = tuple[list[dict[str, Any]] | None, dict[str, Format], dict[str, tuple[str, str]], list[str]]


def _additional(value: Any) -> list[tuple[str, Any]]:
    """The tools of the input's ``additional_tools`` items, each with where it is: Codex sends its
    tools so when it knows no metadata of the model asked for. The template has one tool list, so
    they are offered from the start of the conversation, beside ``tools``."""
    out: list[tuple[str, Any]] = []
    for i, item in enumerate(value if isinstance(value, list) else ()):
        if isinstance(item, dict) and item.get("type") == "additional_tools":
            tools = item.get("tools")
            if not isinstance(tools, list):
                raise RequestError(f"input[{i}].tools: must be an array", param=f"input[{i}].tools")
            out += [(f"input[{i}].tools[{j}]", tool) for j, tool in enumerate(tools)]
    return out


def _tools_of(tools: Any, additional: list[tuple[str, Any]]
              ) -> tuple[_Offered, list[Any], bytes | None, dict[tuple[str, str], str]]:
    """``_tools``, the tools as the response repeats them (``_repeated``), the chat tools' JSON
    text (``Turn.tools_json``) and the namespaced functions' names (``_names``), made once per
    distinct tools list and kept by its JSON text (agents send the same tools with every
    request; what is kept is not changed by its users). A request
    with ``additional_tools`` items makes them each time (the text then by planning), and a list
    ``_tools`` refuses is refused each time."""
    if additional or not isinstance(tools, list) or not tools:
        offered = _tools(tools, additional)
        return offered, _repeated(tools), None, _names(offered[2])
    return _OFFERED.made(orjson.dumps(tools), _kept, tools)  # type: ignore[no-any-return]


def _kept(tools: list[Any]) -> tuple[_Offered, list[Any], bytes | None, dict[tuple[str, str], str]]:
    offered = _tools(tools, [])
    return offered, _repeated(tools), tools_text(offered[0]), _names(offered[2])


def _names(namespaces: dict[str, tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The name the model sees each namespaced function under, by (namespace, name)."""
    return {v: k for k, v in namespaces.items()}


_OFFERED = SharedCache(256)  # by the tools' JSON text


def _tools(tools: Any, additional: list[tuple[str, Any]]) -> _Offered:
    """The chat function tools, the freeform ones by name, the namespaced functions by the name
    the model sees them under, and where each tool's schema is in the request; ``additional``:
    the tools of ``additional_tools`` input items."""
    if tools is None and not additional:
        return None, {}, {}, []
    if tools is not None and not isinstance(tools, list):
        raise RequestError("tools: must be an array", param="tools")
    entries: list[tuple[str | None, str, dict[str, Any]]] = []  # (namespace, where, tool)
    for where, tool in [(f"tools[{i}]", tool) for i, tool in enumerate(tools or ())] + additional:
        kind = tool.get("type") if isinstance(tool, dict) else None
        if not isinstance(kind, str):
            raise RequestError(f"{where}.type: a tool type (a string) is required", param=f"{where}.type")
        if kind in ("function", "custom"):
            entries.append((None, where, tool))
        elif kind == "namespace":
            space, members = tool.get("name"), tool.get("tools")
            if not isinstance(space, str) or not space or not isinstance(members, list):
                raise RequestError(f"{where}: a namespace needs 'name' and 'tools'", param=where)
            for j, member in enumerate(members):
                inner = member.get("type") if isinstance(member, dict) else None
                if inner not in ("function", "custom"):
                    raise RequestError(f"{where}.tools[{j}].type: a namespace holds functions and "
                                       "custom tools", param=f"{where}.tools[{j}].type")
                entries.append((space, f"{where}.tools[{j}]", member))
        elif kind in BUILT_IN:
            why = BUILT_IN[kind]
            if why is not None:
                raise RequestError(f"{where}.type: the built-in tool {kind!r} is not supported: {why}",
                                   param=f"{where}.type")
            _drop(f"tool:{kind}", "a tool only OpenAI's servers run; left out of the model's prompt")
        else:
            raise RequestError(f"{where}.type: {kind!r} is not a tool type toolbridge knows",
                               param=f"{where}.type")
    return _offered(entries)


def _offered(entries: list[tuple[str | None, str, dict[str, Any]]]) -> _Offered:
    for _, where, tool in entries:
        if not isinstance(tool.get("name"), str) or not tool["name"]:
            raise RequestError(f"{where}.name: a tool name (a string) is required", param=f"{where}.name")
    names = Counter(t["name"] for _, _, t in entries)
    out, freeforms, namespaces = [], {}, {}
    seen: set[str] = set()  # the names offered so far, as the model sees them
    for space, where, tool in entries:
        name = tool["name"]
        shown = name if space is None or names[name] == 1 else f"{space}__{name}"
        if shown in seen:
            raise RequestError(f"{where}.name: {shown!r} is offered twice", param=f"{where}.name")
        seen.add(shown)
        if space is not None:
            namespaces[shown] = (space, name)
        description = tool.get("description") if isinstance(tool.get("description"), str) else None
        if tool["type"] == "custom":
            try:
                fmt = Format.of(tool.get("format"), f"{where}.format")
            except ConfigError as exc:
                raise RequestError(str(exc), param=f"{where}.format") from exc
            freeforms[shown] = fmt
            out.append(declaration(shown, description, fmt))
            continue
        out.append(_function(tool, shown, description, where))
    paths = [f"{where}.format" if tool["type"] == "custom" else f"{where}.parameters" for _, where, tool in entries]
    return out or None, freeforms, namespaces, paths


def _function(tool: dict[str, Any], name: str, description: str | None, where: str) -> dict[str, Any]:
    parameters = tool.get("parameters")
    if parameters is None:
        parameters = {"type": "object", "properties": {}}
    if not isinstance(parameters, dict):
        raise RequestError(f"{where}.parameters: must be a JSON schema object", param=f"{where}.parameters")
    strict = tool.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise RequestError(f"{where}.strict: must be a boolean", param=f"{where}.strict")
    function: dict[str, Any] = {"name": name, "parameters": parameters,
                                "strict": True if strict is None else strict}  # this API's default
    if description:
        function["description"] = description
    return {"type": "function", "function": function}


def _tool_choice(choice: Any, namespaces: dict[str, tuple[str, str]]) -> Any:
    """The chat ``tool_choice``: named custom tools are functions, namespaced ones by the name
    the model sees."""
    if choice is None or isinstance(choice, str):
        return choice
    if not isinstance(choice, dict):
        raise RequestError("tool_choice: must be a string or an object", param="tool_choice")
    kind = choice.get("type")
    if kind in ("function", "custom"):
        return {"type": "function", "function": {"name": _shown(choice, namespaces)}}
    if kind == "allowed_tools":
        tools = choice.get("tools")
        if not isinstance(tools, list):
            raise RequestError("tool_choice.tools: must be an array", param="tool_choice.tools")
        named = []
        for i, entry in enumerate(tools):
            if not isinstance(entry, dict) or entry.get("type") not in ("function", "custom"):
                raise RequestError(f"tool_choice.tools[{i}]: only functions and custom tools can be "
                                   "allowed here", param=f"tool_choice.tools[{i}]")
            named.append({"type": "function", "function": {"name": _shown(entry, namespaces)}})
        # As a chat upstream takes it.
        return {"type": "allowed_tools", "allowed_tools": {"mode": choice.get("mode", "auto"), "tools": named}}
    raise RequestError(f"tool_choice.type: {kind!r} names a built-in tool, which toolbridge does not "
                       "run", param="tool_choice.type")


def _shown(entry: dict[str, Any], namespaces: dict[str, tuple[str, str]]) -> Any:
    name, space = entry.get("name"), entry.get("namespace")
    for shown, (ns, inner) in namespaces.items():
        if inner == name and (space is None or ns == space):
            return shown
    return name


# ---------------------------------------------------------------- input


def _call_ids(messages: list[dict[str, Any]]) -> set[str]:
    """The (upstream) ids of the calls in a stored conversation."""
    return {call["id"] for m in messages for call in m.get("tool_calls") or ()}


def _items(value: Any, names: dict[tuple[str, str], str], sealer: Sealer, calls: set[str],
           lookup: Lookup | None = None, inputs: list[dict[str, Any]] | None = None
           ) -> tuple[list[dict[str, Any]], bool]:
    """The input items as chat messages (system messages left where they are: ``_lead_system``),
    and whether no two tool results come in a row among them (``Turn.ordered``); ``calls``: the
    ids of the calls before them (of the stored conversation), which an output item may answer,
    as may the calls among the items before it. ``item_reference`` items are read as the stored
    item they name (``lookup``); ``inputs`` gets each item as it is kept."""
    if isinstance(value, str):
        if inputs is not None:
            inputs.append(kept({"role": "user", "content": value}))
        return [{"role": "user", "content": value}], True
    if not isinstance(value, list):
        raise RequestError("input: must be a string or an array of items", param="input")
    out: list[dict[str, Any]] = []
    reasoning: list[str] = []  # the reasoning items just before the next assistant output
    # (whether a result came last among the messages a system message does not count in: those
    # are lifted out to lead, ``_lead_system``, so a result on each side of one are in a row)
    ordered, after_result = True, False
    for i, item in enumerate(value):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise RequestError(f"{where}: must be an object", param=where)
        kind = item.get("type", "message")
        if kind == "item_reference":
            item = referenced(item, where, lookup)
            kind = item.get("type", "message")
        if inputs is not None:
            inputs.append(kept(item))
        if kind == "message":
            message = _message(item, where)
            if message["role"] == "assistant":
                target = _assistant(out, reasoning)
                target["content"] = _joined(target, message["content"])
                after_result = False
            else:
                out.append(message)
                after_result = after_result and message["role"] == "system"
        elif kind == "reasoning":
            reasoning.append(_reasoning_item(item, where, sealer))
        elif kind in ("function_call", "custom_tool_call"):
            call = _call(item, where, names)
            calls.add(call["id"])
            _assistant(out, reasoning).setdefault("tool_calls", []).append(call)
            after_result = False
        elif kind in ("function_call_output", "custom_tool_call_output"):
            ordered = ordered and not after_result
            out.append(_output(item, where, calls))
            after_result = True
        elif kind == "additional_tools":
            continue  # offered with the request's tools (``_additional``)
        elif kind == ITEM:
            out.append(summary_message(item, where, sealer))
            after_result = False
        elif kind == TRIGGER:
            raise RequestError(f"{where}: a compaction_trigger item is the last input item", param=where)
        else:
            raise RequestError(f"{where}.type: {kind!r} items are not supported here (they belong to "
                               "built-in tools toolbridge does not run)", param=f"{where}.type")
    return out, ordered


def _assistant(out: list[dict[str, Any]], reasoning: list[str]) -> dict[str, Any]:
    """The assistant message the next output item joins: the last one, unless a message of
    another role (or a tool result) came after it; the pending reasoning goes with it."""
    last = out[-1] if out else None
    if last is None or last["role"] != "assistant" or (reasoning and "reasoning_content" in last):
        last = {"role": "assistant", "content": None}
        out.append(last)
    if reasoning:
        text = "".join(reasoning)
        if text:
            last["reasoning_content"] = last.get("reasoning_content", "") + text
        reasoning.clear()
    return last


def _joined(message: dict[str, Any], content: Any) -> Any:
    before = message.get("content")
    if before is None:
        return content
    if isinstance(before, str) and isinstance(content, str):
        return before + content
    return [*_parts(before), *_parts(content)]


def _parts(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _message(item: dict[str, Any], where: str) -> dict[str, Any]:
    role = item.get("role")
    if role not in ("user", "assistant", "system", "developer"):
        raise RequestError(f"{where}.role: must be 'user', 'assistant', 'system' or 'developer'",
                           param=f"{where}.role")
    content = item.get("content")
    if isinstance(content, str):
        return {"role": "system" if role == "developer" else role, "content": content}
    if not isinstance(content, list):
        raise RequestError(f"{where}.content: must be a string or an array of parts", param=f"{where}.content")
    parts = [_part(part, f"{where}.content[{j}]", role) for j, part in enumerate(content)]
    texts = [p["text"] for p in parts if p["type"] == "text"]
    if len(texts) == len(parts):
        joined: Any = "".join(texts) if role == "assistant" else "\n".join(texts)
    elif role in ("system", "developer", "assistant"):
        raise RequestError(f"{where}.content: a {role} message holds text only", param=f"{where}.content")
    else:
        joined = parts
    return {"role": "system" if role == "developer" else role, "content": joined}


def _part(part: Any, where: str, role: str) -> dict[str, Any]:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind in ("input_text", "output_text", "text", "refusal"):
        text = part.get("refusal" if kind == "refusal" else "text")
        if not isinstance(text, str):
            raise RequestError(f"{where}.text: must be a string", param=f"{where}.text")
        return {"type": "text", "text": text}
    if kind == "input_image":
        url = part.get("image_url")
        if not isinstance(url, str) or not url:
            raise RequestError(f"{where}.image_url: an image must be a URL or a data URL (no Files API "
                               "here)", param=f"{where}.image_url")
        image: dict[str, Any] = {"url": url}
        if part.get("detail") in ("low", "high", "auto"):
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    raise RequestError(f"{where}.type: {kind!r} parts are not supported here (files need OpenAI's "
                       "Files API)", param=f"{where}.type")


def _reasoning_item(item: dict[str, Any], where: str, sealer: Sealer) -> str:
    """The text a reasoning item gives back to the upstream: its sealed content when it carries
    one toolbridge sealed, else its ``reasoning_text`` content, else its summary (toolbridge's
    summaries are the reasoning itself)."""
    given = [_reasoning_texts(item.get(key), f"{where}.{key}") for key in ("content", "summary")]
    sealed = item.get("encrypted_content")
    if sealed is not None and not isinstance(sealed, str):
        raise RequestError(f"{where}.encrypted_content: must be a string", param=f"{where}.encrypted_content")
    if sealed:
        text = sealer.open(sealed, where)
        if text is not None:
            return text
    for texts in given:
        if texts:
            return texts
    return ""


def _reasoning_texts(parts: Any, where: str) -> str:
    """The text of a reasoning item's ``content`` or ``summary``: an array of parts with text."""
    if parts is None:
        return ""
    if not isinstance(parts, list):
        raise RequestError(f"{where}: must be an array of parts", param=where)
    texts = []
    for j, part in enumerate(parts):
        text = part.get("text") if isinstance(part, dict) else None
        if not isinstance(text, str):
            raise RequestError(f"{where}[{j}]: must be a part with 'text' (a string)", param=f"{where}[{j}]")
        texts.append(text)
    return "".join(texts)


def _call(item: dict[str, Any], where: str, names: dict[tuple[str, str], str]) -> dict[str, Any]:
    call_id, name = item.get("call_id"), item.get("name")
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(f"{where}.call_id: is required", param=f"{where}.call_id")
    if not isinstance(name, str) or not name:
        raise RequestError(f"{where}.name: is required", param=f"{where}.name")
    space = item.get("namespace")
    shown = names.get((space, name), name) if isinstance(space, str) else name
    if item["type"] == "custom_tool_call":
        text = item.get("input")
        if not isinstance(text, str):
            raise RequestError(f"{where}.input: must be a string", param=f"{where}.input")
        arguments = arguments_of(text)
    else:
        arguments = item.get("arguments")
        if not isinstance(arguments, str):
            raise RequestError(f"{where}.arguments: must be a JSON string", param=f"{where}.arguments")
    return {"id": upstream_call_id(CALL_PREFIX, call_id), "type": "function",
            "function": {"name": shown, "arguments": arguments}}


def _output(item: dict[str, Any], where: str, calls: set[str]) -> dict[str, Any]:
    call_id, output = item.get("call_id"), item.get("output")
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(f"{where}.call_id: is required", param=f"{where}.call_id")
    if upstream_call_id(CALL_PREFIX, call_id) not in calls:
        raise RequestError(f"{where}.call_id: no tool call found for the output with call_id "
                           f"{call_id!r:.80} (no function_call or custom_tool_call before it, in the "
                           "input or the previous response)", param=f"{where}.call_id")
    if isinstance(output, list):
        texts = []
        for j, part in enumerate(output):
            converted = _part(part, f"{where}.output[{j}]", "tool")
            texts.append(converted["text"] if converted["type"] == "text" else "[image]")
        output = "\n".join(texts)
    if not isinstance(output, str):
        raise RequestError(f"{where}.output: must be a string or an array of parts", param=f"{where}.output")
    return {"role": "tool", "tool_call_id": upstream_call_id(CALL_PREFIX, call_id), "content": output}


def _lead_system(instructions: str | None, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``instructions`` and every system (developer) message as the one leading system message
    (chat templates take a system message only first), then the rest."""
    texts = [instructions] if instructions else []
    rest = []
    for message in messages:
        if message["role"] == "system":
            texts.append(message["content"])
        else:
            rest.append(message)
    return ([{"role": "system", "content": "\n\n".join(texts)}] if texts else []) + rest
