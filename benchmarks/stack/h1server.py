"""The code measured here is the gateway's own: toolbridge/gateway/http/server.py (moved there when
this stack was chosen); this module only makes it importable from this folder."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from toolbridge.gateway.http.server import ClientDisconnected, H1Server, Limits, Request, Response  # noqa: E402

__all__ = ["ClientDisconnected", "H1Server", "Limits", "Request", "Response"]
