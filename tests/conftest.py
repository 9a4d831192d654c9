"""The test profiles (see tests/budget.py): ``check``-marked tests run only in the full one.

Tests marked ``serial`` measure time (an event loop's latency while another thread parses, the
growth of a parse's cost with its input): ``make test`` and ``make check`` run them after the
parallel run, alone on the machine, so that another worker's load cannot fail them.
"""

from __future__ import annotations

import pytest

from .budget import FULL


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "check: a long test run by `make check` only (TOOLBRIDGE_TEST_PROFILE=full)")
    config.addinivalue_line("markers", "serial: measures time; run alone, after the parallel run")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if FULL:
        return
    skip = pytest.mark.skip(reason="long test: run by `make check` (TOOLBRIDGE_TEST_PROFILE=full)")
    for item in items:
        if "check" in item.keywords:
            item.add_marker(skip)
