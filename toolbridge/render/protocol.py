"""The prompt-injected tool protocol: tools, calls and results written as ordinary turns.

For a chat template (or an upstream) without tool support, ``inject`` rewrites an OpenAI
conversation into one that uses only system, user and assistant turns:

- the declarations and the calling convention become a system turn (merged into an existing
  system message; folded into the first user turn when the template has no system role);
- an assistant turn's ``tool_calls`` are replayed inside its text in the fallback dialect's own
  wire format (``Dialect.render``), so the model sees its earlier calls as it is asked to write
  them, and what it writes is exactly what that dialect's parser reads back;
- the ``role: "tool"`` results of one step become one user turn, each result in its own
  ``<tool_response id=... name=...>`` wrapper, in the order given.

Invariant: a tool result cannot close its wrapper or forge a call, in the fallback dialect or in
any other (``auto`` reads them all), even when the model copies it into its answer verbatim,
whole or from any point on: each result goes through the conversation's ``ResultGuard``
(``render/guard.py``, the guard the completions mode uses too), which writes one character of
every marker and of every bare opener that begins a call as a character reference (``<`` as
``&lt;``, ``{`` as ``&#123;``), so that the result still reads as it did.

``tool_choice``: ``none`` drops the declarations (history is still replayed); ``required`` and a
named function add one line to them (the gateway enforces them on the answer).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..dialects import fallback_dialect
from ..errors import RenderError
from ..syntax.dialect import Dialect
from .guard import ResultGuard, every_dialect

RESPONSE_TAG = "tool_response"


def inject(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None,
    *,
    dialect: str | Dialect = "hermes",
    tool_choice: Any = None,
    parallel: bool = True,
    system_role: bool = True,
) -> list[dict[str, Any]]:
    """Rewrite a conversation with the tool protocol written into its turns.

    Args:
        messages: OpenAI-shaped messages (assistant ``tool_calls``, ``role: "tool"`` results).
        tools: the OpenAI tools list, or None.
        dialect: the wire format calls are written in (a dialect with a renderer).
        tool_choice: OpenAI ``tool_choice``: None/"auto", "none", "required", or a function.
        parallel: False adds a line asking for at most one call per answer.
        system_role: the template renders system turns; False puts the declarations (and any
            system message) at the start of the first user turn.

    Returns:
        New messages with no ``tool_calls``, no ``tool`` role and no need for ``tools``.

    Raises:
        RenderError: malformed calls or results; ConfigError: a dialect that cannot write calls.
    """
    d = fallback_dialect(dialect)
    guard = result_guard(d, tools)
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    i = 0
    while i < len(messages):
        message = messages[i]
        if not isinstance(message, Mapping):
            raise RenderError(f"message {i} is not an object")
        if message.get("role") == "tool":
            j = i
            while j < len(messages) and messages[j].get("role") == "tool":
                j += 1
            results = [_result(m, k, names, guard) for k, m in enumerate(messages[i:j], i)]
            out.append({"role": "user", "content": "\n".join(results)})
            i = j
            continue
        if message.get("role") == "assistant" and message.get("tool_calls"):
            out.append(_replay(message, i, d, names))
        else:
            out.append(dict(message))
        i += 1
    text = preamble(tools, d, tool_choice, parallel=parallel)
    return _place(out, text, system_role) if text else out


def preamble(tools: Sequence[Mapping[str, Any]] | None, dialect: str | Dialect,
             tool_choice: Any = None, *, parallel: bool = True) -> str:
    """The declarations and calling convention ("" when there are no tools or the choice is
    ``none``)."""
    if not tools or tool_choice == "none":
        return ""
    d = fallback_dialect(dialect)
    name, arguments = example_call(tools)
    lines = [
        "# Tool use", "",
        "You can call the functions declared below, each given as a JSON schema.", "",
        "<tools>", *(json.dumps(t, ensure_ascii=False) for t in tools), "</tools>", "",
        "To call a function, write the call in this format, exactly as in this example:",
        d.render([(name, arguments)]), "",  # type: ignore[misc]
        ("Write one such call after another for several calls. The result of each call comes back "
         f"in the next user turn inside <{RESPONSE_TAG} id=\"...\" name=\"...\"> ... "
         f"</{RESPONSE_TAG}>. Call only the functions declared above, with arguments that match "
         "their schemas. When no call is needed, answer in plain text."),
    ]
    if not parallel:
        lines.append("Call at most one function per answer.")
    required = _required_line(tool_choice)
    if required:
        lines.append(required)
    return "\n".join(lines)


def _required_line(tool_choice: Any) -> str:
    if tool_choice == "required":
        return "In this answer you must call at least one of the functions."
    if isinstance(tool_choice, Mapping) and isinstance(tool_choice.get("function"), Mapping):
        return f"In this answer you must call the function {tool_choice['function'].get('name')}."
    return ""


def example_call(tools: Sequence[Mapping[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The call the preamble shows: the first tool, with a typed sample of its parameters."""
    function = _function(tools[0], 0)
    schema = function.get("parameters") or {}
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return function["name"], {}
    required = schema.get("required")  # a client's schema: any shape (the Python API checks none)
    keys = [k for k in required if isinstance(k, str) and k in props] if isinstance(required, list) else []
    keys = keys or list(props)
    return function["name"], {k: _sample(props[k]) for k in keys[:3]}


