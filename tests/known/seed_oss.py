"""Corpus cases of seed_oss where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN: dict[str, str] = {}
