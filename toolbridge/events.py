"""What a StreamParser produces: small immutable records, one per thing that happened.

A consumer assembles them (see ``toolbridge.openai``) into an OpenAI message or a sequence of
chunk deltas. The call lifecycle is ``ToolCallBegin`` -> ``ArgumentsDelta``* -> ``ToolCallEnd``,
or ``ToolCallBegin`` -> ``ArgumentsDelta``* -> ``CallAborted`` when the block turned out not to
hold a finished call (cut off by the end of output, or malformed after its name was sent).
The ``ArgumentsDelta`` texts of one call always join into a prefix of ``ToolCallEnd.arguments``
(the whole of it, once the call ends).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Text:
    """Visible content."""

    text: str


@dataclass(frozen=True, slots=True)
class Reasoning:
    """Reasoning ("thinking") text, split out of the visible content."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallBegin:
    """A call starts: its name is complete and resolved to an offered tool."""

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ArgumentsDelta:
    """A fragment of the call's arguments, as JSON text."""

    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """A call is complete; ``arguments`` is the JSON object text the fragments joined into."""

    index: int
    arguments: str


@dataclass(frozen=True, slots=True)
class CallAborted:
    """A begun call did not finish (``reason``: "truncated" or what was malformed).

    The raw text of the block follows as a ``Text`` event, so nothing is lost.
    """

    index: int
    reason: str


@dataclass(frozen=True, slots=True)
class CallRejected:
    """A block that looked like a call was not turned into one; ``text`` stays content."""

    reason: str
    text: str


@dataclass(frozen=True, slots=True)
class Repaired:
    """The parser tolerated a deviation from the dialect (``what`` says which)."""

    index: int | None
    what: str


@dataclass(frozen=True, slots=True)
class Invalid:
    """A call's arguments do not satisfy the tool's JSON schema."""

    index: int
    errors: tuple[str, ...]


Event = (
    Text
    | Reasoning
    | ToolCallBegin
    | ArgumentsDelta
    | ToolCallEnd
    | CallAborted
    | CallRejected
    | Repaired
    | Invalid
)
