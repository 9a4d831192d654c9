"""Text that grows by small pieces for the length of a stream, kept compact.

A streamed call's arguments come in pieces of a few characters, and the parser (to check them),
the validation gate and a front must have the whole text at the end of the call. Kept as a list of the pieces, a 33k
argument is some 8,000 string objects (about 60 bytes each for 4 characters: 15 times the text);
re-joined at every piece, it is quadratic. ``TextBuffer`` joins each run of ``BLOCK`` pieces
into one string as it fills: every character is copied once into a block and once more at the
end (amortised linear), and what is held is the text plus a string header per block.
"""

from __future__ import annotations

BLOCK = 64  # pieces joined at a time: 4-character pieces make 256-character blocks


class TextBuffer:
    """Pieces of text in, the whole text out (``text()``); see the module docstring."""

    __slots__ = ("_blocks", "_tail", "count")

    def __init__(self, first: str = "") -> None:
        self._blocks: list[str] = []
        self._tail: list[str] = [first] if first else []
        self.count = len(self._tail)  # pieces appended (a call that came whole is one)

    def append(self, piece: str) -> None:
        self.count += 1
        tail = self._tail
        tail.append(piece)
        if len(tail) >= BLOCK:
            self._blocks.append("".join(tail))
            tail.clear()

    def text(self) -> str:
        """The pieces so far, joined."""
        if self._tail:
            self._blocks.append("".join(self._tail))
            self._tail.clear()
        blocks = self._blocks
        if len(blocks) > 1:
            blocks[:] = ["".join(blocks)]  # asked again (rarely): not joined again
        return blocks[0] if blocks else ""

    def __bool__(self) -> bool:
        return bool(self._blocks or self._tail)
