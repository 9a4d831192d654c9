"""Finding literal markers in streamed text, and holding back what may still become one.

Strategy: one compiled alternation finds the earliest marker from a cursor (longest spelling
first, so ``</tool_call>`` wins over ``</tool``); a set of every beginning of every marker
tells how much of the buffer's tail could still grow into a marker. Only the tail is examined,
from the last occurrences of the markers' first characters, so the cost per call is
O(new text + longest marker) however long the output already is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

_WINDOW = 4096  # how far ``search`` looks for each first character's markers at a time
_SHORT = 256  # texts up to this long are scanned by the alternation alone
WHOLE_NEAR = 0  # the same in a whole answer: none (its groups' leads are found at once by ``find``)


@dataclass(frozen=True)
class MarkerSet:
    """A fixed set of literal markers to search for."""

    markers: tuple[str, ...]
    _pattern: re.Pattern[str] = field(init=False, repr=False)
    _prefixes: frozenset[str] = field(init=False, repr=False)
    _firsts: str = field(init=False, repr=False)
    _first_re: re.Pattern[str] = field(init=False, repr=False)
    # Per group: the text its search looks for (its markers' common beginning, or for a group
    # that also finds the markers folded into it (``_group_searches``) its first character),
    # how far past a window's end that text may run (the folded markers' start before it), the
    # search, and for a folded group how far before that character they start and the group's
    # own alternation (0 and None for the others)
    _searches: tuple[tuple[str, int, Any, int, Any], ...] = field(init=False, repr=False)
    _longest: int = field(init=False, repr=False)
    _one_first: bool = field(init=False, repr=False)  # every marker begins with the same character
    _opening: re.Pattern[str] = field(init=False, repr=False)
    _heads: frozenset[str] = field(init=False, repr=False)
    _waiting: frozenset[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        ordered = sorted(set(self.markers), key=len, reverse=True)
        pattern = _trie_pattern(ordered) if ordered else r"(?!)"
        prefixes = {m[:k] for m in ordered for k in range(1, len(m))}
        # What a held tail may be (``holdback``): the start of a marker, or a whole one
        object.__setattr__(self, "_heads", frozenset(prefixes.union(ordered)))
        object.__setattr__(self, "_pattern", re.compile(pattern))
        object.__setattr__(self, "_prefixes", frozenset(prefixes))
        # The prefixes that hold no whole marker after their first character: such a text is
        # held back whole, and nothing before it is emitted.
        pattern_re = re.compile(pattern)
        waiting = frozenset(p for p in prefixes if pattern_re.search(p, 1) is None)
        object.__setattr__(self, "_waiting", waiting)
        firsts = "".join(sorted({m[0] for m in ordered}))
        object.__setattr__(self, "_firsts", firsts)
        object.__setattr__(self, "_one_first", len(firsts) == 1)
        # One alternation per first character: it begins with that literal character, which
        # the regex engine scans for in C, false starts included.
        object.__setattr__(self, "_searches", _group_searches(ordered, firsts))
        first_re = "[" + "".join(re.escape(c) for c in firsts) + "]" if firsts else r"(?!)"
        object.__setattr__(self, "_first_re", re.compile(first_re))
        # Where a marker may begin: its first two characters (or its first at the very end, which
        # ``clear`` tests by itself: as a branch of this pattern, tried at every character, it
        # made the pattern several times slower).
        pairs = sorted({m[:2] for m in ordered})
        # (as a trie: one branch per first character, where a flat alternation tries every pair)
        opening = _trie_pattern(pairs) if ordered else r"(?!)"
        object.__setattr__(self, "_opening", re.compile(opening))
        object.__setattr__(self, "_longest", max((len(m) for m in ordered), default=0))

    @property
    def longest(self) -> int:
        """The length of the longest marker."""
        return self._longest

    def search(self, buf: str, pos: int, near: int = _SHORT) -> re.Match[str] | None:
        """The earliest marker at or after ``pos``.

        A text of up to ``near`` characters (a delta, a held tail) is scanned by the
        alternation itself, and so are the first ``near`` characters of a longer one (markers
        are often near a streaming cursor; a whole answer's first call is often after a short
        sentence; none in a whole answer, ``near`` 0: the leads' ``find`` is cheaper). Beyond,
        one alternation per first character scans (each begins with its
        literal character, which the regex engine looks for in C, false starts such as ``3 <
        4`` included, where one alternation of them all tests every character against a set,
        several times slower), a window at a time so that a first character that never comes is
        not looked for to the end of the buffer at every call (the window grows to
        ``_WINDOW``). Each starts where a plain ``find`` (memchr, many times faster than the
        regex engine's own scan) sees its markers' common beginning (the ``` of a fence, not
        the ` of prose's code), not at all when the window holds
        none, and stops where a marker found by another one starts. When every marker begins
        with the same character, all this starts where ``find`` sees that character first."""
        end, reach = len(buf), self._longest - 1
        if end - pos <= near:
            return self._pattern.search(buf, pos)
        if self._one_first:
            pos = buf.find(self._firsts, pos)  # (where a marker may first begin: nowhere, often)
            if pos < 0:
                return None
            near = near or 1  # (the marker that begins there, if one does, found at once)
            if end - pos <= near:
                return self._pattern.search(buf, pos)
        if near:  # (none: straight to the groups, each looked for where its markers' lead is)
            found = self._pattern.search(buf, pos, pos + near + reach)  # the first window, likewise
            if found is not None and found.start() < pos + near:
                return found  # (a marker that starts in the window ends by its end + reach)
            pos += near
        find, window = buf.find, _WINDOW // 2
        while pos < end:
            stop, window = pos + window, _WINDOW  # (the first window half as long)
            best = None
            for lead, past, group_search, fold, own in self._searches:
                at = find(lead, pos, stop + past)
                if at < 0:
                    continue
                m = group_search(buf, at, stop + reach)
                if fold:
                    m = self._unfold(buf, m, pos, stop, fold, group_search, own)
                if m is not None and m.start() < stop:
                    best, stop = m, m.start()  # (the next first character's must start before it)
            if best is not None:
                return best
            pos = stop
        return None

    def _unfold(self, buf: str, m: re.Match[str] | None, pos: int, stop: int, fold: int, search: Any,
                own: re.Pattern[str]) -> re.Match[str] | None:
        """The earliest marker a group that holds folded markers finds, from its first match
        ``m`` on: where the folded branch matched, the folded marker begins ``fold``
        characters before (matched whole there), or else the group's own marker at the same
        place; a marker of its own at or past ``stop`` stands only when no folded one could
        still begin before ``stop``."""
        limit = stop + self._longest - 1
        while m is not None:
            at = m.start()
            if m.lastgroup == "fold":
                start = at - fold
                if pos <= start < stop and (whole := self._pattern.match(buf, start)) is not None:
                    return whole
                mine = own.match(buf, at, limit)
                if mine is not None:
                    return mine
            elif at < stop or at >= stop + fold:
                return m
            m = search(buf, at + 1, limit)
        return None

    def at(self, buf: str, pos: int) -> re.Match[str] | None:
        """The marker that begins exactly at ``pos``, if any."""
        return self._pattern.match(buf, pos)

    def could_grow(self, buf: str, start: int) -> bool:
        """True when the marker found at ``start`` runs to the end of ``buf`` and a longer
        marker begins with it, so that more text could change which marker this is."""
        return len(buf) - start < self._longest and buf[start:] in self._prefixes

    def held_from(self, buf: str, pos: int, start: int) -> int | None:
        """Where an unfinished ``buf`` must be held from when a marker was found at ``start``
        (None: the marker stands). A longer marker may be beginning before it, still being
        written, with this one inside it (``Action: ```json`` whose ``Action: ``` `` is read
        so far holds a complete ``` ``` ``` ``); or this marker may grow into a longer one
        (``could_grow``)."""
        at = self._tail(buf, pos, start)  # (holdback's, begun before ``start``: only there can it begin a longer one)
        if at >= 0:
            return at
        return start if self.could_grow(buf, start) else None

    def waits(self, text: str) -> bool:
        """True when ``text`` is all held back, as the start of a marker that may still come
        (a proper prefix of one, holding no other marker after its first character)."""
        return text in self._waiting

    def clear(self, text: str) -> bool:
        """True when no marker can begin in ``text``, and no marker's beginning end it (the
        common case). Most texts hold no character that can begin one: a substring test per
        first character when they are few, else one character-class search (auto's markers
        begin with some ten characters). A text that does is clear still when no marker's
        first two characters are in it, nor a first character at its end (the ``f`` of
        "for", the ``<`` of ``3 < 4``)."""
        firsts = self._firsts
        if len(firsts) > 3:
            if self._first_re.search(text) is None:
                return True
        else:
            for first in firsts:
                if first in text:
                    break
            else:
                return True
        return text[-1] not in firsts and self._opening.search(text) is None

    def holdback(self, buf: str, pos: int) -> int:
        """Length of the longest tail of ``buf[pos:]`` that is a proper prefix of a marker."""
        at = self._tail(buf, pos, len(buf))
        return len(buf) - at if at >= 0 else 0

    def _tail(self, buf: str, pos: int, end: int) -> int:
        """Where the longest tail of ``buf[pos:]`` that begins a marker (or is one) starts, when
        it starts before ``end``; -1 when none does. Each place in the tail where a marker's
        first character stands, from the earliest, is tried by one set lookup (one pattern of
        every marker's every beginning, anchored at the end, backtracked through all of them at
        each such place: several microseconds)."""
        heads, first = self._heads, self._first_re.search
        found = first(buf, max(pos, len(buf) - self._longest + 1), end)
        while found is not None:
            at = found.start()
            if buf[at:] in heads:
                return at
            found = first(buf, at + 1, end)
        return -1


def _group_searches(ordered: list[str], firsts: str) -> tuple[tuple[str, int, Any, int, Any], ...]:
    """``MarkerSet._searches``: one alternation per first character. A group whose first
    character is a letter or digit (common in prose: the ``f`` of ``functools[``) and whose
    markers all begin with the same text holding, after its first character, another group's
    first character that is neither (the ``[``), is folded into that group: the other group's
    alternation also matches that character where the text before it is the folded markers'
    beginning (a look-behind, which names the branch ``fold``), so one scan finds both and the
    folded group's own scan, for a character met in most lines of prose, is spared."""
    groups = {c: [m for m in ordered if m[0] == c] for c in firsts}
    folds: dict[str, tuple[int, str]] = {}  # anchor character -> (its place, the folded markers' beginning)
    folded = set()
    for c, group in groups.items():
        if not c.isalnum():
            continue
        lead = _common_prefix(group)
        k = next((i for i in range(1, len(lead)) if lead[i] in groups and not lead[i].isalnum()), 0)
        if k and lead[k] not in folds:
            folds[lead[k]] = (k, lead[: k + 1])
            folded.add(c)
    searches = []
    for c, group in groups.items():
        if c in folded:
            continue  # (found by its anchor's group)
        own = re.compile(_trie_pattern(group))
        if c not in folds:  # (found where its markers' common beginning is: ``` not ` in prose)
            lead = _common_prefix(group)
            searches.append((lead, len(lead) - 1, own.search, 0, None))
            continue
        k, behind = folds[c]
        rest = sorted({m[1:] for m in group if len(m) > 1}, key=len, reverse=True)
        after = _trie_pattern(rest) if rest else ""
        after = f"(?:{after})?" if len(min(group, key=len)) == 1 else after
        source = f"{re.escape(c)}(?:(?<={re.escape(behind)})(?P<fold>)|{after})"
        searches.append((c, k, re.compile(source).search, k, own))
    return tuple(searches)


def _common_prefix(markers: list[str]) -> str:
    """The longest text every one of ``markers`` begins with."""
    first, last = min(markers), max(markers)
    n = next((i for i, (a, b) in enumerate(zip(first, last)) if a != b), min(len(first), len(last)))
    return first[:n]


def _trie_pattern(markers: list[str]) -> str:
    """One regex for the markers with shared prefixes factored out (``<tool_call>`` and
    ``<tool>`` share ``<tool``), so the engine tries each character once rather than once per
    marker; where a marker is a prefix of another, the longer one wins, as before."""
    trie: dict[str, dict] = {}
    for marker in markers:
        node = trie
        for ch in marker:
            node = node.setdefault(ch, {})
        node[""] = {}  # a marker ends here

    def build(node: dict[str, dict]) -> str:
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return "(?:" + "|".join(re.escape(ch) + build(child) for ch, child in sorted(trie.items())) + ")"


def alternation(markers: tuple[str, ...]) -> str:
    """One regex (source text) that matches any of ``markers``, at least one, with their shared
    prefixes factored out; for a pattern compiled with flags of its own (IGNORECASE, ...)."""
    return _trie_pattern(sorted(set(markers), key=len, reverse=True))


@lru_cache(maxsize=256)
def marker_set(markers: tuple[str, ...]) -> MarkerSet:
    """A shared MarkerSet for these markers (building one compiles a regex)."""
    return MarkerSet(markers)


_WS = re.compile(r"[ \t\n\r]*")


def cut_off(buf: str, pos: int, marker: str) -> bool:
    """True when ``buf[pos:]`` is a prefix of ``marker`` (the marker cut off by the end of
    ``buf``); costs no more than the marker's length, however long ``buf`` is."""
    return len(buf) - pos <= len(marker) and marker.startswith(buf[pos:])


def opens_more(tail: str, openers: tuple[str, ...], closers: tuple[str, ...]) -> bool:
    """True when ``tail``, the output's last characters, can only be the start of an opener
    (another argument coming), not of a closer: a call cut there has incomplete arguments."""
    return bool(tail) and any(o.startswith(tail) for o in openers) and not any(c.startswith(tail) for c in closers)


def skip_ws(buf: str, pos: int) -> int:
    """The position of the first non-whitespace character at or after ``pos``."""
    return _WS.match(buf, pos).end()  # type: ignore[union-attr]  # a starred pattern always matches


@lru_cache(maxsize=64)
def opening(texts: tuple[str, ...]) -> re.Pattern[str]:
    """What matches at a position where, after white space (``skip_ws``'s), one of ``texts``
    begins, or could still begin (the rest is a proper prefix of one, or nothing at all)."""
    heads = sorted({t[:k] for t in texts for k in range(1, len(t))}, key=len, reverse=True)
    growing = "|".join(map(re.escape, heads))
    return re.compile(f"{_WS.pattern}(?:{'|'.join(map(re.escape, texts))}|(?:{growing})?\\Z)")


def match_at(buf: str, pos: int, options: tuple[str, ...], final: bool = False) -> str | None:
    """The option that ``buf`` starts with at ``pos``; "" when more text is needed (the rest of
    ``buf`` is a proper prefix of an option, or a longer option may still match); None when
    nothing can match."""
    longest, pattern, beginnings = _options_of(options)
    rest = buf[pos : pos + longest]
    if not final and rest in beginnings:
        return ""
    found = pattern.match(rest)
    return found.group() if found is not None else None


@lru_cache(maxsize=512)
def _options_of(options: tuple[str, ...]) -> tuple[int, re.Pattern[str], frozenset[str]]:
    """``match_at``'s view of ``options``: the longest's length, one pattern that matches the
    longest option a text starts with, and every proper beginning of an option ("" included)."""
    beginnings = frozenset(o[:k] for o in options for k in range(len(o)))
    written = tuple(o for o in options if o)
    source = alternation(written) if written else ""
    if written and "" in options:
        source += "|"  # (the empty option matches where no other does)
    return max(map(len, options)), re.compile(source), beginnings


def read_label(buf: str, pos: int, stop: str, limit: int = 256) -> tuple[str, int, bool | None]:
    """Read a short label (a name or key) up to the ``stop`` character.

    Returns the text read, the position after it, and True when ``stop`` was reached (the
    position is then past it), None when more text is needed, False when the label is
    implausible (too long, or crosses a line break or a tag).
    """
    end = buf.find(stop, pos, pos + limit + 1)
    text = buf[pos : end if end != -1 else pos + limit + 1]
    if "<" in text or "\n" in text.strip("\n"):
        return text, pos, False
    if end != -1:
        return text, end + len(stop), True
    return text, pos, None if len(text) <= limit else False
