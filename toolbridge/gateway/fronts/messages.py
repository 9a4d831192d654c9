"""The Anthropic Messages front: ``POST /v1/messages`` <-> the pipeline's turn and events.

In: the request body is checked field by field and becomes a ``Turn`` in the Chat Completions
shape (``messages_turn``): ``system`` and mid-conversation ``system`` messages become the one
leading system message; a user message's ``tool_result`` blocks become ``tool`` messages, placed
first (they answer the assistant message just before), its text and images one user message
after them; an assistant message's ``thinking`` blocks become its ``reasoning_content``, its
``tool_use`` blocks its ``tool_calls``. ``tools`` become function tools, ``tool_choice`` its
chat equivalent, ``thinking`` the upstream's reasoning switch. What cannot be honoured is a 400
naming the field; fields that change nothing the upstream can do are dropped, each logged once
per process (README: the Anthropic Messages front). Out: a whole answer is one ``message``
object (``whole``); a stream is ``messages_stream.MessagesStream``. Errors are ``{"type":
"error", "error": {"type", "message"}}``.

Ids: a ``tool_use`` id is ``toolu_`` + 8 random characters + the upstream's call id (``r`` and
the id as it is when it is made of ``[A-Za-z0-9_-]``, else ``b`` and its base64url), so the
ids a client sees are unique across a conversation even where an upstream repeats its own
(``functions.read:0`` each turn), and the upstream is sent back exactly the ids it gave: no
state is kept, the id carries it. An id of another origin is sent upstream as it is.

Thinking signatures cannot be real (they are Anthropic's proof over its own reasoning):
toolbridge signs every thinking block with ``SIGNATURE``, a fixed marker, and accepts any
signature back, sending the thinking text on to the upstream as reasoning.
"""

from __future__ import annotations

import base64
import logging
import os
import random
import re
from typing import Any

import orjson

from ..streaming import AnswerStream
from ..turn import RequestError, Turn
from .messages_stream import MessagesStream, stop_reason, usage_of

log = logging.getLogger("toolbridge.gateway")

SIGNATURE = "dG9vbGJyaWRnZQ"  # base64url of "toolbridge": a marker, not a proof
_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]+")
_RANDOM = random.Random(os.urandom(16))
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_NONCE = 8

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
                          "tools", "tool_choice", "thinking", "output_config", *_SAMPLING})
_warned: set[str] = set()


