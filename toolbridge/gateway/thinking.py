"""Reasoning an upstream wrote inside the content (``--reasoning-in-content``).

An upstream that runs no reasoning parser (vLLM without ``--reasoning-parser``, llama.cpp with
``--reasoning-format none``, many Ollama set-ups) returns the model's ``<think>...</think>`` (or
its family's own reasoning markers) inside ``content``. The content's parser then splits it out
as reasoning, which every front renders as its own (``reasoning_content``, a ``thinking``
block, a ``reasoning`` item), when

- the answer opens with the reasoning opener (after white space); a text that opens otherwise
  keeps any ``<think>`` it writes later as text (``auto``, the default, and the request did not
  ask for thinking: mode ``opens``);
- or the request asked for thinking (``reasoning_effort`` other than ``none``,
  ``chat_template_kwargs`` ``enable_thinking`` or ``thinking`` true: what the Messages and
  Responses fronts send for ``thinking: enabled`` and ``reasoning``), or the flag is ``on``
  (mode ``asked``): then every opener starts reasoning, and an answer that opens with neither
  marker but writes the closer before any opener, within ``LEAD_LIMIT`` characters, is reasoning
  up to it (the chat template wrote the opener into the prompt: Qwen3's thinking models,
  DeepSeek-R1, QwQ).

The start of the content is held (``Lead``) until it tells which: while it is white space or the
beginning of an opener, and in mode ``asked`` until the closer, an opener, the family's call
marker (a model that does not think, calling), the end of the answer or ``LEAD_LIMIT``
characters; only the opening counts once the upstream has given reasoning in its own field. The verdict depends on the text alone, never on how it was
chunked, so a stream and a whole answer read alike. An upstream that also gives the reasoning
in its own field (llama.cpp's ``deepseek-legacy`` format keeps the tags in the content too) is
not doubled: once it has, what the content's parser splits out is dropped.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..parsing.auto import dialect_for_model
from ..syntax.dialect import THINK, Dialect

# How far into the answer the closer of a reasoning the prompt opened is looked for: a few
# thousand tokens of reasoning. An answer that asked for thinking and opens with no marker is
# held until then (or its end) when no closer comes.
LEAD_LIMIT = 32768

Verdict = tuple[bool, bool]  # (reasoning split out, the answer starts inside it)
PLAIN: Verdict = (False, False)
SPLIT: Verdict = (True, False)
INSIDE: Verdict = (True, True)


def asked(body: dict[str, Any]) -> bool | None:
    """Whether an upstream request body asks the model to think: True, False when it turns
    thinking off (``reasoning_effort: none``, ``enable_thinking`` or ``thinking`` false), None
    when it does not say."""
    effort = body.get("reasoning_effort")
    variables = body.get("chat_template_kwargs")
    if effort is None and variables is None:  # (nearly every request)
        return None
    switches = [variables.get(k) for k in ("enable_thinking", "thinking")] if isinstance(variables, dict) else []
    if (isinstance(effort, str) and effort != "none") or True in switches:
        return True
    return False if effort == "none" or False in switches else None


def mode(flag: str, body: dict[str, Any]) -> str | None:
    """The plan's reading of reasoning in the content: None (as written), ``opens`` or ``asked``
    (``on``: as if every request asked, but one that turns thinking off)."""
    if flag == "off":
        return None
    wants = asked(body)
    return "asked" if wants or (flag == "on" and wants is None) else "opens"


def markers(dialect: Dialect | str, model: str | None) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The reasoning openers and closers of the answer's dialect (under auto: ``<think>`` and
    the model's family's own, when its name tells the family); None when it has none."""
    if isinstance(dialect, Dialect):
        return _pairs(dialect)
    return _auto_markers(model)


@lru_cache(maxsize=256)
def _auto_markers(model: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    family = dialect_for_model(model)
    own = _pairs(family) if family is not None else None
    opens, closes = own if own is not None else ((), ())
    return ((THINK[0], *(o for o in opens if o != THINK[0])), (THINK[1], *(c for c in closes if c != THINK[1])))


def call_markers(dialect: Dialect | str, model: str | None) -> tuple[str, ...]:
    """The call marker that, met before any reasoning marker, shows an answer that opened with
    no opener did not open inside reasoning either (a model that does not think, calling): the
    family's first, where a call marker inside reasoning ends it (under auto: the model's
    family's, else ``<tool_call>``). Only the first: the others (Hermes' code fences ...) are
    ordinary in reasoning."""
    family = dialect if isinstance(dialect, Dialect) else dialect_for_model(model)
    if family is None:
        return ("<tool_call>",)
    return family.call_start[:1] if family.calls_in_reasoning else ()


def _pairs(dialect: Dialect) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    pairs = [p for p in (dialect.reasoning, dialect.reasoning_also) if p is not None]
    return (tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)) if pairs else None


def _reading(plan: Any) -> tuple[Any, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None]:
    """How ``plan``'s answers are read for reasoning in the content (its ``think``), and the
    markers that reading looks for (None when it is read as written): ``markers`` and
    ``call_markers`` of the answer's dialect (under auto, of its model), made once per dialect
    (every answer asks)."""
    how = getattr(plan, "think", None)
    if not how:
        return how, None
    dialect = plan.dialect
    if not isinstance(dialect, Dialect):
        return how, _auto_lead_markers(plan.model)
    kept = _LEAD_MARKERS.get(id(dialect))
    if kept is not None and kept[0] is dialect:  # (the dialect is kept with them: its id is not reused)
        return how, kept[1]
    found = markers(dialect, plan.model)
    made = (*found, call_markers(dialect, plan.model)) if found else None
    if len(_LEAD_MARKERS) < 256:
        _LEAD_MARKERS[id(dialect)] = (dialect, made)
    return how, made


