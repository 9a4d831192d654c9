"""The built-in dialects: one module per dialect or family; importing this package registers all.

Every module in this package is imported, so a new dialect is a new file and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil

__all__ = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))

for _name in __all__:
    importlib.import_module(f"{__name__}.{_name}")
