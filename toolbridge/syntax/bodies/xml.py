"""Body kind: XML function/parameter elements with raw-text values.

    <tool_call>
    <function=NAME>
    <parameter=K>
    V
    </parameter>
    </function>
    </tool_call>

Qwen3-Coder, Qwen3.5/3.6 and their relatives write this; dialects differ only in the tag
spellings, so a dialect declares them in an ``XmlTags`` and shares this reader. Values are
raw text typed by the tool schema (``RawValue``). A value ends only at a tag where the layout
places one (``XmlLayout``), so a value may mention the format's own tags (a patch or a snippet
that writes ``</parameter>`` or ``<parameter=x>`` inline): ``</parameter>`` closes it when what
follows, after white space, is the next parameter, ``</function>``, the block's close or the end
of output. Tolerated: a missing ``</parameter>`` (the value ends at a next parameter tag or a
``</function>`` that starts a line, as the layout places them), ``<function=`` without the
wrapper, several functions in one wrapper, zero-argument calls. When the block was opened by a bare function tag,
the call begins only once its first parameter or its close tag confirms the structure, so prose
that merely mentions the tag does not start a call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from operator import methodcaller

import re

from ..markers import MarkerSet, marker_set, match_at, opens_more, read_label, skip_ws
from ..rawvalue import RawValue, end_typed, plain_end
from ..dialect import (
    DONE,
    FAIL,
    MORE,
    TRUNCATED,
    UNCLOSED_AT_END,
    CallSink,
    Calls,
    Outcome,
    raw_value,
    to_json,
)


@dataclass(frozen=True)
class XmlTags:
    """The tag spellings of one XML dialect."""

    function: tuple[str, str] = ("<function=", ">")
    parameter: tuple[str, str] = ("<parameter=", ">")
    parameter_close: str = "</parameter>"
    function_close: str = "</function>"
    block_close: str = "</tool_call>"
    trim_newline: bool = True
    value_ends: MarkerSet = field(init=False, repr=False)
    plain_head: re.Pattern[str] = field(init=False, repr=False, compare=False)  # the function tag (``read_whole``)
    # A function of n parameters written plainly, then its close and the block's, matched whole
    # by the n-th pattern, its keys and values as groups (``read_params``): each compiled when a
    # block of n parameters is first read (thirteen compiled at import cost some milliseconds)
    plain_blocks: list[re.Pattern[str] | None] = field(init=False, repr=False, compare=False)
    _block_parts: tuple[str, str] = field(init=False, repr=False, compare=False)  # (a parameter, the close)
    layouts: tuple[XmlLayout, XmlLayout] = field(init=False, repr=False, compare=False)  # (wrapped, bare)

    def __post_init__(self) -> None:
        # A value may hold a literal </tool_call> (code about tool calls): only the parameter
        # and function tags end it, and only where the layout places them (``XmlLayout``).
        ends = (self.parameter_close, self.parameter[0], self.function_close)
        object.__setattr__(self, "value_ends", marker_set(ends))
        object.__setattr__(self, "layouts", (XmlLayout(self, False), XmlLayout(self, True)))
        first = re.escape(self.parameter_close[0])
        nl = "\n?" if self.trim_newline else ""
        param = (f"{re.escape(self.parameter[0])}([^<\n{re.escape(self.parameter[1][0])}]{{1,256}}){re.escape(self.parameter[1])}"
                 f"{nl}([^{first}]*+){re.escape(self.parameter_close)}[ \t\r\n]*")
        close = f"{re.escape(self.function_close)}[ \t\r\n]*{re.escape(self.block_close)}"
        object.__setattr__(self, "plain_blocks", [None] * (PLAIN_PARAMS + 1))
        object.__setattr__(self, "_block_parts", (param, close))
        head = f"[ \t\n\r]*{re.escape(self.function[0])}([^<\n{re.escape(self.function[1][0])}]{{1,256}}){re.escape(self.function[1])}"
        object.__setattr__(self, "plain_head", re.compile(head))

    def plain_block(self, n: int) -> re.Pattern[str]:
        """The pattern of a block of ``n`` parameters (``plain_blocks``), compiled now and kept."""
        param, close = self._block_parts
        pattern = self.plain_blocks[n] = re.compile(f"[ \t\r\n]*{param * n}{close}")
        return pattern


PLAIN_PARAMS = 12  # the most parameters of a block ``read_params`` matches with one pattern
# How much white space may stand between a close tag and the tag the layout puts after it (the
# templates write one newline); the look-ahead of a close tag is this plus the next tag.
GAP = 16
_GAP = re.compile(f"[ \t\r\n]{{0,{GAP}}}")


class XmlLayout:
    """Where the layout places the tags that end a value (a ``rawvalue.Placement``): a tag found
    anywhere else is value text. ``</parameter>`` ends a value when the next parameter,
    ``</function>`` or the block's close follows it (after up to ``GAP`` characters of white
    space; a longer run of it, or the end of output, counts too). Without that close, a next
    parameter tag ends the value when it starts a line, and so does a ``</function>`` that
    starts a line and is followed by the block's close, another function or the end (in a block
    opened by a bare function tag, by anything). The look-ahead is at most ``GAP`` plus the
    longest tag, so a held tag is short."""

    def __init__(self, tags: XmlTags, bare: bool) -> None:
        self._open, self._close = tags.parameter[0], tags.parameter_close
        self._after_close = (tags.parameter[0], tags.function_close, tags.block_close)
        self._after_function = (tags.block_close, tags.function[0])
        self._bare = bare

    def ends(self, buf: str, found: re.Match[str], before: str, final: bool, base: int) -> bool | None:
        tag = found.group()
        if tag == self._close:
            return followed(buf, found.end(), self._after_close, final)
        if before != "\n":
            return False  # (a tag that stands for a missing close starts a line)
        if tag == self._open or self._bare:
            return True
        return followed(buf, found.end(), self._after_function, final)  # </function>


def followed(buf: str, at: int, tags: tuple[str, ...], final: bool, space: re.Pattern[str] = _GAP,
             long_gap: bool = True) -> bool | None:
    """Whether ``buf`` goes on at ``at`` with one of ``tags`` after white space (``space``, at
    most ``GAP`` characters), or with white space to the end of output, or (``long_gap``) with
    ``GAP`` characters of it; None while that cannot be told yet."""
    gap = space.match(buf, at).end()  # type: ignore[union-attr]  # (a bounded star always matches)
    if long_gap and gap - at >= GAP:
        return True
    if gap == len(buf):
        return True if final else None
    found = match_at(buf, gap, tags)
    if found == "":
        return True if final else None  # (the output cut inside the tag: its end will say)
    return found is not None


_SPACE = re.compile(r"[ \t\r\n]*")  # (what ``followed`` counts as the gap, unbounded)

Pairs = list[tuple[str, str]]
SHORT_BLOCK = 512  # the longest block ``read_params`` matches with one pattern (a failed try reads it all)
_UNTRAIL = methodcaller("removesuffix", "\n")  # (a value's trailing newline, taken off at C speed)


def read_params(tags: XmlTags, text: str, pos: int) -> tuple[Pairs, int] | None:
    """A wrapped call's parameters from ``pos`` (after its function tag) to the end of its
    block, when written as the templates write them: each value closed by its close tag, no
    value holding a parameter or function tag (so each value ends at its first close tag, where
    the layout places it), no key twice, one function in the block. The raw values (trimmed as
    ``RawValue`` trims them) and the position after the block's close; None for anything else
    (then it is read piece by piece). ``feed`` reads a whole block so, and ``read_plain`` too."""
    p_open, p_stop = tags.parameter
    p_close, f_close = tags.parameter_close, tags.function_close
    # A short block's parameters (as many as its close tags up to its function's close) all
    # written plainly: matched at once (``plain_blocks``), the same reading as the loop's.
    end = text.find(f_close, pos, pos + SHORT_BLOCK)
    if end >= 0 and (n := text.count(p_close, pos, end)) <= PLAIN_PARAMS:
        block = (tags.plain_blocks[n] or tags.plain_block(n)).match(text, pos)
        if block is not None:
            found = block.groups()
            keys = list(map(str.strip, found[::2]))
            pairs = list(zip(keys, map(_UNTRAIL, found[1::2]) if tags.trim_newline else found[1::2]))
            return (pairs, block.end()) if len(set(keys)) == n and "" not in keys else None
    first = p_close[0]  # (what every tag begins with)
    trim = tags.trim_newline
    pairs: Pairs = []
    pos = skip_ws(text, pos)
    after, keys = (p_open, f_close), set()  # (what may follow a close tag; the keys read)
    while text.startswith(p_open, pos):
        # The common parameter (a short one-line key, a value with no tag character, its
        # close: ``plain_blocks``' parameter) found at C speed, its value not read by the
        # pattern engine; the same reading as below, which reads the rest.
        at = pos + len(p_open)
        end = text.find(first, at)
        stop = text.find(p_stop, at, end)
        key = text[at:stop]
        if 0 < stop - at <= 256 and "\n" not in key and text.startswith(p_close, end):
            start = stop + len(p_stop)
            start += trim and text.startswith("\n", start)
        else:
            key, pos, complete = read_label(text, at, p_stop)
            end = plain_end(text, pos, p_close, after) if complete else -1
            if end < 0:
                return None
            start = pos + (trim and text.startswith("\n", pos, end))
        key = key.strip()
        if not key or key in keys:
            return None
        keys.add(key)
        stop = end - (trim and end > start and text[end - 1] == "\n")  # (its trailing newline)
        pairs.append((key, text[start:stop]))
        pos = _SPACE.match(text, end + len(p_close)).end()  # type: ignore[union-attr]
        if not text.startswith(after, pos):
            return None  # (the close tag would be value text, or ends the block unusually)
    if not text.startswith(f_close, pos):
        return None
    pos = skip_ws(text, pos + len(f_close))
    return (pairs, pos + len(tags.block_close)) if text.startswith(tags.block_close, pos) else None


def read_whole(tags: XmlTags, text: str, pos: int) -> tuple[str, None, Pairs, int, bool] | None:
    """A wrapped block from ``pos`` (after its opening marker) read whole (``read_params``):
    the function's name, None for arguments still to type, the raw values, where it ends,
    and False (no text whose layout is known: ``json.read_whole``)."""
    head = tags.plain_head.match(text, pos)  # (skip_ws, the tag and read_label's common case)
    if head is not None:
        name, pos, complete = head[1], head.end(), True
    else:
        pos = skip_ws(text, pos)
        f_open, f_stop = tags.function
        if not text.startswith(f_open, pos):
            return None
        name, pos, complete = read_label(text, pos + len(f_open), f_stop)
    read = read_params(tags, text, pos) if complete and name.strip() else None
    return None if read is None else (name.strip(), None, read[0], read[1], False)


def render_xml(tags: XmlTags, calls: Calls, wrapper: tuple[str, str] = ("<tool_call>", "</tool_call>")) -> str:
    """Calls as XML-style templates write them: each function in its own wrapper."""
    nl = "\n" if tags.trim_newline else ""
    blocks = []
    for name, args in calls:
        params = "".join(f"{tags.parameter[0]}{k}{tags.parameter[1]}{nl}{raw_value(v)}{nl}{tags.parameter_close}\n"
                         for k, v in args.items())
        blocks.append(f"{wrapper[0]}\n{tags.function[0]}{name}{tags.function[1]}\n{params}"
                      f"{tags.function_close}\n{wrapper[1]}")
    return "\n".join(blocks)


class _S:  # states (plain ints: an Enum member's lookup costs several times as much)
    LEAD = 0  # inside the wrapper, before a function tag
    NAME = 1
    PARAMS = 2  # between parameters
    KEY = 3
    VALUE = 4
    AFTER = 5  # after a function's close tag


class NamedCall:
    """What the XML-like bodies share: a call begins once its name has been read and accepted."""

    _sink: CallSink
    _name: str
    _in_call: bool
    _unwrapped = False  # the block's opening tag was not written: reported when the call begins
    _missing_tag = ""

    def _fail(self, why: str) -> Outcome: ...

    def _confirm(self) -> Outcome | None:
        """Begin the call whose name was read, unless it already began."""
        if self._in_call or not self._name:
            return None
        why = self._sink.begin(self._name)
        self._name = ""
        if why:
            return self._fail(why)
        self._in_call = True
        if self._unwrapped:
            self._unwrapped = False
            self._sink.repaired(f"call without the {self._missing_tag} before it")
        return None


class XmlBody(NamedCall):
    """Read a block of XML function elements; see the module docstring. A short wrapped block
    is held whole until its close tag comes (``Body.hold_until``)."""

    def __init__(self, sink: CallSink, opened_by: str, *, tags: XmlTags) -> None:
        self.reason = ""
        self._sink = sink
        self._tags = tags
        self._bare = opened_by == tags.function[0]
        self._unwrapped = self._bare  # reported once, when the first call begins
        self._missing_tag = tags.block_close.replace("/", "")
        self._state = _S.NAME if self._bare else _S.LEAD
        self._name = ""  # read but not yet begun (bare blocks wait for confirmation)
        self._in_call = False
        self._params = 0
        self._value: RawValue | None = None
        self.hold_until = () if self._bare else (tags.block_close,)

    def whole_reader(self) -> Callable[[str, int], tuple[str, None, Pairs, int, bool] | None] | None:
        """How a block this body reads is read whole (``read_whole``; its raw values are typed
        by the parser, by the offered schema); None for a block a bare function tag opened."""
        return None if self._bare else partial(read_whole, self._tags)

    def fast(self, text: str) -> str | None:
        """The arguments fragment for ``text`` when it only continues a streamed string value."""
        return self._value.fast(text) if self._value is not None else None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        while True:
            state = self._state
            if state == _S.VALUE:
                pos, outcome = self._read_value(buf, pos, final)
            elif state == _S.NAME or state == _S.KEY:
                pos, outcome = self._read_label(buf, pos, final)
            else:
                pos = skip_ws(buf, pos)
                pos, outcome = self._tag(buf, pos, final)
            if outcome is not None:
                return pos, outcome

    def _tag(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        tags, state = self._tags, self._state
        if state == _S.LEAD:
            options: tuple[str, ...] = (tags.function[0],)
        elif state == _S.PARAMS:
            options = (tags.parameter[0], tags.function_close, tags.block_close)
        else:
            options = (tags.function[0], tags.block_close)
        found = match_at(buf, pos, options) if pos < len(buf) else ""
        if found == "":
            return (pos, MORE) if not final else (len(buf), self._at_end(buf[pos:]))
        if found is None:
            if state == _S.AFTER:
                if not self._bare:
                    self._sink.repaired(f"missing {tags.block_close} after the call")
                return pos, DONE  # content resumes after the call
            return pos, self._fail("unexpected text in a call block")
        pos += len(found)
        if found == tags.function[0]:
            self._state = _S.NAME
        elif found == tags.parameter[0]:
            outcome = self._confirm()
            self._state = _S.KEY
            return pos, outcome
        elif found == tags.function_close:
            outcome = self._confirm() or self._end_call()
            self._state = _S.AFTER
            return pos, outcome
        else:  # the block's close tag
            if self._in_call or self._name:
                self._sink.repaired(f"missing {tags.function_close}")
                outcome = self._confirm() or self._end_call()
                return pos, outcome or DONE
            return pos, DONE if state == _S.AFTER else self._fail("empty call block")
        return pos, None

    def _read_label(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        suffix = (self._tags.function if self._state == _S.NAME else self._tags.parameter)[1]
        text, pos, complete = read_label(buf, pos, suffix)
        if complete is None:
            return (pos, MORE) if not final else (pos, self._fail("truncated"))
        if complete is False:
            return pos, self._fail("malformed tag in a call block")
        if not text.strip():
            return pos, self._fail("empty name in a call block")
        if self._state == _S.NAME:
            self._name, self._params = text.strip(), 0
            self._state = _S.PARAMS
            if self._bare:
                return pos, None
            return self._whole(buf, pos) or (pos, self._confirm())
        self._sink.args(("{" if not self._params else ", ") + to_json(text.strip()) + ": ")
        self._params += 1
        tags = self._tags
        self._value = RawValue(self._sink, text.strip(), tags.value_ends, tags.trim_newline, tags.layouts[self._bare])
        self._state = _S.VALUE
        return pos, None

    def _whole(self, buf: str, pos: int) -> tuple[int, Outcome] | None:
        """A wrapped call whose block is all in ``buf`` and written plainly (``read_params``),
        begun, typed and ended at once, as ``read_plain`` reads it: one piece of arguments,
        typed once (the argument typer is not needed for what ``typed_object`` wrote)."""
        read = read_params(self._tags, buf, pos)
        if read is None:
            return None
        outcome = self._confirm()
        if outcome is not None:
            return pos, outcome
        end_typed(self._sink, read[0])
        self._in_call = False
        return read[1], DONE

    def _read_value(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        assert self._value is not None
        pos, end = self._value.feed(buf, pos, final)
        if end is None:
            return pos, MORE if not final else self._fail("truncated")
        tags, marker = self._tags, end.group()
        self._value = None
        if marker == tags.parameter_close:
            self._state = _S.PARAMS
            return pos, None
        self._sink.repaired(f"missing {tags.parameter_close}")
        if marker == tags.parameter[0]:
            self._state = _S.KEY
            return pos, None
        self._state = _S.AFTER  # </function> ended the value
        return pos, self._end_call()

    def _end_call(self) -> Outcome | None:
        if self._params:
            self._sink.args("}")
        self._sink.end()
        self._in_call, self._params = False, 0
        return None

    def _at_end(self, tail: str = "") -> Outcome:
        """The output ended between tags: a call whose parameters are all closed is complete,
        unless what the output ends with can only begin another parameter."""
        tags = self._tags
        if opens_more(tail, (tags.parameter[0], tags.function[0]), (tags.function_close, tags.block_close)):
            return self._fail(TRUNCATED)
        if self._state == _S.AFTER:
            if not self._bare:
                self._sink.repaired(UNCLOSED_AT_END)
            return DONE
        if self._state == _S.PARAMS and (self._in_call or self._name):
            outcome = self._confirm()
            if outcome is not None:
                return outcome
            self._sink.repaired(UNCLOSED_AT_END)
            self._end_call()
            return DONE
        return self._fail("truncated")

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL
