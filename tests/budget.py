"""How much each randomised test draws: a short budget in ``make test``, the full one in ``make check``.

``TOOLBRIDGE_TEST_PROFILE=full`` (what ``make check`` sets) gives every property and fuzz test the
number of examples its author wrote; otherwise (``make test``, a bare ``pytest``) it draws a fifth
of that, at least ``floor``, so the quick loop still walks every strategy. Tests marked
``@pytest.mark.check`` (the soak, the heavy grammar engines' long runs) run only in the full profile;
elsewhere they are skipped with the reason printed, never dropped silently.
"""

from __future__ import annotations

import os

FULL = os.environ.get("TOOLBRIDGE_TEST_PROFILE", "").strip().lower() == "full"
SHORT_SHARE = 5  # the short profile draws 1/SHORT_SHARE of the full budget


def examples(full: int, floor: int = 10) -> int:
    """The number of examples (or fuzz inputs) to draw where the full budget is ``full``."""
    if FULL:
        return full
    return min(full, max(floor, full // SHORT_SHARE))
