"""Anthropic Messages requests as the pipeline's ``Turn`` (``messages_turn``).

The request body is checked field by field and becomes a ``Turn`` in the Chat Completions shape:
``system`` and mid-conversation ``system`` messages become the one leading system message; a
user message's ``tool_result`` blocks become ``tool`` messages, placed first (they answer the
assistant message just before), its text and images one user message after them; an assistant
message's ``thinking`` blocks become its ``reasoning_content``, its ``tool_use`` blocks its
``tool_calls`` (their ids mapped back to the upstream's: ``ids``). ``tools`` become function
tools, ``tool_choice`` its chat equivalent, ``thinking`` the upstream's reasoning switch. What
cannot be honoured is a 400 naming the field's path (``tools.0.type: ...``); fields that change
nothing an upstream can do are dropped, each logged once per process (README: the Anthropic
Messages front, where the table of fields is). A ``thread`` continue is the kept conversation
(``threads.Prior``: its system message, history and tools) followed by the request's messages,
whose first ``tool_result`` blocks may answer the kept answer's ``tool_use`` blocks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from ....tools import SharedCache
from ...turn import RequestError, Turn, kept_head, tools_text, turn_of
from ..dropped import Dropped
from ..known import KnownTools
from .ids import upstream_id
from .threads import Prior, Thread, kept_turn, pending_calls, thread_field

_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")

# Fields sent on under the same name, with the type each must have.
_SAMPLING = {"temperature": (int, float), "top_p": (int, float), "top_k": (int,)}
# Fields that cannot be honoured: 400 naming the field.
_REFUSED = {
    "mcp_servers": "MCP servers are connected by Anthropic's servers; toolbridge has none to run them",
    "container": "containers belong to Anthropic's code execution tool, which toolbridge cannot run",
}
# Fields that change nothing an upstream can do: dropped, logged once per process.
_DROPPED = {
    "metadata": "it serves Anthropic's abuse detection; nothing upstream reads it",
    "service_tier": "the upstream has one tier",
    "context_management": "context editing is Anthropic's server-side feature; the client's history "
                          "is sent whole",
    "inference_geo": "the upstream runs where it runs",
    "anthropic_version": "a Bedrock/Vertex field; the header is accepted",
    "cache_control": "prompt caching is the upstream's own; the cache fields of usage are 0",
    "speed": "the upstream has one speed",
}
_TURN_FIELDS = frozenset({"model", "messages", "system", "max_tokens", "stop_sequences", "stream",
                          "tools", "tool_choice", "thinking", "output_config", "thread", *_SAMPLING})
_drop = Dropped("messages")


def messages_turn(body: Any, count: bool = False, previous: Callable[[str], Prior] | None = None,
                  raw: bytes | None = None) -> Turn:
    """A Messages request as a Turn; raises RequestError (400) naming the field. ``count``: a
    count_tokens request (no ``max_tokens``, no ``stream``, no ``thread``). ``previous(id)``:
    the kept turn a ``thread`` continue names (it raises the 404); None: threads are not kept
    (a ``thread`` is the 400 ``thread_unsupported_request``). A threaded turn's ``context`` is
    its ``threads.Thread``. ``raw``: the JSON text the body was decoded from, as the pipeline's
    are (equal JSON texts are then equal values): the fields besides the messages and the system
    text (``_head``) are read once per distinct text of them (``_kept_turn``)."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    if raw is not None and body.get("thread") is None:
        turn, thread, prior = _kept_turn(body, count, raw), None, None
    else:
        turn, thread, prior = _head(body, count, previous)
    messages, turn.ordered = _conversation(body, prior)
    turn.messages = messages
    if thread is not None:
        turn.context = Thread(thread or None, messages, turn.tools, prior.size if prior else 0)
    return turn


def _kept_turn(body: dict[str, Any], count: bool, raw: bytes) -> Turn:
    """The turn of ``_head`` of a request without a ``thread`` (its messages still None), made
    once per distinct JSON text of its fields besides ``messages`` and ``system`` and kept by
    it (``turn.kept_head``: the conversation grows, and the system text is taken as it is;
    tools ``decode`` read as a list it knows are not encoded again: ``known``); a head ``_head``
    refuses is refused each time, as it is read before the messages are."""
    key = _KNOWN_TOOLS.fields_key(body, _CONVERSATION)
    if key is None:
        return _head(body, count, None)[0]
    return turn_of(_HEADS[count].made(key, _made_head, body, count, raw), None)


def _made_head(body: dict[str, Any], count: bool, raw: bytes) -> dict[str, Any]:
    """``_head`` of a request whose head is kept, as ``turn.kept_head`` keeps it, its tools
    then learnt for ``decode``."""
    head = kept_head(_head(body, count, None)[0])
    _KNOWN_TOOLS.learn_own(raw, body.get("tools"))
    return head


_HEADS = (SharedCache(256), SharedCache(256))  # by the head's JSON text; a request's, count_tokens'
_CONVERSATION = ("messages", "system")  # the fields not in a head
_KNOWN_TOOLS = KnownTools()  # the tools lists of kept heads, by their JSON text (``known``)
decode = _KNOWN_TOOLS.decode


def _head(body: dict[str, Any], count: bool,
          previous: Callable[[str], Prior] | None) -> tuple[Turn, str | None, Prior | None]:
    """The turn of every field but the messages and the system text (its messages None),
    checked in order and read (each optional one only when given: nearly every request leaves
    most of them out), with the ``thread`` field (``threads.thread_field``) and the kept turn
    it continues."""
    get = body.get
    for key, why in _REFUSED.items():
        if get(key) is not None:
            raise RequestError(f"{key}: not supported: {why}", param=key)
    _drop.unknown(body, _TURN_FIELDS, _DROPPED)
    model = get("model")  # optional: the upstream's model (gateway/upstream/models.py)
    if model is not None and (not isinstance(model, str) or not model):
        raise RequestError("model: must be a model name (string)", param="model")
    options: dict[str, Any] = {} if model is None else {"model": model}
    if not count:
        _limits(body, options)
    if get("thinking") is not None:
        options.update(_thinking(get("thinking"), get("max_tokens")))
    if get("output_config") is not None:
        _output_config(get("output_config"))
    stream = False if count else get("stream", False)
    if not isinstance(stream, bool):
        raise RequestError("stream: must be a boolean", param="stream")
    if stream:
        options["stream"] = True
        options["stream_options"] = {"include_usage": True}
    thread = prior = None
    if get("thread") is not None:
        if count:
            _drop("thread", "count_tokens counts the messages it is given")
        else:
            thread = thread_field(get("thread"))
            prior = kept_turn(body, thread, previous)
    if prior is None:
        tools, text, paths = _tools_of(get("tools"))
    else:
        tools, text, paths = prior.tools, None, _schema_paths(prior.tools)
    choice, parallel = (None, None) if get("tool_choice") is None else _tool_choice(get("tool_choice"), tools)
    # (Its fields given in their order, not by keyword: see turn.plan_turn.)
    turn = Turn(None, tools, choice, parallel, stream, stream, model, options, {}, None, paths,  # type: ignore[arg-type]
                (tools, text))
    return turn, thread, prior


def _conversation(body: dict[str, Any], prior: Prior | None) -> tuple[list[dict[str, Any]], bool]:
    """The leading system message and the messages; after a kept turn's, the request's own
    (their ``system`` messages joined to the kept system message). One pass over the messages:
    their ``system`` ones are gathered as they come (``_messages``). With whether no two tool
    messages come in a row (``Turn.ordered``; a kept turn's history is not looked at: False)."""
    system = body.get("system")
    parts = [_system_text(system, "system")] if system is not None else []
    messages = body.get("messages")
    try:
        new, ordered = _messages(messages, pending_calls(prior.messages) if prior is not None else None, parts)
    except RequestError:
        _system(messages)  # a system message's fault is told before the others, as it was found first
        raise
    text = "\n\n".join([p for p in parts if p]) if len(parts) > 1 else parts[0] if parts else ""
    if prior is None:
        if text:
            new.insert(0, {"role": "system", "content": text})
        return new, ordered
    lead = [{"role": "system", "content": text}] if text else []
    history = list(prior.messages)
    if lead:
        if history and history[0]["role"] == "system":
            lead = [{"role": "system", "content": history.pop(0)["content"] + "\n\n" + text}]
        history = [*lead, *history]
    return [*history, *new], False


