"""The agent CLIs ``make test-agents`` installs into ``.agents/`` (this checkout's, or in a git
worktree the main checkout's): where each is, or a skip saying what is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def agents_folders(root: Path = ROOT) -> list[Path]:
    """Where ``.agents/`` may be: this checkout's, then, in a git worktree (whose ``.git`` is a
    file naming its folder in the main repository's), the main checkout's: a worktree uses the
    agents ``make test-agents`` installed there without installing them again."""
    folders = [root / ".agents"]
    link = root / ".git"
    if link.is_file():
        gitdir = Path(link.read_text().partition("gitdir:")[2].strip())
        common = gitdir / "commondir"
        if common.is_file():
            main = (gitdir / common.read_text().strip()).resolve().parent
            folders.append(main / ".agents")
    return folders


def installed(command: str, variable: str, product: str, node: bool = False, hint: str = "") -> str:
    """The path of ``command`` (``$variable`` or ``.agents/node_modules/.bin/command``) once
    ``--version`` runs; otherwise the test skips, saying why. ``node``: check Node.js first
    (the command is a Node script); ``hint``: added to a failed ``--version``'s reason."""
    bins = [folder / "node_modules" / ".bin" / command for folder in agents_folders()]
    found = os.environ.get(variable) or str(next((b for b in bins if b.exists()), bins[0]))
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
