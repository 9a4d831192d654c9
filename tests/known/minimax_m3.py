"""Corpus cases of minimax_m3 where toolbridge disagrees with the peer, each with the reason ours is right.

The corpus holds no minimax_m3 cases yet."""

KNOWN: dict[str, str] = {}
