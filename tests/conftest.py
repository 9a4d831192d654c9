"""The test profiles (see tests/budget.py): ``check``-marked tests run only in the full one."""

from __future__ import annotations

import pytest

from .budget import FULL


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "check: a long test run by `make check` only (TOOLBRIDGE_TEST_PROFILE=full)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if FULL:
        return
    skip = pytest.mark.skip(reason="long test: run by `make check` (TOOLBRIDGE_TEST_PROFILE=full)")
    for item in items:
        if "check" in item.keywords:
            item.add_marker(skip)
