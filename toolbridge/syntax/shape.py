"""How a dialect writes its calls, declared for constrained decoding (``toolbridge.constrain``).

A shape is data: templates of one call with ``{NAME}``, ``{ARGS}`` and ``{INDEX}`` holes, what
stands around and between the calls, and how the arguments are spelled. The compiler turns it,
with the request's tools, into a grammar the upstream samples from. Sample (Hermes)::

    Shape(calls=('<tool_call>\\n{"name": "{NAME}", "arguments": {ARGS}}\\n</tool_call>',),
          separator="\\n")

Arguments are one of:
- ``Args.JSON``: a JSON object following the tool's schema (escaped as JSON);
- ``Args.PYTHON``: keyword arguments with Python literals (``city='Paris', n=3``);
- a parameter template with ``{KEY}`` and ``{VALUE}`` holes, repeated once per argument (XML and
  key/value dialects): a string value is raw text up to what follows ``{VALUE}``, any other value
  its JSON, as the dialect's renderer writes it. ``value_ends`` names the other strings at which
  the dialect's reader ends a raw value (the next parameter's tag ...): a value may not hold them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Args(enum.Enum):
    """How a call's arguments are spelled, where they are not a parameter template."""

    JSON = "json"
    PYTHON = "python"


@dataclass(frozen=True)
class Shape:
    """One dialect's calls as templates (the first of ``calls`` is what its renderer writes;
    the others are spellings its models also use)."""

    calls: tuple[str, ...]
    args: Args | str = Args.JSON
    # Besides the parameter template's close tag, what ends a raw-text value when the reader
    # meets it (a missing close tag tolerated): values avoid these too.
    value_ends: tuple[str, ...] = ()
    separator: str = ""
    # Around all calls of one answer (Kimi's section markers, pythonic's brackets).
    section: tuple[str, str] = ("", "")
    # The text that starts the calls (a lazy grammar's trigger). Empty: the calls are the whole
    # answer and begin at its first character (bare JSON, pythonic lists).
    trigger: str | None = None
    # A final answer that is not free text (Harmony's final channel): a template with {TEXT}.
    answer: str | None = None
