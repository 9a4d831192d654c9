"""Corpus cases of muse where toolbridge disagrees with the peer, each with the reason ours is right.

The corpus holds no muse cases yet."""

KNOWN: dict[str, str] = {}
