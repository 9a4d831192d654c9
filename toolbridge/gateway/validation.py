"""Calls whose arguments fail their tool's schema (the ``--on-invalid`` policy), and how a
stream holds its calls until they are checked.

A call must be valid when the policy is ``reject`` or ``retry``, or when its tool was offered
with ``"strict": true`` (``Plan.enforced``); under ``pass`` (the default) any other invalid call
is returned as it came and only counted. Validity is the parser's verdict (its ``Invalid`` event,
after the schema repair), or for native calls the tool's schema applied to their arguments.

A whole answer is checked once repaired (``enforce``). A stream cannot take back what it sent,
so a ``Gate`` holds every event of a held call (``Plan.held``: every call, unless
``--stream-arguments``; then the enforced ones) from its ``ToolCallBegin`` until it ends (its
``ToolCallEnd``; a native call ends with the answer), together with whatever follows it
meanwhile, so the order is kept; text before the call streams as usual. A call that ended and
passed its check is then released as one ``WholeCall`` (its id, name and whole arguments), which
a front sends in one piece. A call that breaks after it began (cut by the limit, or malformed)
is dropped: nothing of it was sent, and its text follows as content, as in a whole answer.
Under ``retry`` nothing after the first call is released before the answer ends, so that a retry
never follows a call the client already has. What a stream holds is bounded by
``Plan.max_held`` characters of call arguments (``--max-answer``): past it the stream ends with
an error.

An invalid enforced call raises ``InvalidArguments``, a ``RequestError`` (502,
``invalid_tool_arguments``) naming each tool and its schema errors; the pipeline answers it, or
under ``retry`` asks again with ``retry_turn``: the conversation plus the answer's calls and one
tool result per call saying what was wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from ..events import ArgumentsDelta, CallAborted, Event, Invalid, ToolCallBegin, ToolCallEnd
from ..pieces import TextBuffer
from .turn import Plan, RequestError, Turn


@dataclass
class Call:
    """A call of the answer, as the retry shows it to the model; ``errors`` empty when valid."""

    id: str
    name: str
    arguments: str
    errors: tuple[str, ...] = ()


class InvalidArguments(RequestError):
    """An enforced call's arguments failed its schema; ``calls`` are the answer's calls so far."""

    def __init__(self, calls: list[Call]) -> None:
        what = "; and ".join(f"the model's call to {c.name!r} has arguments that do not match the "
                             f"tool's schema: {'; '.join(c.errors)}" for c in calls if c.errors)
        super().__init__(what, status=502, type="upstream_error", code="invalid_tool_arguments")
        self.calls = calls

    def after(self, retries: int) -> str:
        """The message once ``retries`` retries were spent."""
        if not retries:
            return str(self)
        return f"{self} (still invalid after {retries} {'retry' if retries == 1 else 'retries'})"


def enforce(plan: Plan, calls: list[dict[str, Any]], verdicts: dict[str, tuple[str, ...]]) -> None:
    """Raise InvalidArguments when one of a whole answer's ``calls`` (OpenAI shape) is enforced
    and has errors in ``verdicts`` (by call id; a native call without a verdict is checked here)."""
    if not plan.enforcing:
        return
    listed = []
    for call in calls:
        name, arguments = call["function"]["name"], call["function"]["arguments"]
        errors = verdicts.get(call["id"], ())
        listed.append(Call(call["id"], name, arguments, errors if plan.enforced(name) else ()))
    if any(c.errors for c in listed):
        raise InvalidArguments(listed)


def native_verdicts(plan: Plan, calls: list[dict[str, Any]]) -> dict[str, tuple[str, ...]]:
    """The schema errors of native calls (OpenAI shape) that have any, by call id."""
    if plan.tools is None:
        return {}
    out = {}
    for call in calls:
        fn = call["function"]
        errors = plan.tools.validate(fn["name"], json.loads(fn["arguments"]))
        if errors:
            out[call["id"]] = errors
    return out


def retry_turn(turn: Turn, exc: InvalidArguments) -> Turn:
    """``turn`` asked again: its messages, the answer's calls, and one tool result per call."""
    calls = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
             for c in exc.calls]
    results = [{"role": "tool", "tool_call_id": c.id, "content": _result(c, exc.calls)}
               for c in exc.calls]
    messages = [*turn.messages, {"role": "assistant", "content": None, "tool_calls": calls}, *results]
    return replace(turn, messages=messages)


@dataclass
class Retries:
    """What one request may still do under ``--on-invalid retry``."""

    turn: Turn  # the turn as last sent upstream
    left: int
    made: int = 0
    stream: Any = None  # a stream already begun: its AnswerStream and the front's encoder

    def again(self, exc: InvalidArguments) -> Turn | None:
        """The turn to send next with ``exc``'s errors, or None when no retry is left."""
        if self.left <= 0:
            return None
        self.left, self.made = self.left - 1, self.made + 1
        self.turn = retry_turn(self.turn, exc)
        return self.turn


def _result(call: Call, calls: list[Call]) -> str:
    if call.errors:
        return (f"Error: not run. The arguments do not match the schema of {call.name!r}: "
                f"{'; '.join(call.errors)}. Call {call.name!r} again with arguments that satisfy "
                f"its schema.")
    bad = ", ".join(repr(c.name) for c in calls if c.errors)
    return (f"Not run: the call to {bad} in the same answer had invalid arguments. Make this call "
            f"again if it is still needed.")