_LEAD_MARKERS: dict[int, tuple[Dialect, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None]] = {}


@lru_cache(maxsize=256)
def _auto_lead_markers(model: str | None) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
    found = markers("auto", model)
    return (*found, call_markers("auto", model)) if found else None


@lru_cache(maxsize=256)
def _search(marks: tuple[str, ...]) -> tuple[re.Pattern[str], int]:
    """The pattern that finds the first of ``marks`` (the longest first where one starts
    another), and the longest's length."""
    found = sorted(set(marks), key=len, reverse=True)
    return re.compile("|".join(map(re.escape, found))), len(found[0])


class Lead:
    """The start of one answer's content, held until it tells how reasoning is read in it. Each
    ``feed`` costs its piece and the longest marker: the pieces are kept, not joined, and only
    the new text (with the marker's length before it) is searched."""

    __slots__ = ("_closes", "_head", "_longest", "_marks", "_mode", "_opens", "_pieces", "_size", "_tail")

    def __init__(self, mode: str, opens: tuple[str, ...], closes: tuple[str, ...],
                 calls: tuple[str, ...] = ()) -> None:
        self._mode, self._opens, self._closes = mode, opens, frozenset(closes)
        self._marks, self._longest = _search(opens + closes + calls)
        self._pieces: list[str] = []
        self._size = 0  # characters held
        self._head = ""  # what is held after the leading white space, while the opening is unknown
        self._tail: str | None = None  # mode asked, once the answer opened with no opener: the
        # end of the text searched so far (a marker may start in it)

    @classmethod
    def of(cls, plan: Any) -> Lead | None:
        """The Lead of an answer to ``plan`` (None when its content is read as written)."""
        how, found = _reading(plan)
        return cls(how, *found) if found else None

    @staticmethod
    def read_whole(plan: Any, text: str, reasoned: bool) -> Verdict | None:
        """The verdict on a whole answer's content ``text`` (None when it is read as written):
        ``Lead.of(plan)``, made ``opening_only`` when the upstream gave reasoning in its own
        field (``reasoned``), then ``whole(text)``; the opening alone is read without making
        the Lead (the common answer)."""
        how, found = _reading(plan)
        if not found:
            return None
        if how == "asked" and not reasoned:
            return Lead(how, *found).whole(text)
        head = text.lstrip()  # (mode opens, final: as ``_verdict`` reads it)
        return SPLIT if head and head.startswith(found[0]) else PLAIN

    def opening_only(self) -> None:
        """Read only how the answer opens (mode ``opens``): the upstream gave the reasoning in
        its own field, so it runs a reasoning parser and the content holds no reasoning the
        prompt opened (unless it keeps the tags as well: the opening shows it). No effect once
        the closer is being looked for."""
        if self._tail is None:
            self._mode = "opens"

    @property
    def text(self) -> str:
        """What is held."""
        return "".join(self._pieces)

    def feed(self, text: str) -> Verdict | None:
        """Hold ``text``; the verdict once the content held tells it, else None."""
        return self._verdict(text, final=False)

    def end(self) -> Verdict:
        """The verdict at the end of the answer."""
        return self._verdict("", final=True)  # type: ignore[return-value]

    def whole(self, text: str) -> Verdict:
        """The verdict on a whole answer's content."""
        return self._verdict(text, final=True)  # type: ignore[return-value]

    def _verdict(self, text: str, final: bool) -> Verdict | None:
        at = self._size
        self._pieces.append(text)
        self._size += len(text)
        if self._tail is not None:
            return self._closer(text, at, final)
        head = self._head = self._head + text if self._head else text.lstrip()
        if not head:
            return (SPLIT if self._mode == "asked" else PLAIN) if final else None
        if head.startswith(self._opens):
            return SPLIT
        if not final and any(o.startswith(head) for o in self._opens):
            return None  # the opener may still be being written
        if self._mode != "asked":
            return PLAIN
        self._tail = ""
        return self._closer(self.text, 0, final)  # (what is held is short: white space, a head)

    def _closer(self, text: str, at: int, final: bool) -> Verdict | None:
        """Mode ``asked``, the answer opened with no opener: INSIDE when the closer comes first
        among the markers (openers, closers, the call marker), and starts within
        ``LEAD_LIMIT``; SPLIT once that cannot be.
        ``text``: the new text, which starts at ``at`` in the answer."""
        longest, tail = self._longest, self._tail or ""
        start = at - len(tail)  # where the searched text starts
        reach = LEAD_LIMIT + longest - 1  # a marker that starts within the limit ends before it
        searched = tail + text[: max(0, reach - at)]
        m = self._marks.search(searched)
        if m is not None and start + m.start() < LEAD_LIMIT:
            return INSIDE if m.group() in self._closes else SPLIT
        self._tail = searched[-(longest - 1):] if longest > 1 else ""
        return SPLIT if final or self._size >= reach else None
