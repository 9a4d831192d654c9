"""Attribute-named XML blocks (``attrxml``) written plainly, read whole.

A wrapped block holding one invoke whose name and keys are plain double-quoted attributes and
whose values are each closed by the parameter close, with no other tag before it, is read at
once, the same way ``AttrXmlBody.feed`` reads it piece by piece: ``feed`` and ``read_plain`` both
take this reading, so a whole answer and a stream give the same events. Tags with options that
change the reading (CDATA, typed or unwrapped values, JSON bodies, skipped tokens, a layout that
places the close, another tag end) are not read so.
"""

from __future__ import annotations

import re
from typing import Any

from ..rawvalue import plain_pairs
from .xml import SHORT_BLOCK

Pairs = list[tuple[str, str]]
_SPACE = re.compile(r"[ \t\r\n]*")
# A name or key as ``parse_attrs`` and ``html.unescape`` leave it unchanged, stripped already.
_NAME = r'"([^"&<>\s](?:[^"&<>\n]{0,254}[^"&<>\s])?)"'


def plain_tags(tags: Any) -> bool:
    """Whether blocks of ``tags`` can be read whole (no option that changes the reading)."""
    return bool(tags.block_close) and not (tags.cdata or tags.string_attr or tags.unwrap or tags.json_body
                                           or tags.skip or tags.close_by_layout or tags.tag_end != ">")


class Patterns:
    """How blocks of one ``AttrTags`` are read whole (made once, kept on the tags: looking them
    up by the tags, a dataclass of a dozen fields, cost a hash of all of them per block)."""

    __slots__ = ("block", "close", "invoke", "others", "param", "plain")

    def __init__(self, tags: Any) -> None:
        # The invoke's opening and a parameter's, canonical spellings (``<invoke name="x">``)
        self.invoke = re.compile(rf"[ \t\r\n]*{re.escape(tags.invoke[0])} {re.escape(tags.name_attr)}={_NAME}>")
        param = rf"[ \t\r\n]*{re.escape(tags.param[0])} {re.escape(tags.key_attr)}={_NAME}>"
        self.param = re.compile(param)
        self.close = close = tags.param_close[0]
        self.others = tuple(t for t in tags.value_ends.markers if t != close)
        # A parameter whose value holds no character of the close's first (then no other tag
        # either, when every other one begins with it too), matched whole with its close: what
        # ``plain_end`` finds for it, in one match.
        common = all(t.startswith(close[0]) for t in self.others)
        whole = f"{param}([^{re.escape(close[0])}]*+){re.escape(close)}"
        self.plain = re.compile(whole) if common else None
        # An invoke's parameters all written so, its close (the empty group: where ``feed``
        # keeps the calls so far) and the block's
        closes = "|".join(map(re.escape, tags.block_close))
        block = rf"(?:{whole})*[ \t\r\n]*{re.escape(tags.invoke_close[0])}(?P<kept>)[ \t\r\n]*(?:{closes})"
        self.block = re.compile(block) if common else None


def read_params(tags: Any, text: str, pos: int) -> tuple[Pairs, int, int] | None:
    """An invoke's parameters from ``pos`` (after its opening tag), when written plainly, to
    its close and the block's: the raw values, the position after the invoke's close (where
    ``feed`` keeps the calls so far) and after the block's; None for anything else."""
    patterns: Patterns = tags.whole
    # Every parameter of a short invoke written plainly, at the text's end: all of them at
    # once, the same reading (see ``xml.read_params``; a longer text is read by the loop).
    short = patterns.block is not None and len(text) - pos <= SHORT_BLOCK
    block = patterns.block.match(text, pos) if short else None  # type: ignore[union-attr]
    if block is not None:
        pairs = patterns.plain.findall(text, pos, block.start("kept"))  # type: ignore[union-attr]
        unique = len({k for k, _ in pairs}) == len(pairs)
        return (pairs, block.end("kept"), block.end()) if unique else None
    whole = patterns.plain.match if patterns.plain is not None else None
    read = plain_pairs(text, pos, whole, patterns.param.match, patterns.close, patterns.others)
    if read is None:
        return None
    pairs, pos = read
    pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
    if not text.startswith(tags.invoke_close[0], pos):
        return None
    kept = pos + len(tags.invoke_close[0])
    pos = _SPACE.match(text, kept).end()  # type: ignore[union-attr]
    block = next((c for c in tags.block_close if text.startswith(c, pos)), None)
    return None if block is None else (pairs, kept, pos + len(block))


def read_whole(tags: Any, text: str, pos: int) -> tuple[str, None, Pairs, int, bool] | None:
    """A block from ``pos`` (after its opening marker) read whole: the function's name, None for
    arguments still to type, the raw values, where the block ends, and
    False (no text whose layout is known: ``json.read_whole``)."""
    head = tags.whole.invoke.match(text, pos)
    read = read_params(tags, text, head.end()) if head is not None else None
    return None if read is None else (head[1], None, read[0], read[2], False)  # type: ignore[index]