def messages_turn(body: Any, count: bool = False) -> Turn:
    """A Messages request as a Turn; raises RequestError (400) naming the field. ``count``: a
    count_tokens request (no ``max_tokens``, no ``stream``)."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    for key, why in _REFUSED.items():
        if body.get(key) is not None:
            raise RequestError(f"{key}: not supported: {why}", param=key)
    for key in body.keys() - _TURN_FIELDS:
        _drop(key, _DROPPED.get(key, "toolbridge does not know it"))
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError("model: a model name (string) is required", param="model")
    options: dict[str, Any] = {"model": model}
    if not count:
        options.update(_limits(body))
    options.update(_thinking(body.get("thinking"), body.get("max_tokens")))
    _output_config(body.get("output_config"))
    stream = False if count else body.get("stream", False)
    if not isinstance(stream, bool):
        raise RequestError("stream: must be a boolean", param="stream")
    if stream:
        options["stream"] = True
        options["stream_options"] = {"include_usage": True}
    tools = _tools(body.get("tools"))
    choice, parallel = _tool_choice(body.get("tool_choice"), tools)
    messages = [*_system(body.get("system"), body.get("messages")), *_messages(body.get("messages"))]
    return Turn(messages=messages, tools=tools, tool_choice=choice, parallel=parallel, stream=stream,
                include_usage=stream, model=model, options=options)


def _drop(key: str, why: str) -> None:
    if key not in _warned and len(_warned) < 64:  # keys come from clients: keep the set bounded
        _warned.add(key)
        log.info("messages: %r is dropped (%s); logged once", key, why)


def _limits(body: dict[str, Any]) -> dict[str, Any]:
    """``max_tokens`` (required), ``stop_sequences`` and the sampling fields, for the upstream."""
    out: dict[str, Any] = {}
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
    return out


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


def _tools(tools: Any) -> list[dict[str, Any]] | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise RequestError("tools: must be an array", param="tools")
    out = []
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
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise RequestError(f"{where}.input_schema: must be a JSON schema of type 'object'",
                               param=f"{where}.input_schema")
        function: dict[str, Any] = {"name": name, "parameters": schema}
        if isinstance(tool.get("description"), str):
            function["description"] = tool["description"]
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


def _system(system: Any, messages: Any) -> list[dict[str, Any]]:
    """The one leading system message: ``system`` and any ``system`` messages in ``messages``
    (chat templates take a system message only first)."""
    parts = [_system_text(system, "system")] if system is not None else []
    for i, message in enumerate(messages if isinstance(messages, list) else ()):
        if isinstance(message, dict) and message.get("role") == "system":
            parts.append(_system_text(message.get("content"), f"messages.{i}.content"))
    text = "\n\n".join(p for p in parts if p)
    return [{"role": "system", "content": text}] if text else []


def _system_text(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise RequestError(f"{where}: must be a string or an array of text blocks", param=where)
    texts = []
    for j, block in enumerate(value):
        if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
            raise RequestError(f"{where}.{j}: must be a text block", param=f"{where}.{j}")
        texts.append(block["text"])
    return "\n\n".join(texts)


def _messages(messages: Any) -> list[dict[str, Any]]:
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages: must be a non-empty array", param="messages")
    out: list[dict[str, Any]] = []
    pending: dict[str, str] = {}  # tool_use ids of the last assistant message still unanswered
    for i, message in enumerate(messages):
        where = f"messages.{i}"
        role = message.get("role") if isinstance(message, dict) else None
        if role == "system":
            continue  # in the leading system message
        if role not in ("user", "assistant"):
            raise RequestError(f"{where}.role: must be 'user' or 'assistant'", param=f"{where}.role")
        blocks = _blocks(message.get("content"), f"{where}.content")
        if role == "assistant":
            _unanswered(pending, where)
            out.append(_assistant(blocks, f"{where}.content", pending))
        else:
            out += _user(blocks, f"{where}.content", pending)
            _unanswered(pending, where)
    return out


def _unanswered(pending: dict[str, str], where: str) -> None:
    if pending:
        ids = ", ".join(pending.values())
        raise RequestError(f"{where}: tool_use ids were found without tool_result blocks immediately "
                           f"after: {ids}", param=where)


def _blocks(content: Any, where: str) -> list[tuple[str, dict[str, Any]]]:
    """(where, block) pairs; a string is one text block."""
    if isinstance(content, str):
        return [(where, {"type": "text", "text": content})]
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
    return text


def _unsupported(kind: str, where: str) -> RequestError:
    return RequestError(f"{where}.type: {kind!r} blocks are not supported here (server tools, "
                        "search results and container uploads belong to Anthropic's servers)",
                        param=f"{where}.type")


# ---------------------------------------------------------------- ids


def tool_use_id(call_id: str) -> str:
    """The client's ``toolu_`` id for an upstream call id (see the module docstring)."""
    nonce = "".join(_RANDOM.choices(_ALPHABET, k=_NONCE))
    if _SAFE_ID.fullmatch(call_id):
        return f"toolu_{nonce}r{call_id}"
    encoded = base64.urlsafe_b64encode(call_id.encode()).decode().rstrip("=")
    return f"toolu_{nonce}b{encoded}"


def upstream_id(client_id: str) -> str:
    """The upstream's call id a ``toolu_`` id carries; any other id as it is."""
    head = len("toolu_") + _NONCE
    if not client_id.startswith("toolu_") or len(client_id) <= head + 1:
        return client_id
    kind, payload = client_id[head], client_id[head + 1:]
    if kind == "r" and _SAFE_ID.fullmatch(payload):
        return payload
    if kind == "b":
        try:
            decoded = base64.b64decode(payload + "=" * (-len(payload) % 4), altchars=b"-_", validate=True)
            return decoded.decode() or client_id
        except (ValueError, UnicodeDecodeError):
            return client_id
    return client_id


