"""Corpus cases of command_r_plus where toolbridge disagrees with the peer, each with the reason ours is right."""

KNOWN: dict[str, str] = {}
