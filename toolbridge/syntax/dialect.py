"""Dialects as declarations: markers, a body kind, aliases, reasoning convention, a sample.

A dialect says which markers open a call block and which body kind reads what follows. Body kinds
(``toolbridge/syntax/bodies/``) are small sans-I/O readers shared by every dialect whose calls have
that shape: a JSON envelope (hermes), XML function/parameter elements (qwen3_coder), key/value
tag pairs (glm). A body reads from a buffer and reports calls through a ``CallSink`` that the
StreamParser provides; it returns how far it consumed and whether the block is finished.

Importing ``toolbridge.dialects`` registers every built-in dialect; it also looks names up.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from ..errors import DialectError
from .markers import opening
from .shape import Shape

UNCLOSED_AT_END = "call not closed at end of output"
"""What a body reports when it completes a call whose close marker never came."""

THINK = ("<think>", "</think>")
"""The plain-text reasoning block most families write (the default ``Dialect.reasoning``), which
``auto`` splits out before it knows the dialect."""

EMPTY_SECTION = "empty tool-call section dropped"
"""What a body reports when a section of calls holds none (only white space between its open
and close markers): the block is no call and leaves no markup in content; the parser records it
in the report (``repaired``, with no call index) and the body ends the block (DONE)."""

TRUNCATED = "truncated"
"""The reason (or its first word) of a call cut off by the end of output."""


class Outcome(enum.Enum):
    """What a body's ``feed`` concluded."""

    MORE = "more"  # everything usable was consumed; the rest may still grow into a marker
    DONE = "done"  # the block is finished; content resumes at the returned position
    FAIL = "fail"  # the block is not (or no longer) a call; ``body.reason`` says why


# The outcomes as module constants, for the bodies' hot paths: in Python 3.11 an Enum member's
# lookup on its class (``Outcome.MORE``) costs several times a global's.
MORE, DONE, FAIL = Outcome.MORE, Outcome.DONE, Outcome.FAIL


class CallSink(Protocol):
    """What a body reports calls to (implemented by the StreamParser)."""

    # Syntax repair is on (``repair=True``): JSON is read leniently (``JsonScanner(lenient=...)``).
    lenient: bool

    def begin(self, written_name: str, native_id: str | None = None) -> str | None:
        """Start a call; return None, or why the name cannot be a call (the block is rejected).
        ``native_id``: the id the model wrote (Kimi's ``functions.NAME:IDX``), kept as the call's
        id unless it repeats one already given."""

    def args(self, text: str, value: Any = None, string: bool = False) -> None:
        """Emit a fragment of the current call's JSON arguments (``value``: the decoded
        arguments, when ``text`` is all of them at once and the body decoded them; ``string``:
        ``text`` only continues a string value, characters encoded by the JSON encoder, so it
        holds no closing quote and ends in no cut escape: nothing in it needs reading)."""

    def end(self) -> None:
        """Finish the current call."""

    def repaired(self, what: str) -> None:
        """Record a tolerated deviation."""

    def param_schema(self, key: str) -> dict[str, Any] | None:
        """The current call's parameter schema (None when unknown or no tools were given)."""

    def coerce(self, key: str, raw: str) -> Any:
        """Type a raw-text value of the current call by its schema."""

    def text(self, text: str) -> None:
        """Emit visible content from inside a block (block-structured formats: Harmony's final
        channel, Cohere's response); such a body should also call ``keep`` so that a later
        failure does not repeat the text."""

    def reasoning(self, text: str) -> None:
        """Emit reasoning from inside a block (Harmony's analysis channel ...)."""

    def keep(self, pos: int) -> None:
        """The block's text up to ``pos`` (a position in the buffer being fed) is settled: a
        later failure of the block turns only what follows into content."""


# The longest call block of a tagged body (``Body.hold_until``) held back whole while it is
# being written: twice a JSON block's (the tags take about twice an envelope's characters).
HOLD_TAGGED_BLOCK = 256


def still_held(text: str, closes: tuple[str, ...], limit: int = HOLD_TAGGED_BLOCK) -> bool:
    """Whether a held block, ``text`` from where it is held, is still short (``limit``
    characters at most) and unclosed (none of ``closes`` in it): then it is kept unread
    (``Body.hold_until``; a JSON envelope holds its own, up to ``HOLD_BLOCK``)."""
    if len(text) > limit:
        return False
    for close in closes:
        if close in text:
            return False
    return True


class Body(Protocol):
    """A call block reader.

    ``hold_until`` (optional; none by default): the markers that close the block when a short
    block is to be held, unread, until one of them comes (or it grows past
    ``HOLD_TAGGED_BLOCK`` characters), then read at once: a short call reaches the client a few
    tokens later, whole, and reading it tag by tag as each delta comes costs several times
    more. The parser does the holding."""

    reason: str

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]: ...

    def fast(self, text: str) -> str | None:
        """The arguments fragment for ``text`` when the body is streaming a value and ``text``
        only continues it (no marker, nothing to hold back); None to take the general path."""


