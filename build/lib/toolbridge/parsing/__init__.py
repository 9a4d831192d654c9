"""Whole responses: ``StreamParser`` (one dialect, or ``auto``), ``AutoParser`` and ``parse``.

The public names are re-exported by ``toolbridge`` itself; this package re-exports nothing, so
that importing one of its modules never imports the others."""