def _limits(body: dict[str, Any], out: dict[str, Any]) -> None:
    """``max_tokens`` (required), ``stop_sequences`` and the sampling fields, into the upstream's ``out``."""
    max_tokens = body.get("max_tokens")
    if type(max_tokens) is not int or max_tokens < 1:
        raise RequestError("max_tokens: a positive integer is required", param="max_tokens")
    out["max_tokens"] = max_tokens
    stops = body.get("stop_sequences")
    if stops is not None:
        if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
            raise RequestError("stop_sequences: must be an array of non-empty strings", param="stop_sequences")
        if stops:
            out["stop"] = stops
    for key, kinds in _SAMPLING.items():
        value = body.get(key)
        if value is None:
            continue
        if type(value) is bool or not isinstance(value, kinds):
            raise RequestError(f"{key}: must be a number", param=key)
        out[key] = value


def _thinking(thinking: Any, max_tokens: Any) -> dict[str, Any]:
    """The upstream's reasoning switch for ``thinking``: ``chat_template_kwargs`` (Qwen3, GLM read
    ``enable_thinking``; DeepSeek V3.1 ``thinking``) and, when enabled, ``reasoning_effort``
    (gpt-oss, Ollama) from the budget. ``adaptive`` leaves the upstream's default."""
    if thinking is None:
        return {}
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind == "adaptive":
        return {}
    if kind == "disabled":
        return {"chat_template_kwargs": {"enable_thinking": False, "thinking": False}}
    if kind != "enabled":
        raise RequestError("thinking: type must be 'enabled', 'disabled' or 'adaptive'", param="thinking.type")
    budget = thinking.get("budget_tokens")
    if type(budget) is not int or budget < 1:
        raise RequestError("thinking.budget_tokens: a positive integer is required with type 'enabled'",
                           param="thinking.budget_tokens")
    if type(max_tokens) is int and budget >= max_tokens:
        raise RequestError("thinking.budget_tokens: must be less than max_tokens", param="thinking.budget_tokens")
    effort = "low" if budget < 4096 else "medium" if budget < 16384 else "high"
    return {"chat_template_kwargs": {"enable_thinking": True, "thinking": True}, "reasoning_effort": effort}


def _output_config(config: Any) -> None:
    if config is None:
        return
    if not isinstance(config, dict):
        raise RequestError("output_config: must be an object", param="output_config")
    if config.get("format") is not None:
        raise RequestError("output_config.format: structured outputs are not supported",
                           param="output_config.format")
    if config.keys() - {"format"}:
        _drop("output_config.effort", "the effort is the upstream's; thinking.budget_tokens sets "
                                      "reasoning_effort")


# ---------------------------------------------------------------- tools


def _tools_of(tools: Any) -> tuple[list[dict[str, Any]] | None, bytes | None, list[str]]:
    """``_tools``, their JSON text (``Turn.tools_json``) and where their schemas are
    (``Turn.schema_paths``), made once per distinct tools list and kept by its JSON text (agents
    send the same tools with every request; what is kept is not changed by its users, as a kept
    thread's tools are not); a list ``_tools`` refuses is refused each time."""
    if not isinstance(tools, list) or not tools:
        made = _tools(tools)
        return made, None, _schema_paths(made)
    return _OFFERED.made(orjson.dumps(tools), _kept, tools)  # type: ignore[no-any-return]


def _kept(tools: list[Any]) -> tuple[list[dict[str, Any]] | None, bytes | None, list[str]]:
    made = _tools(tools)
    return made, tools_text(made), _schema_paths(made)


