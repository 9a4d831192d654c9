"""``toolbridge bench``: parser figures per dialect (``parsers``) and the gateway's figures
against a paced upstream on loopback (``gateway``, with its load generator, servers, script
and report); whether the gateway gives back its memory and file descriptors over a long run of
mixed good, bad and faulty requests (``soak``); toolbridge against reference parsers on whole
answers, ``auto`` and short answers (``speed``, its outputs and references in ``references``).
The HTTP stack study stays in the repository's ``benchmarks/`` folder."""
