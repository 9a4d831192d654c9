"""``python -m toolbridge``: the same command line as the ``toolbridge`` script."""

from __future__ import annotations

from .cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
