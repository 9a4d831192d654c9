"""Corpus cases of apriel where toolbridge disagrees with the peer (none)."""

KNOWN: dict[str, str] = {}
