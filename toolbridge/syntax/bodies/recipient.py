"""Body kind: one message addressed by a recipient header (Muse Glimmer / Spark), read to its end.

    <|start|>assistant to=get_weather<|message|><atem:function_calls>
    <atem:invoke name="get_weather">
    <atem:parameter name="city">Paris</atem:parameter>
    </atem:invoke>
    </atem:function_calls><|eom|>

A message is ``<|start|>`` + a header (``assistant``, `` to=RECIPIENT``) + ``<|message|>`` + body +
a terminator (``RecipientForm.terminators``). The generation prompt ends with ``<|start|>assistant``,
so a block may also open at a bare ``to=`` where the answer starts. By recipient:

- the reasoning recipient (``self``) is handed back to the parser just before ``to=``: the dialect
  declares ``to=self<|message|>`` ... ``<|eom|>`` as its reasoning, so with reasoning split the
  parser reads it, and without, the message is content as written (markers included);
- the visible recipient (``user``) is content, streamed and settled with ``keep``; the terminator
  is consumed; a next ``<|start|>`` or a call block ends it too;
- any other recipient is a tool: the body must be a call block, read by the dialect's block
  reader (``RecipientForm.calls``); the optional terminator after it is consumed.

A block opened by the call block's own tag (no header: a server dropped the special tokens) is
read by the block reader directly. A header that is long, crosses a line, meets another special
token or holds other words is not a header: the block is rejected and stays content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..markers import marker_set, match_at, skip_ws
from ..dialect import DONE, FAIL, MORE, Body, BodyFactory, CallSink, Outcome


START, MESSAGE = "<|start|>", "<|message|>"
_HEADER_LIMIT = 256
_SPECIAL = re.compile(r"<\|[a-z_]+\|>")


@dataclass(frozen=True)
class RecipientForm:
    """One family's recipients, terminators and call-block reader."""

    calls: BodyFactory  # reads a tool message's body (opened by one of ``call_tags``)
    call_tags: tuple[str, ...]  # what a tool message's body starts with
    terminators: tuple[str, ...]
    reasoning: str = "self"
    visible: str = "user"
    roles: tuple[str, ...] = ("assistant",)


class _R:  # states (plain ints: an Enum member's lookup costs several times as much)
    HEADER = 0
    TEXT = 1
    CALL_OPEN = 2  # a tool message's body: its call block must begin
    CALL = 3
    TERMINATOR = 4


class RecipientBody:
    """Read one recipient-addressed message; see the module docstring."""

    def __init__(self, sink: CallSink, opened_by: str, *, form: RecipientForm) -> None:
        self.reason = ""
        self._sink = sink
        self._form = form
        self._text_end = marker_set((*form.terminators, START, *form.call_tags))
        self._call: Body | None = None
        self._state = _R.HEADER
        tag = next((t for t in form.call_tags if opened_by.startswith(t)), None)
        if tag is not None:  # a call block without a header
            self._call = form.calls(sink, opened_by)
            self._state = _R.CALL

    def fast(self, text: str) -> str | None:
        return self._call.fast(text) if self._call is not None and self._state == _R.CALL else None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        while True:
            state = self._state
            if state == _R.CALL:
                pos, outcome = self._in_call(buf, pos, final)
            elif state == _R.TEXT:
                pos, outcome = self._text(buf, pos, final)
            elif state == _R.HEADER:
                pos, outcome = self._header(buf, pos, final)
            elif state == _R.CALL_OPEN:
                pos, outcome = self._call_open(buf, pos, final)
            else:
                pos, outcome = self._terminator(buf, pos, final)
            if outcome is not None:
                return pos, outcome

    def _header(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        end = buf.find(MESSAGE, pos, pos + _HEADER_LIMIT + len(MESSAGE))
        head = buf[pos:end] if end != -1 else buf[pos : pos + _HEADER_LIMIT + 1]
        too_long = end == -1 and len(buf) - pos >= _HEADER_LIMIT + len(MESSAGE)  # the window is all there
        if _SPECIAL.search(head) or "\n" in head or too_long:
            return pos, self._fail("not a message header")
        if end == -1:
            return pos, (self._fail("truncated") if final else MORE)
        words = head.split()
        recipients = [w[3:] for w in words if w.startswith("to=")]
        if len(recipients) != 1 or not recipients[0] or any(
            not w.startswith("to=") and w not in self._form.roles for w in words
        ):
            return pos, self._fail("not a message header")
        recipient = recipients[0]
        if recipient == self._form.reasoning:
            return pos + head.index("to="), DONE  # the parser reads reasoning itself
        self._state = _R.TEXT if recipient == self._form.visible else _R.CALL_OPEN
        return end + len(MESSAGE), None

    def _call_open(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        at = skip_ws(buf, pos)
        found = match_at(buf, at, self._form.call_tags, final) if at < len(buf) else ""
        if found == "" and not final:
            return pos, MORE
        if not found:
            return pos, self._fail("truncated" if at >= len(buf) else "a tool message without a call block")
        self._call = self._form.calls(self._sink, found)
        self._state = _R.CALL
        return at + len(found), None

    def _in_call(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        assert self._call is not None
        pos, outcome = self._call.feed(buf, pos, final)
        if outcome is DONE:
            self._state = _R.TERMINATOR
            return pos, None
        self.reason = self._call.reason
        return pos, outcome

    def _terminator(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        at = skip_ws(buf, pos)
        found = match_at(buf, at, self._form.terminators, final) if at < len(buf) else ""
        if found == "" and not final:
            return pos, MORE
        return (at + len(found), DONE) if found else (pos, DONE)

    def _text(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        found = self._text_end.search(buf, pos)
        if found is None:
            stop = len(buf) if final else len(buf) - self._text_end.holdback(buf, pos)
            self._emit(buf[pos:stop], stop)
            return stop, DONE if final else MORE
        self._emit(buf[pos : found.start()], found.start())
        if found.group() in self._form.terminators:
            return found.end(), DONE
        return found.start(), DONE  # the next message, or a call block, begins here

    def _emit(self, text: str, settled: int) -> None:
        if text:
            self._sink.text(text)
            self._sink.keep(settled)

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL
