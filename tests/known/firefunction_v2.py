"""Corpus cases of firefunction_v2 where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN: dict[str, str] = {}
