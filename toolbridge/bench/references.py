"""The outputs ``toolbridge bench --speed`` parses, the reference parsers it measures toolbridge
against, and the checks of every result (toolbridge's and the references').

- Outputs: a sentence then one ``write_file`` call whose content is code (a newline every ~35
  characters, so a JSON string holds many ``\\n`` escapes), in hermes or Qwen3-Coder syntax;
  short answers of one or eight small ``get_weather`` calls; prose with no marker.
- References: ``regex_hermes`` reads a whole message as vLLM's hermes parser does;
  ``PlainHermes`` is a plain incremental parser, correct for these well-formed outputs only.
- A check returns why a result is wrong, or None; it compares call names, arguments (as JSON
  values) and content, and for toolbridge's events also that no call was invalid or aborted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import partial
from typing import Any

from ..parsing.parser import ParseResult
from . import parsers
from .parsers import Output

DELTA = 4  # characters per streamed delta, about one token
CALL_START, CALL_END = "<tool_call>", "</tool_call>"
SIZES = {"1k": 1024, "2k": 2048, "8k": 8192, "33k": 33000, "128k": 131072}  # of the long argument

WRITE_SCHEMA = {
    "type": "object", "required": ["path", "content"],
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
}
WEATHER_SCHEMA = {
    "type": "object", "required": ["city"], "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
    },
}
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "write_file", "parameters": WRITE_SCHEMA}},
    {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER_SCHEMA}},
]
CODE = (  # a line every ~35 characters, so the JSON string holds many \n escapes
    "def load(path: str) -> dict[str, int]:\n"
    '    """Read name=count lines."""\n'
    "    counts: dict[str, int] = {}\n"
    "    with open(path) as f:\n"
    "        for line in f:\n"
    '            key, _, n = line.partition("=")\n'
    "            counts[key.strip()] = int(n)\n"
    "    return counts\n\n"
)
PROSE = (
    "The parser keeps a cursor and never reads consumed text twice, so each delta costs about "
    "its own length. Most answers are prose like this one: a few paragraphs, a list, and now and "
    "then some `inline code` or a [link](https://example.com/docs).\n\n"
    "- Whole answers arrive when the client did not ask for a stream.\n"
    "- Short answers are the common case in an agent's loop; 3 < 4 holds, as it should.\n\n"
)
LEAD = "Let me look up the weather in Paris for the next three days.\n\n"
CITIES = ("Paris", "Lyon", "Nice", "Lille", "Brest", "Dijon", "Metz", "Caen")

Calls = list[tuple[str, dict[str, Any]]]


def hermes(lead: str, calls: Calls) -> str:
    """Hermes (Qwen2.5, Qwen3): ``<tool_call>`` JSON ``{"name", "arguments"}`` ``</tool_call>``."""
    blocks = (json.dumps({"name": n, "arguments": a}, ensure_ascii=False) for n, a in calls)
    return lead + "\n".join(f"{CALL_START}\n{body}\n{CALL_END}" for body in blocks)


def qwen3_coder(lead: str, calls: Calls) -> str:
    """Qwen3-Coder: ``<function=NAME>`` holding one ``<parameter=KEY>`` block per argument."""

    def block(name: str, args: dict[str, Any]) -> str:
        params = "".join(
            f"<parameter={k}>\n{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n"
            for k, v in args.items()
        )
        return f"{CALL_START}\n<function={name}>\n{params}</function>\n{CALL_END}"

    return lead + "\n".join(block(n, a) for n, a in calls)


RENDER = {"hermes": hermes, "qwen3_coder": qwen3_coder}


def file_output(dialect: str, size: str) -> Output:
    """A sentence, then one write_file call whose content is ``size`` characters of code."""
    call = ("write_file", {"path": "src/load.py", "content": parsers._cycle(CODE, SIZES[size])})
    lead = "I'll write the file.\n\n"
    return Output(f"{dialect} {size}", RENDER[dialect](lead, [call]), [call], lead, "")


def short_output(dialect: str, calls: int = 1) -> Output:
    """A sentence, then ``calls`` small get_weather calls."""
    made = [("get_weather", {"city": c, "unit": "celsius", "days": 3}) for c in CITIES[:calls]]
    return Output(f"{dialect} short", RENDER[dialect](LEAD, made), made, LEAD, "")


def split_deltas(text: str) -> list[str]:
    return [text[i : i + DELTA] for i in range(0, len(text), DELTA)]


# ---------------------------------------------------------------- references and checks


HERMES_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)


def regex_hermes(text: str) -> tuple[str, list[tuple[str, str]]]:
    """A whole hermes message read as vLLM's hermes parser reads it: a non-greedy pattern over
    the text, ``json.loads`` of each body, the arguments serialised again."""
    if CALL_START not in text:
        return text, []
    bodies = [json.loads(body) for body in HERMES_BLOCK.findall(text)]
    calls = [(b["name"], json.dumps(b["arguments"], ensure_ascii=False)) for b in bodies]
    return text[: text.find(CALL_START)], calls


class PlainHermes:
    """A plain incremental hermes parser, the floor of the short-answer rows: it buffers, finds
    the markers with ``str.find``, ``json.loads`` each body and returns text (``str``) and calls
    (``(name, arguments)``). Correct for well-formed output only."""

    def __init__(self) -> None:
        self.buffer = ""
        self.inside = False

    def feed(self, delta: str) -> list[Any]:
        self.buffer += delta
        out: list[Any] = []
        while True:
            if self.inside:
                end = self.buffer.find(CALL_END)
                if end < 0:
                    return out
                call = json.loads(self.buffer[:end])
                out.append((call["name"], json.dumps(call["arguments"])))
                self.buffer, self.inside = self.buffer[end + len(CALL_END) :], False
                continue
            start = self.buffer.find(CALL_START)
            if start < 0:
                cut = len(self.buffer)
                held = self.buffer.rfind("<")  # text that may begin the marker stays
                if held >= 0 and CALL_START.startswith(self.buffer[held:]):
                    cut = held
                if cut:
                    out.append(self.buffer[:cut])
                self.buffer = self.buffer[cut:]
                return out
            if start:
                out.append(self.buffer[:start])
            self.buffer, self.inside = self.buffer[start + len(CALL_START) :], True

    def close(self) -> list[Any]:
        return [self.buffer] if self.buffer and not self.inside else []


def stream(make: Callable[[], Any], deltas: list[str]) -> list[Any]:
    """One response: a fresh parser, every delta fed, then closed; the events."""
    parser = make()
    events: list[Any] = []
    for delta in deltas:
        events += parser.feed(delta)
    events += parser.close()
    return events


Check = Callable[[Any], "str | None"]  # why a result is wrong, None when it is right


def _pairs_problem(text: str, calls: list[tuple[str, str]], expected: Output) -> str | None:
    got = [(name, json.loads(args)) for name, args in calls]
    if got != expected.calls:
        names = [n for n, _ in expected.calls]
        return f"calls {[(n, sorted(a)) for n, a in got]}, expected {len(names)}: {names}"
    if text.strip() != expected.content.strip():
        return f"content {text[:60]!r}..., expected {expected.content[:60]!r}..."
    return None


def check_message(expected: Output) -> Check:
    """The check of a ``parse()`` result: the message, and the events it was built from."""

    def check(result: ParseResult) -> str | None:
        calls = [(c["function"]["name"], c["function"]["arguments"])
                 for c in result.message.get("tool_calls") or []]
        text = result.message.get("content") or ""
        return _pairs_problem(text, calls, expected) or parsers._check(result.events, expected)

    return check


def check_events(expected: Output) -> Check:
    return partial(parsers._check, output=expected)


def check_plain(expected: Output) -> Check:
    """The check of PlainHermes's items (or of ``regex_hermes``'s pair)."""

    def check(items: list[Any] | tuple[str, list[tuple[str, str]]]) -> str | None:
        if isinstance(items, tuple):
            return _pairs_problem(*items, expected)
        text = "".join(i for i in items if isinstance(i, str))
        return _pairs_problem(text, [i for i in items if isinstance(i, tuple)], expected)

    return check


def check_equal(value: Any) -> Check:
    return lambda got: None if got == value else f"got {got!s:.80}, expected {value!s:.80}"