def _schema_paths(tools: list[Any] | None) -> list[str]:
    return [f"tools.{i}.input_schema" for i in range(len(tools or ()))]


_OFFERED = SharedCache(256)  # by the tools' JSON text


def _tools(tools: Any) -> list[dict[str, Any]] | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise RequestError("tools: must be an array", param="tools")
    out = []
    names: set[str] = set()
    for i, tool in enumerate(tools):
        where = f"tools.{i}"
        if not isinstance(tool, dict):
            raise RequestError(f"{where}: must be an object", param=where)
        kind = tool.get("type")
        if kind not in (None, "custom"):
            raise RequestError(f"{where}.type: {kind!r} is a tool Anthropic defines (a server tool runs "
                               "on Anthropic's servers); toolbridge offers only custom tools, with "
                               "name and input_schema", param=f"{where}.type")
        name, schema = tool.get("name"), tool.get("input_schema")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise RequestError(f"{where}.name: must match ^[a-zA-Z0-9_-]{{1,128}}$", param=f"{where}.name")
        if name in names:
            raise RequestError(f"{where}.name: tool names must be unique ({name!r} is offered twice)",
                               param=f"{where}.name")
        names.add(name)
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise RequestError(f"{where}.input_schema: must be a JSON schema of type 'object'",
                               param=f"{where}.input_schema")
        function: dict[str, Any] = {"name": name, "parameters": schema}
        if isinstance(tool.get("description"), str):
            function["description"] = tool["description"]
        if tool.get("strict") is not None:  # its calls must match the schema (--on-invalid)
            if not isinstance(tool["strict"], bool):
                raise RequestError(f"{where}.strict: must be a boolean", param=f"{where}.strict")
            function["strict"] = tool["strict"]
        out.append({"type": "function", "function": function})
    return out


def _tool_choice(choice: Any, tools: list[dict[str, Any]] | None) -> tuple[Any, Any]:
    """The chat ``tool_choice`` and ``parallel_tool_calls`` (None: not sent)."""
    if choice is None:
        return None, None
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind not in ("auto", "any", "tool", "none"):
        raise RequestError("tool_choice: type must be 'auto', 'any', 'tool' or 'none'", param="tool_choice")
    disable = choice.get("disable_parallel_tool_use")
    if disable is not None and not isinstance(disable, bool):
        raise RequestError("tool_choice.disable_parallel_tool_use: must be a boolean",
                           param="tool_choice.disable_parallel_tool_use")
    parallel = False if disable else None
    if kind in ("any", "tool") and not tools:
        raise RequestError(f"tool_choice: type {kind!r} needs tools", param="tool_choice")
    if kind == "tool":
        name = choice.get("name")
        if not any(t["function"]["name"] == name for t in tools or ()):
            raise RequestError(f"tool_choice.name: {name!r:.80} is not among the tools", param="tool_choice.name")
        return {"type": "function", "function": {"name": name}}, parallel
    return {"any": "required"}.get(kind, kind), parallel


# ---------------------------------------------------------------- messages


def _system(messages: Any) -> None:
    """Raise the fault of the first ``system`` message in ``messages`` whose content is not
    text, if any."""
    for i, message in enumerate(messages if isinstance(messages, list) else ()):
        if isinstance(message, dict) and message.get("role") == "system":
            _system_text(message.get("content"), f"messages.{i}.content")


