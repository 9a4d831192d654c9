"""Corpus cases of functionary_v3_2 where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN: dict[str, str] = {}
