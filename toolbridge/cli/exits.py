"""Exit codes of every command: 0 done, 1 some input lines failed, 2 the run could not start
(bad flag, file or dialect), 130 interrupted."""

EXIT_OK = 0
EXIT_LINES_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


EXTRAS = {"serve": ("httptools", "orjson", "websockets"), "render": ("jinja2",),
          "demo": ("openai", "httptools", "jinja2", "websockets"), "redis": ("redis",)}


def missing_extra(extra: str) -> str | None:
    """None when the extra's packages import, else a message saying what to install."""
    lacking = [name for name in EXTRAS[extra] if not _importable(name)]
    if not lacking:
        return None
    return (f"toolbridge: this command needs {', '.join(lacking)}: pip install 'toolbridge[{extra}]' "
            f"(or 'toolbridge[all]')")


def _importable(name: str) -> bool:
    import importlib

    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True