BodyFactory = Callable[[CallSink, str], Body]
Calls = list[tuple[str, dict[str, Any]]]
Renderer = Callable[[Calls], str]


# ``json.dumps(value, ensure_ascii=False)``: json.dumps makes an encoder at every call given an
# option (some 2.5 us, twenty times a short string's encoding); this one is made once.
to_json = json.JSONEncoder(ensure_ascii=False).encode


def raw_value(value: Any) -> str:
    """A value as XML-style dialects write it: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else to_json(value)


@dataclass(frozen=True)
class Dialect:
    """One model family's tool-call format."""

    name: str
    call_start: tuple[str, ...]
    body: BodyFactory
    aliases: tuple[str, ...] = ()
    reasoning: tuple[str, str] | None = THINK
    # Another spelling of the reasoning block the family also writes, read the same way (an opener
    # of either opens it, a closer of either closes it): Magistral 2506's plain-text <think> tags
    # beside the [THINK] tokens of later Mistral models.
    reasoning_also: tuple[str, str] | None = None
    # A call marker inside reasoning ends it and starts a call (Qwen3, GLM); False where
    # reasoning is always closed explicitly and may quote calls (Mistral's [THINK]...[/THINK]).
    calls_in_reasoning: bool = True
    # The chat template's generation prompt opens the reasoning (Apriel's "Here are my reasoning
    # steps:"): with reasoning split, the output starts inside it unless the caller says otherwise.
    starts_in_reasoning: bool = False
    # End tokens that open the answer: met inside reasoning (split out), they also end it (Kimi
    # K3's response channel, which a model may open without closing the think channel the
    # prompt opened). They are dropped like the other end tokens.
    answer_opens: tuple[str, ...] = ()
    # Special tokens of the reasoning convention that are not text when they stand alone in the
    # answer (Gemma 4's stray <channel|>); with reasoning split out they are dropped (reported).
    stray_tokens: tuple[str, ...] = ()
    # Openers recognised only where the answer starts (after whitespace, and after reasoning);
    # they are not consumed: the body reads them (a bare JSON call object starts with "{").
    bare_start: tuple[str, ...] = ()
    # The markers are special tokens of the model's tokenizer: a server that detokenises with
    # skip_special_tokens=true erases them, so a gateway must ask it to keep them.
    special_markers: bool = False
    # Other special tokens the family emits (end of turn, role headers) that must not reach
    # content once special tokens are kept.
    end_tokens: tuple[str, ...] = ()
    # Writes an assistant turn's calls in this dialect (round trips, the injected protocol).
    render: Renderer | None = field(default=None, repr=False)
    sample: str = field(default="", repr=False)
    # How its calls are written, for constrained decoding (None: it cannot be constrained).
    shape: Shape | None = field(default=None, repr=False)
    # Call markers whose block the body reads only when it begins, after white space, with one
    # of these texts: any other first character is refused at once (``auto`` then passes the
    # dialect over for that block without reading it: ``refuses_block``).
    block_opens: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False, compare=False,
                                                       repr=False)

    def __post_init__(self) -> None:
        if not self.call_start:
            raise DialectError(f"dialect {self.name!r} declares no call-start marker")

    def refuses_block(self, marker: str, text: str, start: int) -> bool:
        """Whether the block that call ``marker`` opens, its text so far ``text[start:]``, is one
        the body refuses at its first character (``block_opens``); False while that cannot be
        told yet (nothing but white space so far, or the beginning of an opening)."""
        pattern = self.opening_of(marker)
        return pattern is not None and pattern.match(text, start) is None

    def opening_of(self, marker: str) -> re.Pattern[str] | None:
        """What matches where a block ``marker`` opens may be this dialect's (``block_opens``:
        ``markers.opening``), None when the dialect reads any block the marker opens. Only its
        own call markers count: a dialect made from another (``dataclasses.replace``) with other
        markers keeps the other's declarations, which then say nothing."""
        opens = self.block_opens.get(marker)
        return None if opens is None or marker not in self.call_start else opening(opens)

    @property
    def own_end_tokens(self) -> tuple[str, ...]:
        """The end tokens a parser of this dialect drops from content and reasoning: those that
        are not also one of its markers (a terminator its body reads)."""
        markers = {*self.call_start, *(self.reasoning or ()), *(self.reasoning_also or ()), *self.stray_tokens}
        return tuple(t for t in self.end_tokens if t not in markers)


_REGISTRY: dict[str, Dialect] = {}


def register(dialect: Dialect) -> Dialect:
    """Add a dialect under its name and aliases."""
    for key in (dialect.name, *dialect.aliases):
        if key in _REGISTRY and _REGISTRY[key] is not dialect:
            raise DialectError(f"dialect name {key!r} is registered twice")
        _REGISTRY[key] = dialect
    return dialect


def registered() -> Mapping[str, Dialect]:
    """Every dialect registered so far, by name and alias (a read-only view). The built-in ones
    are registered by importing ``toolbridge.dialects``, which looks names up."""
    return _VIEW


_VIEW: Mapping[str, Dialect] = MappingProxyType(_REGISTRY)
