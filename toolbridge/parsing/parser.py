"""The parser users make: ``StreamParser`` (one dialect, or ``auto``) and ``parse``.

``StreamParser(dialect, ...)`` is a ``DialectParser`` for a named dialect and an ``AutoParser``
for ``"auto"``. ``parse`` is that parser fed the whole text once and closed (``parse_whole``: prose and calls
written plainly are read at C speed, into the same events), folded into the OpenAI message and
the report. ``parse_message`` is ``parse``'s message alone for a text read at C speed, made
directly (no events, no report: it has nothing to say), for a caller that reads many answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

from ..events import Event
from ..openai import Message, MessageBuilder, assistant_message
from ..syntax.dialect import Dialect
from ..tools import Toolset
from .auto import AutoParser
from .stream import DialectParser, random_call_id


class StreamParser(DialectParser):
    """Parse one response's output incrementally.

    Args:
        dialect: a registry name or alias (``hermes``, ``qwen3_coder``, ``glm45``...) or a Dialect.
        tools: the request's OpenAI ``tools`` list (or a Toolset); None accepts any plausible name
            and types raw values that parse as JSON.
        reasoning: split ``<think>...</think>`` (the dialect's convention) out as Reasoning.
        in_reasoning: the output starts inside reasoning (the prompt ended with the opener).
        validate: check each call's arguments against its tool's schema (Invalid events).
        reject_invalid: with tools, hold each call until it ends and turn a call whose arguments
            fail the schema into content (CallRejected) instead of emitting it.
        call_id: makes the id of call ``index``; random ``call_...`` ids by default.
        drop_tokens: special tokens to remove from content and reasoning (end-of-turn tokens
            that arrive when an upstream was asked to keep special tokens).
        coerce: with tools, type each call's arguments by its tool's schema, losslessly and
            reported (``"2"`` -> ``2`` for an integer ...; ``toolbridge.parsing.argtyper``).
        repair: read JSON arguments leniently, each slip reported: trailing commas, single
            quotes, Python's True/False/None, unquoted keys, brackets left open at a clean end
            (off by default; ``toolbridge.syntax.jsonscan``).

    ``dialect="auto"`` makes an ``toolbridge.parsing.auto.AutoParser`` instead, which recognises the
    dialect from the output (it also takes ``model=`` and ``candidates=``).

    Raises:
        ConfigError: unknown dialect or malformed tools.
    """

    __slots__ = ()

    def __new__(cls, dialect: str | Dialect = "", *args: Any, **kwargs: Any) -> Any:
        if dialect == "auto":
            return AutoParser(*args, **kwargs)
        return super().__new__(cls)


@dataclass(frozen=True, slots=True, init=False)
class ParseResult:
    """The outcome of ``parse``: the OpenAI assistant message, the report, the events."""

    message: dict[str, Any]
    report: Any
    events: list[Event]
    finish_reason: str

    def __init__(self, message: dict[str, Any], report: Any, events: list[Event], finish_reason: str) -> None:
        # (its slots set directly, as the events': a frozen dataclass's own __init__ costs more)
        _set_message(self, message)
        _set_report(self, report)
        _set_events(self, events)
        _set_finish_reason(self, finish_reason)


_set_message = ParseResult.message.__set__  # type: ignore[attr-defined]
_set_report = ParseResult.report.__set__  # type: ignore[attr-defined]
_set_events = ParseResult.events.__set__  # type: ignore[attr-defined]
_set_finish_reason = ParseResult.finish_reason.__set__  # type: ignore[attr-defined]


def parse(
    text: str,
    dialect: str | Dialect,
    tools: list[dict[str, Any]] | Toolset | None = None,
    cut: bool = False,
    **options: Any,
) -> ParseResult:
    """Parse a whole output: exactly ``feed(text)`` then ``close()`` on a new StreamParser.

    Options are those of StreamParser (with ``dialect="auto"``, also ``model`` and
    ``candidates``); the report's ``detected`` names the dialect auto recognised. ``cut``: the
    output stopped at a length limit (see ``StreamParser.close``). Raises ConfigError for an unknown dialect or bad tools.
    """
    # (the parser StreamParser would make, made directly)
    auto = dialect == "auto"
    parser = AutoParser(tools, **options) if auto else DialectParser(dialect, tools, **options)
    return _result(parser, parser.parse_whole(text, cut), auto)


def parse_plain(
    text: str,
    dialect: str | Dialect,
    tools: list[dict[str, Any]] | Toolset | None = None,
    cut: bool = False,
    most: int | None = None,
    **options: Any,
) -> ParseResult | None:
    """``parse``'s result when the whole output is read at C speed (``DialectParser.read_plain``:
    prose, and at most ``most`` calls written plainly, for a caller that must bound the time
    it takes); None otherwise. A named dialect only (None for ``auto``)."""
    if dialect == "auto":
        return None
    parser = DialectParser(dialect, tools, **options)
    events = parser.read_plain(text, cut, most=most)
    return None if events is None else _result(parser, events, False)


def parse_message(
    text: str,
    dialect: str | Dialect,
    tools: Toolset | None = None,
    *,
    drop_tokens: tuple[str, ...] = (),
    coerce: bool = True,
    repair: bool = False,
    most: int | None = None,
    call_id: Callable[[int], str] = random_call_id,
) -> Message | None:
    """``parse(text, dialect, tools, ...).message`` when the whole output is read at C speed
    (``parse_plain``'s texts: prose, and at most ``most`` calls written plainly); None
    otherwise (and for ``auto``, and with ``repair``). Such a result's report says nothing (no
    call rejected, aborted, repaired or invalid) and its finish reason is ``tool_calls`` when
    the message has calls, else ``stop``, whether or not the output was ``cut``. The options
    are StreamParser's (validate and reject_invalid as by default); ``tools``: a Toolset."""
    reader = message_reader(dialect, tools, drop_tokens, coerce, repair)
    read = reader.plain_message(text, most, call_id) if reader is not None else None
    return None if read is None else assistant_message(*read)


# The parsers ``parse_message`` reads with, by their settings (by identity: hashing a Dialect
# costs more than the rest), each kept with the objects of its key (their ids are not reused
# while it lives): one is never fed, so it reads any number of outputs, on any thread.
_READERS: dict[tuple[int, int, int, bool], tuple[Any, Any, Any, DialectParser]] = {}


def message_reader(dialect: str | Dialect, tools: Toolset | None, drop_tokens: tuple[str, ...],
                   coerce: bool, repair: bool) -> DialectParser | None:
    """The parser of these settings ``parse_message`` reads with, its ``plain_message`` what
    ``parse_message`` gives (None for ``auto``, and with ``repair``)."""
    if repair:
        return None
    key = (id(dialect), id(tools), id(drop_tokens), coerce)
    found = _READERS.get(key)
    if found is not None and found[0] is dialect and found[1] is tools and found[2] is drop_tokens:
        return found[3]
    if dialect == "auto":
        return None
    reader = DialectParser(dialect, tools, drop_tokens=drop_tokens, coerce=coerce)
    if len(_READERS) >= 256:
        _READERS.clear()
    _READERS[key] = (dialect, tools, drop_tokens, reader)
    return reader


def _result(parser: Any, events: list[Event], auto: bool) -> ParseResult:
    """A whole output's events folded into the message and the report."""
    builder = MessageBuilder(parser.dialect.name if parser.dialect else "auto")
    builder.add(events)
    if auto:
        builder.report.detected = parser.detected
    return ParseResult(builder.message, builder.report, events, builder.finish_reason)
