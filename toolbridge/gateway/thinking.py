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
beginning of an opener, and in mode ``asked`` until the closer, an opener, the end of the answer
or ``LEAD_LIMIT`` characters. The verdict depends on the text alone, never on how it was
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

MODES = ("auto", "on", "off")
# How far into the answer the closer of a reasoning the prompt opened is looked for: a few
# thousand tokens of reasoning. An answer that asked for thinking and opens with no marker is
# held until then (or its end) when no closer comes.
LEAD_LIMIT = 32768

Verdict = tuple[bool, bool]  # (reasoning split out, the answer starts inside it)
PLAIN: Verdict = (False, False)
SPLIT: Verdict = (True, False)
INSIDE: Verdict = (True, True)


def asked(body: dict[str, Any]) -> bool:
    """Whether an upstream request body asks the model to think."""
    effort = body.get("reasoning_effort")
    if isinstance(effort, str) and effort != "none":
        return True
    variables = body.get("chat_template_kwargs")
    return isinstance(variables, dict) and any(variables.get(k) is True for k in ("enable_thinking", "thinking"))


def mode(flag: str, body: dict[str, Any]) -> str | None:
    """The plan's reading of reasoning in the content: None (as written), ``opens`` or ``asked``."""
    if flag == "off":
        return None
    return "asked" if flag == "on" or asked(body) else "opens"


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


def _pairs(dialect: Dialect) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    pairs = [p for p in (dialect.reasoning, dialect.reasoning_also) if p is not None]
    return (tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)) if pairs else None


@lru_cache(maxsize=256)
def _search(marks: tuple[str, ...]) -> tuple[re.Pattern[str], int]:
    """The pattern that finds the first of ``marks`` (the longest first where one starts
    another), and the longest's length."""
    found = sorted(set(marks), key=len, reverse=True)
    return re.compile("|".join(map(re.escape, found))), len(found[0])


class Lead:
    """The start of one answer's content, held until it tells how reasoning is read in it."""

    __slots__ = ("_closes", "_longest", "_marks", "_mode", "_opens", "_searched", "text")

    def __init__(self, mode: str, opens: tuple[str, ...], closes: tuple[str, ...]) -> None:
        self._mode, self._opens, self._closes = mode, opens, frozenset(closes)
        self._marks, self._longest = _search(opens + closes)
        self._searched = 0
        self.text = ""  # what is held

    @classmethod
    def of(cls, plan: Any) -> Lead | None:
        """The Lead of an answer to ``plan`` (None when its content is read as written)."""
        how = getattr(plan, "think", None)
        found = markers(plan.dialect, plan.model) if how else None
        return cls(how, *found) if found else None

    def feed(self, text: str) -> Verdict | None:
        """Hold ``text``; the verdict once the content held tells it, else None."""
        self.text += text
        return self._verdict(final=False)

    def end(self) -> Verdict:
        """The verdict at the end of the answer."""
        return self._verdict(final=True)  # type: ignore[return-value]

    def whole(self, text: str) -> Verdict:
        """The verdict on a whole answer's content."""
        self.text = text
        return self.end()

    def _verdict(self, final: bool) -> Verdict | None:
        lead = self.text.lstrip()
        if not lead:
            return (SPLIT if self._mode == "asked" else PLAIN) if final else None
        if lead.startswith(self._opens):
            return SPLIT
        if not final and any(o.startswith(lead) for o in self._opens):
            return None  # the opener may still be being written
        return self._closer(final) if self._mode == "asked" else PLAIN

    def _closer(self, final: bool) -> Verdict | None:
        """Mode ``asked``: INSIDE when the closer comes first among the markers, and early."""
        text, longest = self.text, self._longest
        reach = LEAD_LIMIT + longest - 1  # a marker that starts within the limit ends before it
        m = self._marks.search(text, max(0, self._searched - longest + 1), reach)
        if m is not None and m.start() < LEAD_LIMIT:
            return INSIDE if m.group() in self._closes else SPLIT
        self._searched = len(text)
        return SPLIT if final or len(text) >= reach else None