def _sample(schema: Any) -> Any:
    if not isinstance(schema, Mapping):
        return "value"
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    samples = {"integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {},
               "null": None}
    return samples.get(kind, "value") if isinstance(kind, str) else "value"


def _function(tool: Any, i: int) -> Mapping[str, Any]:
    function = tool.get("function", tool) if isinstance(tool, Mapping) else None
    if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
        raise RenderError(f"tools[{i}] has no function name")
    return function


def _replay(message: Mapping[str, Any], i: int, d: Dialect,
            names: dict[str, str]) -> dict[str, Any]:
    calls = []
    for call in message["tool_calls"]:
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise RenderError(f"message {i}: a tool call has no function name")
        arguments = function.get("arguments") or "{}"
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError as exc:
                raise RenderError(f"message {i}: arguments of {function['name']} are not JSON: "
                                  f"{exc}") from None
        if not isinstance(arguments, dict):
            raise RenderError(f"message {i}: arguments of {function['name']} are not an object")
        calls.append((function["name"], arguments))
        if isinstance(call.get("id"), str):
            names[call["id"]] = function["name"]
    written = d.render(calls)  # type: ignore[misc]
    text = _text(message.get("content"), i)
    replayed = {k: v for k, v in message.items() if k != "tool_calls"}
    if not text:
        replayed["content"] = written
    elif written.startswith(d.call_start):
        replayed["content"] = f"{text}\n\n{written}"
    else:  # bare calls (JSON, Python) are read only where an answer starts: calls come first
        replayed["content"] = f"{written}\n\n{text}"
    return replayed


def result_guard(d: Dialect, tools: Sequence[Mapping[str, Any]] | None = None) -> ResultGuard:
    """The guard of one conversation's results: every registered dialect reads them (``auto``
    may), ``d`` is the fallback dialect, the wrapper's tag cannot be closed or opened, and a
    bare call counts when it names one of ``tools`` (any name without tools: a caller of the
    library may parse the answer without them)."""
    names = [_function(t, i)["name"] for i, t in enumerate(tools)] if tools else None
    return ResultGuard(every_dialect(), d, ("<" + RESPONSE_TAG, "</" + RESPONSE_TAG), names)


def _result(message: Mapping[str, Any], i: int, names: dict[str, str],
            guard: ResultGuard) -> str:
    call_id = message.get("tool_call_id")
    name = message.get("name") or names.get(call_id or "", "")
    attrs = f' id="{_attr(call_id)}"' if isinstance(call_id, str) else ""
    attrs += f' name="{_attr(name)}"' if isinstance(name, str) and name else ""
    body = guard(_text(message.get("content"), i))
    return f"<{RESPONSE_TAG}{attrs}>\n{body}\n</{RESPONSE_TAG}>"


def _text(content: Any, i: int) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, Mapping) or part.get("type") != "text":
                kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
                raise RenderError(f"message {i}: a {kind!r} content part cannot be written "
                                  "into the prompt as text")
            parts.append(str(part.get("text", "")))
        return "\n".join(parts)
    raise RenderError(f"message {i}: content must be a string or a list of text parts")


def _attr(value: str) -> str:
    return (value.replace("&", "&amp;").replace('"', "&quot;")
            .replace("<", "&lt;").replace(">", "&gt;"))


def _place(messages: list[dict[str, Any]], text: str, system_role: bool) -> list[dict[str, Any]]:
    """Put the preamble in the system turn, or at the start of the first user turn."""
    if system_role:
        if messages and messages[0].get("role") == "system":
            first = dict(messages[0])
            first["content"] = _join(first.get("content"), text, after=True)
            return [first, *messages[1:]]
        return [{"role": "system", "content": text}, *messages]
    n = next((k for k, m in enumerate(messages) if m.get("role") != "system"), len(messages))
    lead, rest = messages[:n], messages[n:]
    head = "\n\n".join([*(_text(m.get("content"), 0) for m in lead), text])
    for k, message in enumerate(rest):
        if message.get("role") == "user":
            merged = dict(message)
            merged["content"] = _join(message.get("content"), head, after=False)
            return [*rest[:k], merged, *rest[k + 1:]]
    return [{"role": "user", "content": head}, *rest]


def _join(content: Any, text: str, *, after: bool) -> Any:
    """Add ``text`` after (system) or before (user) a message's content, keeping its shape (a
    list of parts is read with its parts joined by newlines: one more makes the blank line)."""
    if isinstance(content, list):
        if not content:
            return [{"type": "text", "text": text}]
        part = {"type": "text", "text": f"\n{text}" if after else f"{text}\n"}
        return [*content, part] if after else [part, *content]
    content = content or ""
    if not content:
        return text
    return f"{content}\n\n{text}" if after else f"{text}\n\n{content}"
