"""Body kind: XML invoke/parameter elements whose names are attributes, values raw text.

    <minimax:tool_call>
    <invoke name="get_weather">
    <parameter name="city">Paris</parameter>
    </invoke>
    </minimax:tool_call>

MiniMax-M2, DeepSeek V3.2/V4 (DSML), Step-3 (steptml) and MiniCPM5 write this shape; they differ
in tag spellings, which a dialect declares in an ``AttrTags``. Attribute values may be double-,
single- or un-quoted; unknown attributes are ignored. Values are raw text typed by the tool
schema (``RawValue``), streamed at once when they can only be strings.

Per-dialect options: ``string_attr`` (DSML's ``string="true|false"``: the value's type when the
schema says nothing), ``unwrap`` (a lone ``arguments``/``input`` parameter holding the whole
arguments object, unwrapped when the schema has no such key), ``json_body`` (an invoke holding
one JSON object instead of parameters), ``cdata`` (``<![CDATA[...]]>`` values), ``skip``
(tokens allowed around invokes: Step-3's per-call markers), ``tag_end``/``name_attr``/``key_attr``
(Kimi K3's XTML: an opening tag ends at ``<|sep|>``, names sit in ``tool=`` and ``key=``).
Names and keys are XML-unescaped. Tolerated: a missing parameter close
(the value ends at the next parameter or at the invoke close), a missing invoke or block close,
self-closing ``<invoke name="x"/>``. A block opened by a bare invoke tag begins its call only
once a parameter or the close tag confirms it, so prose mentioning the tag stays prose. A
duplicate parameter, a parameter without a name or an unreadable tag fails the block.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from . import attrwhole
from .json import stream_arguments
from .xml import GAP, NamedCall, followed
from ..jsonscan import JsonScanner
from ..markers import MarkerSet, marker_set, match_at, opens_more, skip_ws
from ..rawvalue import RawValue, end_typed
from ..dialect import DONE, EMPTY_SECTION, FAIL, MORE, TRUNCATED, UNCLOSED_AT_END, CallSink, Outcome, to_json


_ATTR = re.compile(r"""\s+([\w:.-]+)\s*=\s*(?:"([^"<>]*)"|'([^'<>]*)'|([^\s"'<>=/]+))""")
_LIMIT = 512  # longest opening tag read
_CDATA = ("<![CDATA[", "]]>")
_STRING = {"type": "string"}


@dataclass(frozen=True)
class AttrTags:
    """The tag spellings (each a tuple of accepted variants, canonical first) of one dialect."""

    invoke: tuple[str, ...] = ("<invoke",)  # attributes follow, then ">" or "/>"
    invoke_close: tuple[str, ...] = ("</invoke>",)
    param: tuple[str, ...] = ("<parameter",)
    param_close: tuple[str, ...] = ("</parameter>",)
    block_close: tuple[str, ...] = ()  # none: every invoke is a block of its own
    skip: tuple[str, ...] = ()
    string_attr: str = ""
    string_value: str = "true"  # the string_attr value that makes a value a string
    unwrap: tuple[str, ...] = ()
    json_body: bool = False
    cdata: bool = False
    tag_end: str = ">"  # what ends an opening tag (Kimi K3: its <|sep|> special token)
    name_attr: str = "name"  # the invoke's attribute holding the function name
    key_attr: str = "name"  # the parameter's attribute holding its key
    # A parameter close ends a value only where the layout places one (``CloseByLayout``): Kimi K3.
    close_by_layout: bool = False
    value_ends: MarkerSet = field(init=False, repr=False)
    # How a block is read whole (``attrwhole``); None for tags whose options change the reading
    whole: attrwhole.Patterns | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ends = self.param_close + tuple(f"{p} {self.key_attr}=" for p in self.param) + self.invoke_close
        object.__setattr__(self, "value_ends", marker_set(ends))
        object.__setattr__(self, "whole", attrwhole.Patterns(self) if attrwhole.plain_tags(self) else None)


_GAP = re.compile(rf"\s{{0,{GAP}}}")  # white space a layout may put after a parameter close


class CloseByLayout:
    """Which end tags end one value (a ``rawvalue.Placement``): a parameter close only when
    what follows it, after at most 16 white-space characters, is the next parameter's opening,
    the call's or the block's close, the next call or the end of output; anywhere else (a value
    that quotes the close tag: code about the format) it is value text. The other end tags (a
    missing close) end the value as before. The look-ahead is bounded: linear in the value."""

    __slots__ = ("_close", "_next")

    def __init__(self, tags: AttrTags) -> None:
        self._close = frozenset(tags.param_close)
        self._next = tags.param + tags.invoke_close + tags.block_close + tags.invoke

    def ends(self, buf: str, found: re.Match[str], before: str, final: bool, base: int) -> bool | None:
        if found.group() not in self._close:
            return True
        return followed(buf, found.end(), self._next, final, _GAP, long_gap=False)