def _system_text(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise RequestError(f"{where}: must be a string or an array of text blocks", param=where)
    texts = []
    for j, block in enumerate(value):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise RequestError(f"{where}.{j}: must be a text block", param=f"{where}.{j}")
        texts.append(_text(block, f"{where}.{j}"))
    return "\n\n".join(texts)


def _messages(messages: Any, pending: dict[str, str] | None = None,
              system: list[str] | None = None) -> tuple[list[dict[str, Any]], bool]:
    """The messages as chat messages, the texts of their ``system`` ones added to ``system``
    (for the leading system message: chat templates take a system message only first);
    ``pending``: the unanswered ``tool_use`` ids of the assistant message before them (a kept
    thread's). A message's path is spelled only for its fault. With whether no two tool
    messages come in a row (``Turn.ordered``): only a user message's results make tool
    messages, and each user message answers the assistant message just before it."""
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages: must be a non-empty array", param="messages")
    out: list[dict[str, Any]] = []
    pending = pending if pending is not None else {}  # tool_use ids of the last assistant message unanswered
    system = system if system is not None else []
    last, ordered = len(messages) - 1, True
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if role == "user" or role == "assistant" else None
        if type(content) is str and content and not pending:  # one text: what the rest would make of it
            out.append({"role": role, "content": content})
            continue
        if role == "system":
            system.append(_system_text(message.get("content"), f"messages.{i}.content"))
            continue
        if role != "user" and role != "assistant":
            raise RequestError(f"messages.{i}.role: must be 'user' or 'assistant'", param=f"messages.{i}.role")
        if (content == "" or content == []) and (role == "user" or i < last):
            raise RequestError(f"messages.{i}.content: must not be empty (only a final assistant message may "
                               "be)", param=f"messages.{i}.content")
        if pending and role == "assistant":
            _unanswered(pending, f"messages.{i}")
        if isinstance(content, str):  # one text block: the chat message its blocks would make
            out.append({"role": role, "content": content})
        elif role == "assistant":
            out.append(_assistant(_blocks(content, f"messages.{i}.content"), f"messages.{i}.content", pending))
        else:
            made = _user(_blocks(content, f"messages.{i}.content"), f"messages.{i}.content", pending)
            ordered = ordered and (len(made) < 2 or made[1]["role"] != "tool")
            out += made
        if pending and role == "user":
            _unanswered(pending, f"messages.{i}")
    return out, ordered


def _unanswered(pending: dict[str, str], where: str) -> None:
    if pending:
        ids = ", ".join(pending.values())
        raise RequestError(f"{where}: tool_use ids were found without tool_result blocks immediately "
                           f"after: {ids}", param=where)


def _blocks(content: Any, where: str) -> list[tuple[str, dict[str, Any]]]:
    """(where, block) pairs; a string is one text block (none when empty: a final assistant
    message's, which may be)."""
    if isinstance(content, str):
        return [(where, {"type": "text", "text": content})] if content else []
    if not isinstance(content, list):
        raise RequestError(f"{where}: must be a string or an array of content blocks", param=where)
    out = []
    for j, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise RequestError(f"{where}.{j}: must be a content block with a type", param=f"{where}.{j}")
        out.append((f"{where}.{j}", block))
    return out


def _assistant(blocks: list[tuple[str, dict[str, Any]]], where: str, pending: dict[str, str]) -> dict[str, Any]:
    texts, thoughts, calls = [], [], []
    for at, block in blocks:
        kind = block["type"]
        if kind == "text":
            texts.append(_text(block, at))
        elif kind == "thinking":
            thoughts.append(_text(block, at, "thinking"))
        elif kind == "redacted_thinking":
            _drop("redacted_thinking", "encrypted by Anthropic: no other model can read it")
        elif kind == "tool_use":
            calls.append(_call(block, at))
            pending[calls[-1]["id"]] = block["id"]
        else:
            raise _unsupported(kind, at)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts or not calls else None}
    if calls:
        message["tool_calls"] = calls
    if thoughts:
        message["reasoning_content"] = "".join(thoughts)
    return message


def _call(block: dict[str, Any], where: str) -> dict[str, Any]:
    call_id, name, arguments = block.get("id"), block.get("name"), block.get("input")
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(f"{where}.id: a tool_use id is required", param=f"{where}.id")
    if not isinstance(name, str) or not name:
        raise RequestError(f"{where}.name: a tool name is required", param=f"{where}.name")
    if not isinstance(arguments, dict):
        raise RequestError(f"{where}.input: must be an object", param=f"{where}.input")
    return {"id": upstream_id(call_id), "type": "function",
            "function": {"name": name, "arguments": orjson.dumps(arguments).decode()}}