# ---------------------------------------------------------------- streams


@dataclass(frozen=True, slots=True)
class WholeCall:
    """A held call released: it ended and was checked; a front sends it in one piece."""

    index: int
    id: str
    name: str
    arguments: str


@dataclass
class _Held:
    begin: ToolCallBegin
    native: bool = False  # its fragments are kept (a parsed call's end carries its arguments)
    fragments: TextBuffer = field(default_factory=TextBuffer)
    errors: tuple[str, ...] = ()
    size: int = 0  # characters of the fragments
    arguments: str | None = None  # set once the call ended and passed its check
    dropped: bool = False  # broke after it began, or a native call not kept

    def released(self) -> WholeCall:
        assert self.arguments is not None
        begin = self.begin
        return WholeCall(begin.index, begin.id, begin.name, self.arguments)


class Gate:
    """One choice's held calls (see the module docstring). ``active`` says whether ``feed``
    must see the choice's events; the choice sets it when a call begins."""

    def __init__(self, plan: Plan) -> None:
        self._plan = plan
        self._to_end = plan.on_invalid == "retry"
        self._queue: list[Event] = []  # what follows the first held call, in order
        self._calls: dict[int, _Held] = {}
        self._size = 0  # characters of arguments held
        self.active = False

    def feed(self, events: list[Event], native: bool = False) -> list[Event]:
        """The events that may go to the client now (``native``: the upstream's own call
        events); raises InvalidArguments, and RequestError when the held arguments pass
        ``Plan.max_held``."""
        out: list[Event] = []
        for ev in events:
            kind = type(ev)
            held = self._calls.get(ev.index) if kind in _CALL_EVENTS else None  # type: ignore[union-attr]
            if kind is ToolCallBegin and self._plan.held(ev.name):  # type: ignore[union-attr]
                self._calls[ev.index] = _Held(ev, native)  # type: ignore[union-attr,arg-type]
                self._queue.append(ev)
            elif held is not None:
                self._note(held, ev)
            elif kind is Invalid:
                continue  # of a call not held: counted by the choice, nothing to send
            elif self._queue:
                self._queue.append(ev)
            else:
                out.append(ev)
        if not self._to_end:
            self._release(out)
        self.active = bool(self._queue)
        return out

    def finish(self, events: list[Event], native: list[int]) -> list[Event]:
        """The last events of the choice: held calls still open are native ones, which end
        here (kept when their index is in ``native``, then checked); everything is released."""
        out = self.feed(events)
        for held in self._calls.values():
            if held.arguments is None and not held.dropped:
                self._settle_native(held, held.begin.index in native)
        self._to_end = False
        self._release(out)
        self.active = False
        return out

    def _note(self, held: _Held, ev: Event) -> None:
        kind = type(ev)
        if kind is ArgumentsDelta:
            size = len(ev.text)  # type: ignore[union-attr]
            if held.native:
                held.fragments.append(ev.text)  # type: ignore[union-attr]
            held.size += size
            self._size += size
            if self._size > self._plan.max_held:
                raise RequestError(f"the model's calls passed {self._plan.max_held} characters while held "
                                   "to be checked (--max-answer)", status=502, type="upstream_error",
                                   code="answer_too_large")
        elif kind is Invalid:
            held.errors = ev.errors  # type: ignore[union-attr]
        elif kind is CallAborted:
            held.dropped = True
        elif kind is ToolCallEnd:
            self._check(held, ev.arguments)  # type: ignore[union-attr]

    def _settle_native(self, held: _Held, kept: bool) -> None:
        if not kept:  # not a JSON object: the stream's rejected text says what it was
            held.dropped = True
            return
        arguments = held.fragments.text() or "{}"
        tools = self._plan.tools
        if tools is not None and self._plan.enforced(held.begin.name):
            held.errors = tools.validate(held.begin.name, json.loads(arguments))
        self._check(held, arguments)

    def _check(self, held: _Held, arguments: str) -> None:
        if held.errors:  # the answer's calls so far, in order, for the retry to show
            raise InvalidArguments([
                Call(h.begin.id, h.begin.name, arguments, held.errors) if h is held
                else Call(h.begin.id, h.begin.name, h.arguments or "")
                for h in self._calls.values() if h is held or h.arguments is not None])
        held.arguments = arguments
        held.fragments = TextBuffer()  # (its size stays counted until it is released)

    def _release(self, out: list[Event]) -> None:
        """Move the queue's head to ``out`` up to the first held call still open."""
        sent = 0
        for ev in self._queue:
            held = self._calls.get(ev.index) if type(ev) is ToolCallBegin else None  # type: ignore[union-attr]
            if held is not None:
                if held.arguments is None and not held.dropped:
                    break
                del self._calls[ev.index]  # type: ignore[union-attr]
                self._size -= held.size
                if not held.dropped:
                    out.append(held.released())  # type: ignore[arg-type]
            else:
                out.append(ev)
            sent += 1
        del self._queue[:sent]


_CALL_EVENTS = frozenset((ArgumentsDelta, ToolCallEnd, Invalid, CallAborted))
