"""The built-in dialects, one module per dialect or family, and looking dialects up by name.

Importing this package imports every module in it, and each registers its dialects
(``toolbridge.syntax.dialect.register``): a new dialect is a new file and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..errors import ConfigError
from ..syntax.dialect import Dialect, registered

__all__ = ["dialect_names", "fallback_dialect", "get_dialect"]

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")):
    importlib.import_module(f"{__name__}.{_module}")


def get_dialect(name: str | Dialect) -> Dialect:
    """Look up a dialect by registry name or alias (a Dialect is returned as it is).

    Raises:
        ConfigError: no dialect is registered under ``name``.
    """
    if isinstance(name, Dialect):
        return name
    try:
        return registered()[name]
    except KeyError:
        known = ", ".join(sorted(registered()))
        raise ConfigError(f"unknown dialect {name!r}; known: {known}") from None


def dialect_names() -> list[str]:
    """Every registry name and alias, sorted."""
    return sorted(registered())


def fallback_dialect(name: str | Dialect) -> Dialect:
    """The dialect the protocol asks for; it must be able to render calls (ConfigError if not)."""
    dialect = get_dialect(name)
    if dialect.render is None:
        raise ConfigError(f"dialect {dialect.name!r} cannot write calls, so it cannot be the "
                          "fallback dialect; hermes is the default")
    return dialect