def parse_attrs(text: str) -> tuple[dict[str, str], bool] | None:
    """The attributes of an opening tag's text (after its name, before ``>``) and whether the
    tag closes itself; None when the text is not a list of attributes."""
    attrs: dict[str, str] = {}
    pos = 0
    while (m := _ATTR.match(text, pos)) is not None:
        attrs[m.group(1)] = next(g for g in m.groups()[1:] if g is not None)
        pos = m.end()
    tail = text[pos:].strip()
    return (attrs, tail == "/") if tail in ("", "/") else None


def _partial_suffix(text: str, marker: str) -> int:
    """Length of the longest tail of ``text`` that begins ``marker`` (it may still complete it)."""
    return next((k for k in range(min(len(marker) - 1, len(text)), 0, -1) if marker.startswith(text[-k:])), 0)


class _ValueSink:
    """What a RawValue reports to: the call's sink, with the string type supplied when the
    schema says nothing and the dialect's attribute says string, or with the value captured
    instead of sent (a parameter that may be an arguments wrapper)."""

    def __init__(self, sink: CallSink, string: bool, capture: list[str] | None) -> None:
        self._sink, self._string, self.captured = sink, string, capture

    def param_schema(self, key: str) -> dict[str, Any] | None:
        schema = self._sink.param_schema(key)
        return _STRING if schema is None and self._string else schema

    def coerce(self, key: str, raw: str) -> Any:
        return self._sink.coerce(key, raw)

    def args(self, text: str, value: Any = None, string: bool = False) -> None:
        if self.captured is not None:
            self.captured.append(text)
        else:
            self._sink.args(text, value, string)


class _S:  # states (plain ints: an Enum member's lookup costs several times as much)
    LEAD = 0  # inside the block, before an invoke
    ATTRS = 1  # reading an opening tag's attributes
    PARAMS = 2  # inside an invoke, between parameters
    VALUE_START = 3
    VALUE = 4
    CDATA_END = 5  # after "]]>": the parameter's close tag must follow
    JSON = 6  # an invoke's JSON object body
    AFTER = 7  # after an invoke's close tag


