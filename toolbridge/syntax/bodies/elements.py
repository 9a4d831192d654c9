"""Body kind: invokes whose arguments are nested elements named by their tags (MiniMax M3).

    ]<]minimax[>[<tool_call>
    ]<]minimax[>[<invoke name="search">
    ]<]minimax[>[<query>tide tables]<]minimax[>[</query>
    ]<]minimax[>[<filters>]<]minimax[>[<lang>en]<]minimax[>[</lang>]<]minimax[>[</filters>
    ]<]minimax[>[</invoke>
    ]<]minimax[>[</tool_call>

Every tag is led by a literal marker (``ElementTags.marker``), so a value is everything up to the
next marker: it may hold any text, angle brackets included. An element holding child elements is
an object, or an array when its schema says so or when every child is an ``<item>``; a name
repeated among siblings becomes a list; text mixed with children goes under ``$text``. Leaves are
raw text typed by the schema (``tools.coerce``; without one, JSON when it parses, else the text).

Strategy: the invoke's elements are read into a small tree (text kept as the model's slices,
never rescanned); at the invoke's close the tree is typed once and the arguments are sent in one
fragment: a name may repeat until the close, so no earlier fragment could be final. The call
begins at the invoke tag, so its name streams at once.

Tolerated and reported: a tag without its marker where only a tag can stand (between elements,
around invokes) and an element's own closing tag without it inside its text; closing tags left
out (an enclosing close, the invoke's or the block's close ends what is open); a missing block
close. An invoke whose elements are all closed when the output ends is recovered. Text outside
elements, a stray or unreadable tag, and an element cut off by the end of output are not calls.
Nested ``$ref`` schemas resolve against the parameter's own schema (best effort).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

from .attrxml import parse_attrs
from ..markers import marker_set, skip_ws
from ..dialect import DONE, EMPTY_SECTION, FAIL, MORE, UNCLOSED_AT_END, CallSink, Outcome, to_json
from ...tools import coerce, deref
from ...limits import MAX_DEPTH


_LIMIT = 512  # longest tag read
_NAME = re.compile(r"[^\s<>/=\"']{1,256}")
_TAG_MORE = ""  # what _tag_at returns while a tag may still complete


@dataclass(frozen=True)
class ElementTags:
    """The marker and the structural tag names of one dialect."""

    marker: str
    block: str = "tool_call"
    invoke: str = "invoke"
    item: str = "item"
    text_key: str = "$text"


@dataclass
class _Elem:
    name: str
    parts: list[str] = field(default_factory=list)
    children: list[_Elem] = field(default_factory=list)


class _S:  # states (plain ints: an Enum member's lookup costs several times as much)
    LEAD = 0  # inside the block, before the first invoke
    ATTRS = 1  # a bare opener's invoke tag: its attributes up to ">"
    ARGS = 2  # inside an invoke, between its elements
    TEXT = 3  # inside an element
    AFTER = 4  # after an invoke's close


class ElementBody:
    """Read a block of element-argument invokes; see the module docstring."""

    def __init__(self, sink: CallSink, opened_by: str, *, tags: ElementTags) -> None:
        self.reason = ""
        self._sink = sink
        self._tags = tags
        self._bare = opened_by.endswith((tags.invoke, tags.invoke + " "))
        self._state = _S.ATTRS if self._bare else _S.LEAD
        self._stack: list[_Elem] = []
        self._root = _Elem(tags.invoke)
        self._in_call = False
        self._calls = 0
        self._unmarked = False

    def fast(self, text: str) -> str | None:
        return None  # arguments leave once, at the invoke's close

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        while True:
            if self._state == _S.TEXT:
                pos, outcome = self._text(buf, pos, final)
            elif self._state == _S.ATTRS:
                pos, outcome = self._attrs(buf, pos, final)
            else:
                pos, outcome = self._between(buf, skip_ws(buf, pos), final)
            if outcome is not None:
                return pos, outcome

    # ------------------------------------------------------------------ reading

    def _tag_at(self, buf: str, pos: int, final: bool) -> tuple[str | None, int]:
        """The text of the tag at ``pos`` (marker optional) and the position after it; ("", pos)
        while it may still complete, (None, pos) when there is no tag there."""
        marker = self._tags.marker
        at = pos
        if buf.startswith(marker, pos):
            at += len(marker)
        elif marker.startswith(buf[pos : pos + len(marker)]) and not final:
            return _TAG_MORE, pos
        elif not buf.startswith("<", pos):
            return None, pos
        if at >= len(buf):
            return (_TAG_MORE if not final else None), pos
        if buf[at] != "<":
            return None, pos
        end = buf.find(">", at, at + _LIMIT)
        text = buf[at + 1 : end if end != -1 else at + _LIMIT]
        if "<" in text or "\n" in text or (end != -1 and not text.strip()):
            return None, pos
        if end == -1:
            return (_TAG_MORE if not final and len(buf) - at < _LIMIT else None), pos
        return text.strip(), end + 1

    def _note_unmarked(self) -> None:
        if not self._unmarked:
            self._unmarked = True
            self._sink.repaired(f"tag without its {self._tags.marker} marker")

    def _between(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        """Between tags (around invokes, between an invoke's elements): only a tag may come."""
        if pos >= len(buf):
            return pos, (self._at_end() if final else MORE)
        tag, end = self._tag_at(buf, pos, final)
        if tag == _TAG_MORE:
            return pos, MORE
        if self._state == _S.AFTER and not self._continues(tag):
            return self._leave(pos, final)
        if tag is None:
            return pos, self._fail("unexpected text in a call block")
        if not buf.startswith(self._tags.marker, pos):
            self._note_unmarked()
        return end, self._structural(tag)

    def _continues(self, tag: str | None) -> bool:
        t = self._tags
        return tag is not None and (tag == "/" + t.block or tag.split()[0] == t.invoke)

    def _structural(self, tag: str) -> Outcome | None:
        t = self._tags
        if tag == "/" + t.block:
            if self._state == _S.ARGS:
                self._sink.repaired(f"missing </{t.invoke}>")
                self._finish_invoke()
            if not self._calls:
                self._sink.repaired(EMPTY_SECTION)  # no call, and no markup left in content
            return DONE
        if self._state == _S.ARGS:
            if tag == "/" + t.invoke:
                self._finish_invoke()
                return None
            return self._open(tag)
        if tag.split()[0] != t.invoke:
            return self._fail("unexpected tag in a call block")
        return self._begin(tag[len(t.invoke) :])

    def _attrs(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        end = buf.find(">", pos, pos + _LIMIT)
        text = buf[pos : end if end != -1 else pos + _LIMIT]
        if "<" in text or "\n" in text or (end == -1 and (final or len(text) >= _LIMIT)):
            return pos, self._fail("malformed invoke tag")
        if end == -1:
            return pos, MORE
        return end + 1, self._begin(" " + text.strip())

    def _begin(self, attrs: str) -> Outcome | None:
        parsed = parse_attrs(attrs)
        name = html.unescape(parsed[0].get("name", "")).strip() if parsed else ""
        if not name:
            return self._fail("malformed invoke tag")
        why = self._sink.begin(name)
        if why:
            return self._fail(why)
        self._in_call, self._root, self._state = True, _Elem(self._tags.invoke), _S.ARGS
        if parsed and parsed[1]:  # <invoke name="x"/>
            self._finish_invoke()
        return None

    def _open(self, tag: str) -> Outcome | None:
        name = tag.split()[0]
        if name.startswith("/") or _NAME.fullmatch(name) is None:
            return self._fail("unexpected closing tag" if name.startswith("/") else "malformed tag in a call block")
        if len(self._stack) >= MAX_DEPTH:
            return self._fail(f"elements nested deeper than {MAX_DEPTH} levels")
        elem = _Elem(name)
        (self._stack[-1] if self._stack else self._root).children.append(elem)
        self._stack.append(elem)
        self._state = _S.TEXT
        return None

    def _text(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        top = self._stack[-1]
        own_close = f"</{top.name}>"
        ends = marker_set((self._tags.marker, own_close))
        found = ends.search(buf, pos)
        if found is None:
            stop = len(buf) if final else len(buf) - ends.holdback(buf, pos)
            top.parts.append(buf[pos:stop])
            return stop, (self._fail("truncated") if final else MORE)
        top.parts.append(buf[pos : found.start()])
        if found.group() == own_close:
            self._note_unmarked()
            return found.end(), self._close(top.name)
        tag, end = self._tag_at(buf, found.start(), final)
        if tag == _TAG_MORE:
            return found.start(), MORE
        if tag is None:
            return found.start(), self._fail("malformed tag in a call block")
        if not tag.startswith("/"):
            return end, self._open(tag)
        return end, self._close(tag[1:].strip())

    def _close(self, name: str) -> Outcome | None:
        t = self._tags
        open_names = [e.name for e in self._stack]
        if name in open_names:
            depth = len(open_names) - 1 - open_names[::-1].index(name)
            self._unclosed(open_names[depth + 1 :])
            del self._stack[depth:]
            self._state = _S.TEXT if self._stack else _S.ARGS
            return None
        if name not in (t.invoke, t.block):
            return self._fail("mismatched closing tag")
        self._unclosed(open_names)
        self._stack.clear()
        self._state = _S.ARGS
        return self._structural("/" + name)

    def _unclosed(self, names: list[str]) -> None:
        if names:
            self._sink.repaired("missing " + "".join(f"</{n}>" for n in reversed(names)))

    def _leave(self, pos: int, final: bool) -> tuple[int, Outcome]:
        """After an invoke, something else follows: the block ends here."""
        if not self._bare:
            self._sink.repaired(f"missing </{self._tags.block}>")
        return pos, DONE

    # ------------------------------------------------------------------ calls

    def _finish_invoke(self) -> None:
        arguments = _members(self._root, self._sink, None, top=True, tags=self._tags)
        if arguments:
            self._sink.args(to_json(arguments))
        self._sink.end()
        self._in_call, self._state = False, _S.AFTER
        self._calls += 1

    def _at_end(self) -> Outcome:
        if self._state == _S.AFTER:
            if not self._bare:
                self._sink.repaired(UNCLOSED_AT_END)
            return DONE
        if self._state == _S.ARGS and self._root.children:
            self._sink.repaired(UNCLOSED_AT_END)
            self._finish_invoke()
            return DONE
        return self._fail("truncated")

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL


# ---------------------------------------------------------------------- typing the tree


def _says(schema: dict[str, Any] | None, kind: str) -> bool:
    declared = schema.get("type") if schema else None
    return declared == kind or (isinstance(declared, list) and kind in declared)


def _array_only(schema: dict[str, Any] | None) -> bool:
    return _says(schema, "array") and not _says(schema, "object") and not _says(schema, "string")


def _sub(schema: dict[str, Any] | None, key: str, root: dict[str, Any]) -> dict[str, Any] | None:
    """The schema of an object member or an array item (None when the schema does not say)."""
    if not schema:
        return None
    if key == "items":
        sub = schema.get("items")
    else:
        props = schema.get("properties")
        sub = props.get(key) if isinstance(props, dict) else None
    return deref(sub, root) if isinstance(sub, dict) else None


def _value(elem: _Elem, schema: dict[str, Any] | None, root: dict[str, Any], tags: ElementTags) -> Any:
    if not elem.children:
        raw = "".join(elem.parts)
        if schema and not raw.strip() and (_array_only(schema) or _says(schema, "object")):
            return [] if _array_only(schema) else {}
        return coerce(raw, schema, root)
    text = "".join(elem.parts).strip()
    as_list = _array_only(schema) or (not _says(schema, "object") and all(c.name == tags.item for c in elem.children))
    if as_list and not text:
        items = _sub(schema, "items", root)
        return [_value(c, items, root, tags) for c in elem.children]
    return _members(elem, schema, root, top=False, tags=tags)


def _members(elem: _Elem, sink_or_schema: Any, root: dict[str, Any] | None, *, top: bool,
             tags: ElementTags) -> dict[str, Any]:
    """An element's children as an object: a repeated name is a list; mixed text is ``$text``.
    ``top``: the invoke's own elements, whose schemas (and leaf typing) come from the sink."""
    groups: dict[str, list[_Elem]] = {}
    for child in elem.children:
        groups.setdefault(child.name, []).append(child)
    out: dict[str, Any] = {}
    for name, group in groups.items():
        if top:
            schema = sink_or_schema.param_schema(name)
            base = schema or {}
        else:
            schema, base = _sub(sink_or_schema, name, root or {}), root or {}
        single = group[0]
        raw = "" if single.children else "".join(single.parts).strip()
        wrap = _array_only(schema) and bool(raw) and not raw.startswith("[")
        if len(group) == 1 and not wrap:
            if top and raw:
                out[name] = sink_or_schema.coerce(name, "".join(single.parts))
            else:
                out[name] = _value(single, schema, base, tags)
        else:
            items = _sub(schema, "items", base) if _array_only(schema) else schema
            out[name] = [_value(c, items, base, tags) for c in group]
    text = "".join(elem.parts).strip()
    if text and not top:
        out[tags.text_key] = text
    return out
