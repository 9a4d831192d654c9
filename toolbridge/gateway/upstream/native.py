"""Native ``tool_calls`` from an upstream: kept, with names canonicalised and quirks normalised.

Upstreams that parse calls themselves still get details wrong: names in another spelling than
the offered one, ``arguments`` sent as an object (Ollama), missing or repeated ids, and in
streams a whole call in one chunk, an id on every chunk, or no ``index``. A native call whose
name is not offered, or whose arguments are not a JSON object, is not passed on as a call; it
is returned as text so that nothing is silently lost.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...events import ArgumentsDelta, Event, ToolCallBegin
from ...parsing.stream import random_call_id
from ...tools import Toolset


new_id = random_call_id  # the parsers' own: one generator for every call id the gateway gives


@dataclass
class Checked:
    """Native calls after checking: those kept (OpenAI shape) and the text of those rejected."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    invalid: int = 0  # kept calls whose arguments do not match the tool's schema


def check_calls(calls: list[Any], tools: Toolset | None, seen_ids: set[str]) -> Checked:
    """Canonicalise a message's native tool calls (non-streamed)."""
    out = Checked()
    for call in calls:
        fn = call.get("function") if isinstance(call, dict) else None
        fn = fn if isinstance(fn, dict) else {}
        name = resolve(fn.get("name"), tools)
        read = read_arguments(fn.get("arguments"))
        if name is None or read is None:
            out.rejected.append(json.dumps({"name": fn.get("name"), "arguments": fn.get("arguments")}, ensure_ascii=False))
            continue
        arguments, value = read
        call_id = call.get("id") if isinstance(call.get("id"), str) and call["id"] not in seen_ids else new_id()
        seen_ids.add(call_id)
        out.calls.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
        out.invalid += not valid(name, value, tools)
    return out


def valid(name: str, value: dict[str, Any], tools: Toolset | None) -> bool:
    """Whether a kept call's decoded arguments satisfy its tool's schema (reported, not enforced)."""
    return tools is None or not tools.validate(name, value)


def resolve(name: Any, tools: Toolset | None) -> str | None:
    """The offered name a native call's name stands for (any string when tools are unknown)."""
    if not isinstance(name, str) or not name:
        return None
    return tools.resolve(name).name if tools is not None else name


def read_arguments(arguments: Any) -> tuple[str, dict[str, Any]] | None:
    """A native call's arguments as JSON object text and as that object, or None when they are
    not an object. Decoded once: the object is what the schema check reads."""
    if isinstance(arguments, dict):
        return json.dumps(arguments, ensure_ascii=False), arguments
    if arguments is None or arguments == "":
        return "{}", {}
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except ValueError:
            return None
        return (arguments, value) if isinstance(value, dict) else None
    return None


@dataclass
class _StreamedCall:
    index: int | None  # our output index; None while rejected
    id: str
    name: str
    arguments: list[str] = field(default_factory=list)


class NativeStream:
    """Normalise streamed native tool-call deltas into OpenAI-conformant ones.

    ``feed`` takes one upstream delta's ``tool_calls`` list and returns the events to pass on
    (``ToolCallBegin``, ``ArgumentsDelta``) with our own indices (``allocate`` hands them out,
    shared with calls parsed from text).
    """

    def __init__(self, tools: Toolset | None, allocate: Any, seen_ids: set[str]) -> None:
        self._tools = tools
        self._allocate = allocate
        self._seen_ids = seen_ids
        self._calls: dict[Any, _StreamedCall] = {}
        self._last: Any = None
        self.rejected: list[str] = []
        self.broken: list[int] = []

    def feed(self, parts: list[Any]) -> list[Event]:
        out: list[Event] = []
        for part in parts:
            if isinstance(part, dict):
                self._part(part, out)
        return out

    def _part(self, part: dict[str, Any], out: list[Event]) -> None:
        fn: dict[str, Any] = part["function"] if isinstance(part.get("function"), dict) else {}
        key = self._key(part)
        call = self._calls.get(key)
        if call is None:
            call = self._open(key, part, fn, out)
        fragment = fn.get("arguments")
        if isinstance(fragment, dict):  # a whole object instead of a string fragment
            fragment = json.dumps(fragment, ensure_ascii=False)
        if isinstance(fragment, str) and fragment:
            call.arguments.append(fragment)
            if call.index is not None:
                out.append(ArgumentsDelta(call.index, fragment))

    def _key(self, part: dict[str, Any]) -> Any:
        """Which call a part belongs to: its index, else its id, else the previous call."""
        index, call_id = part.get("index"), part.get("id")
        if isinstance(index, int):
            known = self._calls.get(index)
            if known is not None and isinstance(call_id, str) and call_id != known.id and (part.get("function") or {}).get("name"):
                index = ("again", index, call_id)  # a second call reusing an index
            self._last = index
        elif isinstance(call_id, str) and ("id", call_id) not in self._calls and (part.get("function") or {}).get("name"):
            self._last = ("id", call_id)
        return self._last

    def _open(self, key: Any, part: dict[str, Any], fn: dict[str, Any], out: list[Event]) -> _StreamedCall:
        name = resolve(fn.get("name"), self._tools)
        call_id: str = part["id"] if isinstance(part.get("id"), str) and part["id"] not in self._seen_ids else new_id()
        self._seen_ids.add(call_id)
        index = self._allocate() if name is not None else None
        call = self._calls[key] = _StreamedCall(index, call_id, name or str(fn.get("name")))
        if index is not None:
            out.append(ToolCallBegin(index, call_id, name))
        return call

    def finish(self) -> tuple[list[int], list[str], int]:
        """Indices of calls whose arguments joined into a JSON object, texts of rejected calls,
        and how many kept calls do not match their schema; ``broken``: the indices of calls
        begun (their opening given) that are among the rejected."""
        good: list[int] = []
        invalid = 0
        for call in self._calls.values():
            read = read_arguments("".join(call.arguments))
            if call.index is not None and read is not None:
                good.append(call.index)
                invalid += not valid(call.name, read[1], self._tools)
            else:
                if call.index is not None:
                    self.broken.append(call.index)
                self.rejected.append(json.dumps({"name": call.name, "arguments": "".join(call.arguments)},
                                                ensure_ascii=False))
        return good, self.rejected, invalid
