"""``toolbridge bench``: parser figures per dialect (``parsers``) and the gateway's figures
against a paced upstream on loopback (``gateway``, with its load generator, servers, script
and report). The HTTP stack study stays in the repository's ``benchmarks/`` folder."""
