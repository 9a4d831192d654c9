"""Corpus cases of internlm where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN: dict[str, str] = {}
