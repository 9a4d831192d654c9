"""Corpus cases of ernie45 where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN: dict[str, str] = {}
