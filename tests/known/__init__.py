"""Known corpus disagreements, one module per dialect (``tests/known/<dialect>.py``).

Each module holds ``KNOWN``: case id -> the reason toolbridge's answer is right. A dialect is held
to the corpus (``tests/test_corpus.py``) once it has a module here.
"""

from __future__ import annotations

import importlib
import pkgutil

PROMISE_UNKNOWN = "the call names a tool that was not offered: its block stays visible as content (promise), the peer drops it"
PROMISE_NOTHING_LOST = "text after the calls is content (nothing lost); the peer drops it"


def known() -> dict[str, dict[str, str]]:
    """Dialect -> its known disagreements, for every dialect with a module here."""
    out = {}
    for info in pkgutil.iter_modules(__path__):
        out[info.name] = importlib.import_module(f"{__name__}.{info.name}").KNOWN
    return out