def _user(blocks: list[tuple[str, dict[str, Any]]], where: str, pending: dict[str, str]) -> list[dict[str, Any]]:
    """The tool messages of a user message's results, then one user message with the rest."""
    results: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for at, block in blocks:
        kind = block["type"]
        if kind == "tool_result":
            results.append(_result(block, at, pending, parts))
        elif kind in ("text", "image", "document"):
            parts.append(_part(block, at))
        else:
            raise _unsupported(kind, at)
    if parts:
        results.append({"role": "user", "content": _content(parts)})
    return results


def _result(block: dict[str, Any], where: str, pending: dict[str, str],
            images: list[dict[str, Any]]) -> dict[str, Any]:
    """A ``tool`` message; images in the result go to the user message after the results (a
    chat tool message holds text only)."""
    given = block.get("tool_use_id")
    call_id = upstream_id(given) if isinstance(given, str) else None
    if call_id is None or call_id not in pending:
        raise RequestError(f"{where}.tool_use_id: {given!r:.80} answers no tool_use of the assistant "
                           "message just before (or answers one twice)", param=f"{where}.tool_use_id")
    del pending[call_id]
    content = block.get("content")
    texts: list[str] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for j, part in enumerate(_blocks(content, f"{where}.content")):
            converted = _part(part[1], part[0])
            if converted["type"] == "text":
                texts.append(converted["text"])
            else:
                images.append(converted)
    elif content is not None:
        raise RequestError(f"{where}.content: must be a string or an array of blocks", param=f"{where}.content")
    is_error = block.get("is_error")
    if is_error is not None and not isinstance(is_error, bool):
        raise RequestError(f"{where}.is_error: must be a boolean", param=f"{where}.is_error")
    text = "\n".join(texts)
    return {"role": "tool", "tool_call_id": call_id, "content": f"Error: {text}" if is_error else text}


def _part(block: dict[str, Any], where: str) -> dict[str, Any]:
    """A text, image or plain-text document block as a chat content part."""
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": _text(block, where)}
    source = block.get("source")
    source_kind = source.get("type") if isinstance(source, dict) else None
    if kind == "document":
        if isinstance(block.get("citations"), dict) and block["citations"].get("enabled"):
            raise RequestError(f"{where}.citations: citations are not supported", param=f"{where}.citations")
        if source_kind == "text" and isinstance(source.get("data"), str):  # type: ignore[union-attr]
            return {"type": "text", "text": source["data"]}  # type: ignore[index]
        raise RequestError(f"{where}.source: only plain-text documents are supported", param=f"{where}.source")
    if kind != "image":
        raise _unsupported(str(kind), where)
    if source_kind == "base64" and isinstance(source.get("data"), str):  # type: ignore[union-attr]
        url = f"data:{source.get('media_type', 'image/png')};base64,{source['data']}"  # type: ignore[union-attr,index]
    elif source_kind == "url" and isinstance(source.get("url"), str):  # type: ignore[union-attr]
        url = source["url"]  # type: ignore[index]
    else:
        raise RequestError(f"{where}.source: an image must be base64 data or a URL (no Files API here)",
                           param=f"{where}.source")
    return {"type": "image_url", "image_url": {"url": url}}


def _content(parts: list[dict[str, Any]]) -> Any:
    """Text parts joined into a string (what every upstream takes); a list when images are in."""
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _text(block: dict[str, Any], where: str, key: str = "text") -> str:
    text = block.get(key)
    if not isinstance(text, str):
        raise RequestError(f"{where}.{key}: must be a string", param=f"{where}.{key}")
    if not text and key == "text":  # as the API has it (thinking may be empty)
        raise RequestError(f"{where}.text: text content blocks must be non-empty", param=f"{where}.text")
    return text


def _unsupported(kind: str, where: str) -> RequestError:
    return RequestError(f"{where}.type: {kind!r} blocks are not supported here (server tools, "
                        "search results and container uploads belong to Anthropic's servers)",
                        param=f"{where}.type")

