"""Corpus cases of step3p5 where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN: dict[str, str] = {}