class AttrXmlBody(NamedCall):
    """Read a block of attribute-named XML invokes; see the module docstring."""

    def __init__(self, sink: CallSink, opened_by: str, *, tags: AttrTags) -> None:
        self.reason = ""
        self._sink = sink
        self._tags = tags
        bare = next((t for t in tags.invoke if opened_by.startswith(t)), None)
        self._bare = bare is not None
        self._state = _S.ATTRS if bare is not None else _S.LEAD
        self._tag_is_invoke = True  # what the ATTRS state is reading
        self._attr_prefix = opened_by[len(bare):] if bare is not None else ""
        self._name = ""  # read, not yet begun
        self._in_call = False
        self._calls = 0
        self._params = 0
        self._keys: set[str] = set()
        self._json_done = False
        self._string = False
        self._key = ""
        self._value: RawValue | None = None
        self._vsink: _ValueSink | None = None
        self._wrapped: tuple[str, str, dict[str, Any]] | None = None  # key, JSON text, object
        self._scanner: JsonScanner | None = None
        # (Body.hold_until: a short block comes whole)
        self.hold_until = tags.block_close if tags.block_close and not self._bare else tags.invoke_close
        self._plain = tags.whole is not None  # (a block written plainly is read whole)

    def whole_reader(self) -> Any:
        """How a block this body reads is read whole (``attrwhole.read_whole``; its raw values
        are typed by the parser); None for a bare invoke or tags whose options change the reading."""
        return None if self._bare or not self._plain else partial(attrwhole.read_whole, self._tags)

    def _whole(self, buf: str, pos: int) -> tuple[int, Outcome] | None:
        """The invoke whose block is all in ``buf``, written plainly (``attrwhole``): begun,
        typed and ended at once, as ``read_plain`` reads it (one piece of arguments)."""
        read = attrwhole.read_params(self._tags, buf, pos)
        if read is None:
            return None
        outcome = self._confirm()
        if outcome is not None:
            return pos, outcome
        end_typed(self._sink, read[0])
        self._in_call, self._calls = False, self._calls + 1
        self._sink.keep(read[1])  # (as after an invoke's close: the calls so far stand)
        return read[2], DONE

    def fast(self, text: str) -> str | None:
        """The arguments fragment for ``text`` when it only continues a streamed value."""
        if self._value is not None and self._vsink is not None and self._vsink.captured is None:
            return self._value.fast(text)
        if self._scanner is not None and self._scanner.in_plain_string(text):
            return text
        return None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        while True:
            state = self._state
            if state == _S.VALUE:
                pos, outcome = self._read_value(buf, pos, final)
            elif state == _S.VALUE_START:
                pos, outcome = self._start_value(buf, pos, final)
            elif state == _S.ATTRS:
                pos, outcome = self._read_attrs(buf, pos, final)
            elif state == _S.JSON:
                pos, outcome = self._read_json(buf, pos, final)
            elif state == _S.AFTER:
                pos, outcome = self._after(buf, pos, final)
            else:
                pos, outcome = self._tag(buf, skip_ws(buf, pos), final)
            if outcome is not None:
                return pos, outcome

    # ------------------------------------------------------------------ tags

    def _tag(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        tags, state = self._tags, self._state
        if state == _S.PARAMS and self._json_done:
            options = tags.invoke_close + tags.block_close
        elif state == _S.PARAMS:
            options = tags.param + tags.invoke_close + tags.block_close
            if tags.json_body and not self._params and buf.startswith("{", pos) and not self._wrapped:
                return pos, self._start_json()
        elif state == _S.CDATA_END:
            options = tags.param_close
        else:
            options = tags.invoke + tags.block_close + tags.skip
        found = match_at(buf, pos, options) if pos < len(buf) else ""
        if found == "":
            return (pos, MORE) if not final else (len(buf), self._at_end(buf[pos:]))
        if found is None:
            return pos, self._fail("unexpected text in a call block")
        pos += len(found)
        if found in tags.skip:
            return pos, None
        if found in tags.invoke or found in tags.param:
            self._state, self._tag_is_invoke, self._attr_prefix = _S.ATTRS, found in tags.invoke, ""
            return pos, None
        if found in tags.param_close:  # after a CDATA value
            self._state = _S.PARAMS
            return pos, None
        if found in tags.invoke_close:
            self._state = _S.AFTER
            return pos, self._confirm() or self._end_call()
        if state == _S.PARAMS:  # the block closed inside an invoke
            self._sink.repaired(f"missing {tags.invoke_close[0]}")
            return pos, self._confirm() or self._end_call() or DONE
        if not self._calls:
            self._sink.repaired(EMPTY_SECTION)  # no call, and no markup left in content
        return pos, DONE

    def _after(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        """After an invoke: another invoke, or the block's close; else content resumes here."""
        self._sink.keep(pos)  # the calls so far stand: a later failure returns only what follows
        tags = self._tags
        if self._bare and not tags.block_close:
            return pos, DONE
        at = skip_ws(buf, pos)
        options = tags.block_close + tags.skip if self._bare else tags.invoke + tags.block_close + tags.skip
        found = match_at(buf, at, options) if at < len(buf) else ""
        if found == "" and not final:
            return pos, MORE
        if not found:
            if not self._bare:
                self._sink.repaired(UNCLOSED_AT_END if final and at == len(buf) else f"missing {tags.block_close[0]}")
            return pos, DONE
        if found in tags.block_close:
            return at + len(found), DONE
        return self._tag(buf, at, final)

    def _read_attrs(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        tag_end = self._tags.tag_end
        end = buf.find(tag_end, pos, pos + _LIMIT)
        text = buf[pos : end if end != -1 else pos + _LIMIT]
        seen = text if end != -1 else text[: len(text) - _partial_suffix(text, tag_end)]
        if "<" in seen or "\n" in text or (end == -1 and len(text) >= _LIMIT):
            return pos, self._fail("malformed tag in a call block")
        if end == -1:
            return pos, (self._fail("truncated") if final else MORE)
        parsed = parse_attrs(self._attr_prefix + text)
        attr = self._tags.name_attr if self._tag_is_invoke else self._tags.key_attr
        name = html.unescape(parsed[0].get(attr, "")).strip() if parsed else ""
        if parsed is None or not name:
            return pos, self._fail("malformed tag in a call block")
        pos = end + len(tag_end)
        if self._tag_is_invoke:
            self._name, self._params, self._keys, self._json_done = name, 0, set(), False
            self._state = _S.PARAMS
            if parsed[1]:  # <invoke name="x"/>
                self._state = _S.AFTER
                return pos, self._confirm() or self._end_call()
            if self._bare:
                return pos, None
            return (self._whole(buf, pos) if self._plain else None) or (pos, self._confirm())
        if parsed[1] or name in self._keys:
            return pos, self._fail("duplicate parameter" if name in self._keys else "malformed tag in a call block")
        self._keys.add(name)
        self._string = parsed[0].get(self._tags.string_attr) == self._tags.string_value
        return pos, self._open_param(name)

    # ------------------------------------------------------------------ parameters

    def _open_param(self, key: str) -> Outcome | None:
        outcome = self._confirm() or self._flush_wrapped()
        if outcome is not None:
            return outcome
        capture = key in self._tags.unwrap and not self._params and self._sink.param_schema(key) is None
        if not capture:
            self._sink.args(("{" if not self._params else ", ") + to_json(key) + ": ")
            self._params += 1
        self._vsink = _ValueSink(self._sink, self._string, [] if capture else None)
        self._key = key
        self._state = _S.VALUE_START
        return None

    def _start_value(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        assert self._vsink is not None
        ends = self._tags.value_ends
        if self._tags.cdata:
            rest = buf[pos : pos + len(_CDATA[0])]
            if not final and len(rest) < len(_CDATA[0]) and _CDATA[0].startswith(rest):
                return pos, MORE
            if rest == _CDATA[0]:
                pos += len(rest)
                ends = marker_set((_CDATA[1],))
        placement = CloseByLayout(self._tags) if self._tags.close_by_layout and ends is self._tags.value_ends else None
        self._value = RawValue(self._vsink, self._key, ends, False, placement)  # type: ignore[arg-type]
        self._state = _S.VALUE
        return pos, None

    def _read_value(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        assert self._value is not None and self._vsink is not None
        pos, end = self._value.feed(buf, pos, final)
        if end is None:
            return pos, MORE if not final else self._fail("truncated")
        self._value, marker, tags = None, end.group(), self._tags
        outcome = self._close_value()
        if outcome is not None:
            return pos, outcome
        if marker == _CDATA[1]:
            self._state = _S.CDATA_END
        elif marker in tags.param_close:
            self._state = _S.PARAMS
        elif marker in tags.invoke_close:
            self._sink.repaired(f"missing {tags.param_close[0]}")
            self._state = _S.AFTER
            return pos, self._end_call()
        else:  # the next parameter's opening tag
            self._sink.repaired(f"missing {tags.param_close[0]}")
            self._state, self._tag_is_invoke = _S.ATTRS, False
            self._attr_prefix = marker[next(len(p) for p in tags.param if marker.startswith(p)) :]
        return pos, None

    def _close_value(self) -> Outcome | None:
        """A captured value (a possible arguments wrapper) waits for the next tag when it holds
        an object; anything else is sent as an ordinary parameter."""
        assert self._vsink is not None
        captured, self._vsink = self._vsink.captured, None
        if captured is None:
            return None
        text = "".join(captured)
        value = json.loads(text)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                pass
        if isinstance(value, dict):
            self._wrapped = (self._key, text, value)
            return None
        self._wrapped = (self._key, text, {})
        return self._flush_wrapped()

    def _flush_wrapped(self) -> Outcome | None:
        """Another parameter follows a captured one: it was an ordinary parameter after all."""
        if self._wrapped is not None:
            key, text, _ = self._wrapped
            self._sink.args("{" + to_json(key) + ": " + text)
            self._params, self._wrapped = 1, None
        return None

    def _start_json(self) -> Outcome | None:
        outcome = self._confirm()
        if outcome is not None:
            return outcome
        self._scanner = JsonScanner(self._sink.lenient)
        self._state = _S.JSON
        return None

    def _read_json(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        scanner = self._scanner
        assert scanner is not None
        pos, outcome = stream_arguments(self._sink, scanner, buf, pos, final, self._fail)
        if outcome is not None:
            return pos, outcome
        self._scanner, self._json_done, self._state = None, True, _S.PARAMS
        return pos, None

    # ------------------------------------------------------------------ calls

    def _end_call(self) -> Outcome | None:
        if self._wrapped is not None:
            key, _, value = self._wrapped
            self._sink.repaired(f"arguments unwrapped from the {key!r} parameter")
            self._sink.args(to_json(value))
            self._wrapped = None
        elif self._params:
            self._sink.args("}")
        self._sink.end()
        self._in_call, self._params = False, 0
        self._calls += 1
        return None

    def _at_end(self, tail: str = "") -> Outcome:
        """The output ended between tags: a call with complete arguments is recovered, unless
        what the output ends with can only begin another parameter or invoke."""
        tags = self._tags
        if opens_more(tail, tags.param + tags.invoke, tags.invoke_close + tags.block_close + tags.param_close):
            return self._fail(TRUNCATED)
        if self._state == _S.AFTER:
            return DONE
        if self._state == _S.PARAMS and (self._params or self._wrapped or self._json_done):
            self._sink.repaired(UNCLOSED_AT_END)
            self._end_call()
            return DONE
        if self._state == _S.LEAD and self._calls:
            self._sink.repaired(UNCLOSED_AT_END)
            return DONE
        return self._fail("truncated")

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL
