"""Real agent CLIs run headless against toolbridge (``make test-agents`` installs them)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "agents: runs a real agent CLI installed by make test-agents")
