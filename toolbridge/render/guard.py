"""Tool results guarded against forged calls, in every prompt toolbridge writes.

A tool result is text someone else may control (a web page, a file, an API's answer). Written
into a prompt, it may be copied by the model into its answer, whole or from any point on; if the
copy holds a call in a dialect the answer is read with, the parser returns a call the model never
meant to make. ``ResultGuard`` writes one character of whatever a reading parser could take for
the start of a call as a character reference (``<`` as ``&lt;``, ``{`` as ``&#123;``): the text
reads as it did (``html.unescape`` gives it back exactly), and no copy of it is a call:

- markers: every marker the reading dialects recognise wherever it stands (``Dialect.call_start``:
  ``<tool_call>``, ``<function=``, ````` ``` `````, ``[TOOL_CALLS]``, ``functools[`` ...), the
  end-of-turn and special tokens they declare or write, anything shaped like a special token
  (``<|...|>``, ``<｜...｜>``: in a prompt sent to a completions endpoint the server would read it
  as the token itself), the reasoning closer after which an answer starts again (so bare calls
  may follow), the tags of the dialect the model writes (closers too), and the caller's own
  (the protocol's wrapper). The set is derived from the dialects: a new one needs no change here;
- bare openers (``Dialect.bare_start``: ``{``, ``[``, ``to=``) are calls only where an answer
  starts, and a copy may start anywhere: wherever one stands, in a line or at its start, the
  parsers of the dialects that claim it read the text from there, and when one reads the start of
  a call, or has not settled within ``WINDOW`` characters, the opener's first character is written
  as a reference. Data that is not a call stays as it is. An empty opener (Functionary v3.2: the
  answer opens with a recipient line, a tool's name) is tried where a line starts and where a
  line's last word starts, as only the dialect the model writes reads it.
  A call is emitted only for an offered tool, so an opener after the last place an offered
  name could be spelt (``_horizon``) is no call and costs nothing: JSON data that names no
  tool is not checked at all. A check costs about 70 us per claiming dialect (four claim ``{``
  under ``auto``), so the checks of one conversation are bounded (``CHECKS``); beyond them
  openers are written as references unchecked.

One guard per conversation: its check budget is counted across the results it writes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from ..dialects import dialect_names, get_dialect
from ..events import ToolCallBegin
from ..parsing.auto import THINK
from ..parsing.parser import StreamParser
from ..parsing.stream import Phase
from ..syntax.dialect import Dialect
from ..syntax.markers import alternation
from ..tools import Toolset

_TAG_HEAD = re.compile(r"</?[A-Za-z_][\w.\-]*")
_TOKEN_SHAPE = r"<\|[^<>|\s]{1,40}\|>|<｜[^<>｜]{1,40}｜>"  # special tokens, declared or not
_SPECIAL = re.compile(_TOKEN_SHAPE + r"|\[[A-Z_]{3,}\]")
_BREAK = "[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]"  # a line break, as str.splitlines breaks lines
_SEPARATORS = re.compile(r"[-_./:]+")  # what name resolution treats alike (tools.Toolset.resolve)
WINDOW = 256  # what a bare-opener check reads: a block not settled by then counts as a call
CHECKS = 256  # bare-opener checks per conversation; later openers are written unchecked


class ResultGuard:
    """Neutralises, in tool results, what the parsers of the reading dialects could take for a
    call (see the module docstring). One per conversation."""

    def __init__(self, readers: Iterable[str] = (), own: Dialect | None = None,
                 markers: Iterable[str] = (), names: Iterable[str] | None = None) -> None:
        """
        Args:
            readers: registry names of the dialects the answer is read with.
            own: the dialect the model is asked to write (read too): its tags and its empty
                opener are guarded.
            markers: more markers to guard (a wrapper's tags).
            names: the offered tools' names, which the answer's calls are resolved against (a
                bare opener is a call only if it names one of them); None: any name is a call.
        """
        key = (tuple(sorted(set(readers))), own, tuple(sorted(set(markers))))
        self._markers = _marker_pattern(*key)
        self._openers, self._claims = _claims(key[0], own)
        self._names = None if names is None else frozenset(names)
        self._checks = CHECKS if self._names != frozenset() else 0

    @classmethod
    def for_parser(cls, parser: str | Dialect, hint: str | None = None,
                   names: Iterable[str] | None = None) -> ResultGuard:
        """The guard for an answer read with ``parser`` ("auto": every registered dialect, with
        ``hint`` the template's own; otherwise that dialect), against the tools ``names``."""
        if parser == "auto":
            return cls(dialect_names(), get_dialect(hint) if hint else None, names=names)
        return cls((), get_dialect(parser), names=names)

    def __call__(self, text: str) -> str:
        """``text`` with every guarded marker and every opener of a call neutralised."""
        return self._bare(*_written(text, self._markers))

    @property
    def markers(self) -> re.Pattern[str]:
        """The markers a guarded text holds none of."""
        return self._markers

    def content(self, content: Any) -> Any:
        """A message's content guarded, in its own shape (a string, or a list of parts whose
        text parts are guarded); anything else is returned as it is."""
        if isinstance(content, str):
            return self(content)
        if isinstance(content, list):
            return [{**part, "text": self(part["text"])}
                    if isinstance(part, Mapping) and isinstance(part.get("text"), str) else part
                    for part in content]
        return content

    def _bare(self, text: str, written: set[int]) -> str:
        """``text`` with the first character of each opener that could begin a call written as
        a reference; ``written``: where the markers' references start (no call starts with one,
        and writing its ``&`` again would not read back). (A check reads what follows as it was:
        writing an earlier opener's first character as a reference cannot turn what a parser
        refused into a call.)"""
        if self._names == frozenset():
            return text  # no tool offered: no call can be made, whatever the text holds
        horizon = _horizon(text, self._names)
        out: list[str] = []
        pos, last = 0, -1
        for match in self._openers.finditer("\n" + text):  # the text's start is a line's start
            start = match.end() - 1
            if start > horizon:
                break  # no offered name after it: a copy from here on calls nothing
            if start == last or start in written:
                continue  # a line's start that is also an opener: checked once
            last = start
            if self._checks <= 0 or self._check(text, start, match.lastgroup == "line"):
                out += (text[pos:start], _reference(text[start]))
                pos = start + 1
        out.append(text[pos:])
        return "".join(out)

    def _check(self, text: str, start: int, line: bool) -> bool:
        self._checks -= 1  # a bound on the work one conversation can ask for
        dialects = [ds for opener, ds in self._claims
                    if (opener or line) and text.startswith(opener, start)]
        return _may_call(tuple(dict.fromkeys(d for ds in dialects for d in ds)), self._names,
                         text[start:start + WINDOW])


def every_dialect() -> tuple[str, ...]:
    """The registry's names: what ``auto`` reads."""
    return tuple(dialect_names())


@lru_cache(maxsize=64)
def _marker_pattern(readers: tuple[str, ...], own: Dialect | None,
                    extra: tuple[str, ...]) -> re.Pattern[str]:
    markers = {*extra, THINK[1]}  # auto's answer restarts after it: bare calls may follow
    if own is not None:
        markers.update(_TAG_HEAD.findall(_example(own)))  # its own tags, closers too
    for each in {*map(get_dialect, readers), *([own] if own is not None else [])}:
        markers.update(each.call_start, each.end_tokens, _SPECIAL.findall(_example(each)))
        if each.bare_start and each.reasoning:  # after it the answer starts again: bare calls
            markers.add(each.reasoning[1])
    return re.compile(f"{alternation(tuple(filter(None, markers)))}|{_TOKEN_SHAPE}", re.IGNORECASE)


def _example(d: Dialect) -> str:
    return d.render([("name", {"key": "value"})]) if d.render is not None else ""


@lru_cache(maxsize=64)
def _claims(readers: tuple[str, ...], own: Dialect | None
            ) -> tuple[re.Pattern[str], tuple[tuple[str, tuple[Dialect, ...]], ...]]:
    """Where a bare call may open, and each opener with the dialects that read it there. An
    empty opener (a recipient line) is tried by auto only for a model of that family: it counts
    for ``own`` only, where a line or its last word starts (group ``line``)."""
    claims: dict[str, list[Dialect]] = {}
    dialects = sorted({*map(get_dialect, readers)}, key=lambda each: each.name)
    for each in (*dialects, *([own] if own is not None else [])):
        for opener in each.bare_start:
            if (opener or each is own) and each not in claims.setdefault(opener, []):
                claims[opener].append(each)
    openers = tuple(o for o in claims if o)
    anywhere = f"(?={alternation(openers)})" if openers else "(?!)"
    line = rf"{_BREAK}\s*(?=\S)|(?<=[^\S\n\r])(?=[^\s]+{_BREAK})" if "" in claims else "(?!)"
    return (re.compile(f"(?P<line>{line})|{anywhere}"),
            tuple((opener, tuple(ds)) for opener, ds in claims.items()))


@lru_cache(maxsize=4096)  # a conversation's history is written again on every turn
def _may_call(dialects: tuple[Dialect, ...], names: frozenset[str] | None, window: str) -> bool:
    """Whether an answer that starts with ``window`` begins a call of one of ``names`` (None:
    of any name) in one of ``dialects``, or has not settled yet (a call may still begin after
    the window)."""
    tools = None if names is None else _toolset(names)
    for d in dialects:
        parser = StreamParser(d, tools, repair=True)  # lenient reads more as calls: a superset
        events = parser.feed(window)
        if parser.phase is not Phase.CONTENT or any(isinstance(e, ToolCallBegin) for e in events):
            return True
    return False


def _horizon(text: str, names: frozenset[str] | None) -> int:
    """Where the last spelling of an offered name may start in ``text`` (its length when any
    name counts). A written name resolves to an offered one only if, lowercased, it holds the
    offered name's last part (after ``functions.``-like prefixes and separators: see
    ``Toolset.resolve``); a backslash or an ampersand may escape one (JSON, XML), so they count
    too. A copy that starts after the horizon holds no offered name: it is no call, and
    JSON data that names no tool costs no check."""
    low = text.lower()
    if names is None or len(low) != len(text):  # a lowercase of another length: no mapping back
        return len(text)
    marks = {_SEPARATORS.split(name.lower())[-1] for name in names} | {"\\", "&"}
    return max(low.rfind(mark) if mark else len(text) for mark in marks)


@lru_cache(maxsize=64)
def _toolset(names: frozenset[str]) -> Toolset:
    """Tools of these names: what the answer's parser resolves a written name against."""
    return Toolset([{"type": "function", "function": {"name": n}} for n in sorted(names)])


def neutralise(text: str, markers: re.Pattern[str]) -> str:
    """``text`` with the first character of every match of ``markers`` written as a character
    reference, so that no match remains."""
    return _written(text, markers)[0]


def _written(text: str, markers: re.Pattern[str]) -> tuple[str, set[int]]:
    """``neutralise(text, markers)``, and where in it each reference starts."""
    out: list[str] = []
    starts: set[int] = set()
    pos, size = 0, 0
    match = markers.search(text)
    while match is not None:
        start = match.start()  # only the first character: markers nested in this one still count
        reference = _reference(text[start])
        size += start - pos
        starts.add(size)
        size += len(reference)
        out += (text[pos:start], reference)
        pos = start + 1
        match = markers.search(text, pos)
    out.append(text[pos:])
    return "".join(out), starts


def _reference(char: str) -> str:
    return {"<": "&lt;", ">": "&gt;", "&": "&amp;"}.get(char, f"&#{ord(char)};")