def message_id() -> str:
    return "msg_" + "".join(_RANDOM.choices(_ALPHABET, k=24))


# ---------------------------------------------------------------- out


def whole_message(answer: dict[str, Any]) -> dict[str, Any]:
    """A repaired ``chat.completion`` object as a Messages ``message``: blocks in the order
    thinking, text, tool_use (one choice: the API has no others)."""
    choices = answer.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    blocks: list[dict[str, Any]] = []
    thinking = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(thinking, str) and thinking:
        blocks.append({"type": "thinking", "thinking": thinking, "signature": SIGNATURE})
    text = _answer_text(message.get("content"))
    if text:
        blocks.append({"type": "text", "text": text})
    for call in message.get("tool_calls") or ():
        function = call["function"]
        blocks.append({"type": "tool_use", "id": tool_use_id(call["id"]), "name": function["name"],
                       "input": orjson.loads(function["arguments"])})
    reason, sequence = stop_reason(choice.get("finish_reason"), choice)
    return {"id": message_id(), "type": "message", "role": "assistant", "model": answer.get("model") or "",
            "content": blocks, "stop_reason": reason, "stop_sequence": sequence,
            "usage": usage_of(answer.get("usage"), None)}


def _answer_text(content: Any) -> str:
    if isinstance(content, list):  # content parts, as a few upstreams answer
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


_KINDS = {k: k for k in ("invalid_request_error", "authentication_error", "permission_error",
                         "not_found_error", "request_too_large", "rate_limit_error", "overloaded_error")}
_BY_STATUS = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
              404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
              503: "overloaded_error", 529: "overloaded_error"}


def error_body(message: str, type: str = "invalid_request_error", param: str | None = None) -> bytes:
    """``{"type": "error", "error": {"type", "message"}}``; ``type`` may be the gateway's own
    (``upstream_error``, ``server_error``), which this API calls ``api_error``."""
    if param and not message.startswith(param):
        message = f"{param}: {message}"
    return orjson.dumps({"type": "error", "error": {"type": _KINDS.get(type, "api_error"), "message": message}})


def upstream_error_body(raw: bytes) -> bytes:
    """An upstream's error body (OpenAI-shaped, vLLM's numeric ``code``, or already this API's)."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return error_body(raw[:2000].decode("utf-8", "replace"), "api_error")
    if isinstance(body, dict) and body.get("type") == "error":
        return raw
    error = body.get("error", body) if isinstance(body, dict) else body
    if not isinstance(error, dict):
        return error_body(str(error)[:2000], "api_error")
    code, kind = error.get("code"), str(error.get("type") or "")
    status = code if type(code) is int else None
    if kind not in _KINDS:
        kind = _BY_STATUS.get(status or 0) or ("rate_limit_error" if "rate" in kind.lower() else "api_error")
    return error_body(str(error.get("message") or error)[:4000], kind)


class MessagesFront:
    """What the pipeline asks of a front, for Anthropic Messages."""

    name = "messages"
    content_type = b"text/event-stream"

    def turn(self, body: Any) -> Turn:
        return messages_turn(body)

    def error(self, message: str, type: str = "invalid_request_error", code: str | None = None,
              param: str | None = None) -> bytes:
        if type == "invalid_request_error" and code and code.isdigit():  # the gateway's 404, 405
            type = _BY_STATUS.get(int(code), type)
        return error_body(message, type, param)

    def upstream_error(self, raw: bytes) -> bytes:
        return upstream_error_body(raw)

    def whole(self, answer: dict[str, Any]) -> bytes:
        return orjson.dumps(whole_message(answer))

    def stream(self, answer: AnswerStream) -> MessagesStream:
        return MessagesStream(answer, message_id(), tool_use_id, SIGNATURE)

    def stream_error(self, message: str, type: str, code: str | None = None) -> bytes:
        return b"event: error\ndata: " + error_body(message, type) + b"\n\n"

    def stream_end(self) -> bytes:
        return b""
