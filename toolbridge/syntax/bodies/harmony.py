"""Body kind: one Harmony message (gpt-oss), read from its header to its terminator.

A message is ``<|start|>assistant`` + ``<|channel|>CHANNEL`` + optional `` to=RECIPIENT`` (in the
role header or the channel header) + optional `` <|constrain|>json`` + ``<|message|>`` + BODY +
``<|end|>``, ``<|call|>`` or ``<|return|>``. The output often starts inside the first header
(the prompt ends with ``<|start|>assistant``), so a block may open at ``<|start|>``, at
``<|channel|>`` or at a bare ``to=`` where the answer starts. One block is one message:

- a recipient ``functions.NAME`` (in any channel) makes a call whose body is JSON, read by a
  CallBody (a recipient naming a tool that was not offered is rejected, so its text stays content);
- ``final``, and ``commentary`` without a recipient (a preamble), are content, streamed through
  the sink and settled with ``keep``; the terminator is consumed, and a next ``<|start|>`` without
  one ends the message;
- a plain ``analysis`` message is reasoning. The dialect declares
  ``<|channel|>analysis<|message|>`` ... ``<|end|>`` as its reasoning markers, so when reasoning
  is split the parser itself reads it; a block that meets one after other header text hands it
  back (DONE just before its ``<|channel|>``). A block opened by that very ``<|channel|>`` means
  reasoning is not being split: the header is passed through as content, and the message with it.

A header is short and holds only words and the ``<|channel|>``/``<|constrain|>`` specials; one
that runs past ``_HEADER_LIMIT`` characters, crosses a line or meets another special is not a
header, and the block is rejected (prose mentioning ``<|channel|>`` stays prose).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .section import CallBody, CallSpec
from ..markers import marker_set
from ..dialect import DONE, FAIL, HOLD_TAGGED_BLOCK, MORE, CallSink, Outcome, still_held


START, CHANNEL, CONSTRAIN, MESSAGE = "<|start|>", "<|channel|>", "<|constrain|>", "<|message|>"
TERMINATORS = ("<|end|>", "<|call|>", "<|return|>")
CHANNELS = ("analysis", "commentary", "final")
_NOT_RECIPIENTS = ("assistant", "user", "all")
_HEADER_LIMIT = 256
_SPECIAL = re.compile(r"<\|[a-z_]+\|>")
_SPLIT = re.compile(r"(<\|channel\|>|<\|constrain\|>)")
_ENDS = (*TERMINATORS, START)  # what ends a message's body (a next message's start included)
_TEXT_END = marker_set(_ENDS)
_CALL = CallSpec(name_end=(), close=("<|call|>", "<|end|>"))


class _H:  # states (plain ints: an Enum member's lookup costs several times as much)
    HEADER = 0
    TEXT = 1
    CALL = 2


def parse_header(header: str) -> tuple[str, str, int] | str:
    """(channel, recipient, offset of the last ``<|channel|>``) of a header, or why it is none.

    ``header`` is the text before ``<|message|>``, starting with the role part (``assistant``,
    ``to=R``, or nothing when the block opened at ``<|channel|>``, which the caller restores).
    """
    parts = _SPLIT.split(header)
    recipient, channel, offset, at = "", "", -1, len(parts[0])
    for word in parts[0].split():
        if word.startswith("to="):
            recipient = word[3:]
        elif word != "assistant":
            return "not an assistant message header"
    for marker, segment in zip(parts[1::2], parts[2::2]):
        words = segment.split()
        if marker == CHANNEL:
            channel, offset = (words[0] if words else ""), at
        recipient = next((w[3:] for w in words if w.startswith("to=")), recipient)
        at += len(marker) + len(segment)
    if channel and channel not in CHANNELS:
        return f"unknown channel {channel!r}"
    return channel or "final", ("" if recipient in _NOT_RECIPIENTS else recipient), offset


class HarmonyBody:
    """Read one Harmony message; see the module docstring. A call's arguments, while short and
    unterminated, are held unread and then read at once (as ``Body.hold_until`` blocks are:
    content messages are not held, they stream as written)."""

    # While a call's arguments wait, what tells whether the text from their start still only
    # waits (the parser then keeps the text without calling ``feed``).
    wait: Callable[[str], bool] | None = None

    def __init__(self, sink: CallSink, opened_by: str) -> None:
        self.reason = ""
        self._sink = sink
        self._prefix = CHANNEL if opened_by == CHANNEL else ""
        self._state = _H.HEADER
        self._call: CallBody | None = None

    def fast(self, text: str) -> str | None:
        return self._call.fast(text) if self._call is not None else None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        self.wait = None
        if self._state == _H.HEADER:
            pos, outcome = self._header(buf, pos, final)
            if outcome is not None:
                return pos, outcome
            if self._call is not None and not final and _arguments_wait(buf[pos : pos + HOLD_TAGGED_BLOCK + 1]):
                self.wait = _arguments_wait
                return pos, MORE
        if self._call is not None:
            pos, outcome = self._call.feed(buf, pos, final)
            self.reason = self._call.reason
            return pos, outcome
        return self._text(buf, pos, final)

    def _header(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        end = buf.find(MESSAGE, pos, pos + _HEADER_LIMIT + len(MESSAGE))
        head = buf[pos:end] if end != -1 else buf[pos : pos + _HEADER_LIMIT + 1]
        foreign = [m for m in _SPECIAL.findall(head) if m not in (CHANNEL, CONSTRAIN)]
        # Too long only once the whole window <|message|> could end in has arrived.
        too_long = end == -1 and len(buf) - pos >= _HEADER_LIMIT + len(MESSAGE)
        if foreign or "\n" in head or too_long:
            return pos, self._fail("not a message header")
        if end == -1:
            return pos, self._fail("truncated") if final else MORE
        parsed = parse_header(self._prefix + head)
        if isinstance(parsed, str):
            return pos, self._fail(parsed)
        channel, recipient, offset = parsed
        body = end + len(MESSAGE)
        if recipient:
            name = recipient.removeprefix("functions.")
            if not name:
                return pos, self._fail(f"no function named in recipient {recipient!r}")
            self._call = CallBody(self._sink, _CALL, name=name)
        elif channel != "analysis":
            self._state = _H.TEXT
        elif offset > 0 or not self._prefix:  # hand the analysis message back to the parser
            return pos + offset - len(self._prefix), DONE
        else:  # reasoning is not being split: the header is content, and so is the message
            self._sink.text(self._prefix + head + MESSAGE)
            return body, DONE
        self._state = _H.CALL if recipient else _H.TEXT
        return body, None

    def _text(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        found = _TEXT_END.search(buf, pos)
        if found is None:
            stop = len(buf) if final else len(buf) - _TEXT_END.holdback(buf, pos)
            self._emit(buf[pos:stop], stop)
            return stop, DONE if final else MORE
        self._emit(buf[pos : found.start()], found.start())
        if found.group() == START:
            return found.start(), DONE  # the next message began without a terminator
        return found.end(), DONE

    def _emit(self, text: str, settled: int) -> None:
        if text:
            self._sink.text(text)
            self._sink.keep(settled)

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL


def _arguments_wait(text: str) -> bool:
    """Whether a call's arguments, ``text`` from their start, are short and unterminated."""
    return still_held(text, _ENDS)
