"""The agent CLIs ``make test-agents`` installs into ``.agents/``: where each is, or a skip
saying what is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def installed(command: str, variable: str, product: str, node: bool = False, hint: str = "") -> str:
    """The path of ``command`` (``$variable`` or ``.agents/node_modules/.bin/command``) once
    ``--version`` runs; otherwise the test skips, saying why. ``node``: check Node.js first
    (the command is a Node script); ``hint``: added to a failed ``--version``'s reason."""
    found = os.environ.get(variable) or str(ROOT / ".agents" / "node_modules" / ".bin" / command)
    if not Path(found).exists():
        missing = "" if shutil.which("node") and shutil.which("npm") else " (Node.js and npm are missing too)"
        pytest.skip(f"{product} is not installed at {found}: run make test-agents{missing}")
    if node and not shutil.which("node"):
        pytest.skip(f"Node.js is not installed: the {command} command is a Node script")
    try:
        version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60, check=False)
    except OSError as exc:
        pytest.skip(f"{found} does not run: {exc}")
    if version.returncode != 0:
        pytest.skip(f"{found} --version failed{hint}: {version.stderr.strip()[:300]}")
    return found
