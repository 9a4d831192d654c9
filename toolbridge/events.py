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

# The events made once per delta or per call get an __init__ that sets their slots directly:
# the one a frozen dataclass generates costs about twice as much, which shows at a few us per
# delta.


@dataclass(frozen=True, slots=True, init=False)
class Text:
    """Visible content."""

    text: str

    def __init__(self, text: str) -> None:
        _set_text_text(self, text)


@dataclass(frozen=True, slots=True, init=False)
class Reasoning:
    """Reasoning ("thinking") text, split out of the visible content."""

    text: str

    def __init__(self, text: str) -> None:
        _set_reasoning_text(self, text)


@dataclass(frozen=True, slots=True, init=False)
class ToolCallBegin:
    """A call starts: its name is complete and resolved to an offered tool."""

    index: int
    id: str
    name: str

    def __init__(self, index: int, id: str, name: str) -> None:
        _set_begin_index(self, index)
        _set_begin_id(self, id)
        _set_begin_name(self, name)


@dataclass(frozen=True, slots=True, init=False)
class ArgumentsDelta:
    """A fragment of the call's arguments, as JSON text."""

    index: int
    text: str

    def __init__(self, index: int, text: str) -> None:
        _set_delta_index(self, index)
        _set_delta_text(self, text)


@dataclass(frozen=True, slots=True, init=False)
class ToolCallEnd:
    """A call is complete; ``arguments`` is the JSON object text the fragments joined into."""

    index: int
    arguments: str

    def __init__(self, index: int, arguments: str) -> None:
        _set_end_index(self, index)
        _set_end_arguments(self, arguments)


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
    """The parser tolerated a deviation from the dialect (``what`` says which; ``path``, where
    an argument was typed by its schema, says which one: ``days``, ``items[0].id``)."""

    index: int | None
    what: str
    path: str = ""


@dataclass(frozen=True, slots=True)
class Invalid:
    """A call's arguments do not satisfy the tool's JSON schema."""

    index: int
    errors: tuple[str, ...]


_set_text_text = Text.text.__set__  # type: ignore[attr-defined,misc]
_set_reasoning_text = Reasoning.text.__set__  # type: ignore[attr-defined,misc]
_set_delta_index = ArgumentsDelta.index.__set__  # type: ignore[attr-defined,misc]
_set_delta_text = ArgumentsDelta.text.__set__  # type: ignore[attr-defined,misc]
_set_begin_index = ToolCallBegin.index.__set__  # type: ignore[attr-defined,misc]
_set_begin_id = ToolCallBegin.id.__set__  # type: ignore[attr-defined,misc]
_set_begin_name = ToolCallBegin.name.__set__  # type: ignore[attr-defined,misc]
_set_end_index = ToolCallEnd.index.__set__  # type: ignore[attr-defined,misc]
_set_end_arguments = ToolCallEnd.arguments.__set__  # type: ignore[attr-defined,misc]

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
