"""``GET /v1/models`` as each client reads it: one body that is at once the OpenAI model list,
the Anthropic models page and Codex's model catalog.

The three shapes share no key with different meanings, so the gateway does not tell clients
apart (by ``anthropic-version``, ``x-api-key``, Codex's ``originator`` or its
``client_version`` query): every client gets the same body and reads its own keys.

- OpenAI (the ``openai`` SDK's ``models.list()``, every OpenAI-compatible client): ``{"object":
  "list", "data": [{"id", "object": "model", "created", "owned_by"}]}``.
- Anthropic (the ``anthropic`` SDK's ``models.list()``; Claude Code's gateway discovery, on with
  ``CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY=1``, which asks ``?limit=1000`` with
  ``anthropic-version`` and keeps the ``data[].id`` that begin with ``claude`` or ``anthropic``,
  with their ``display_name``): each entry also has ``type: "model"``, ``display_name``,
  ``created_at`` (RFC 3339; the epoch when the upstream gives no time), ``lifecycle: "active"``
  and ``max_input_tokens`` when the context window is known; the page has ``has_more: false`` (one
  page holds every model, whatever ``limit`` says), ``first_id`` and ``last_id``.
- Codex (``models``: its ``ModelsResponse``, the shape ``model_catalog_json`` reads): per model
  the fields Codex 0.171 requires (``slug``, ``display_name``, ``shell_type``, ``visibility``,
  ``supported_in_api``, ``priority``, ``supported_reasoning_levels``, ``support_verbosity``,
  ``truncation_policy``, ``experimental_supported_tools``, and instructions: ``base_instructions``,
  toolbridge's own short ones, since Codex refuses an entry without), ``context_window`` when
  known, and ``apply_patch_tool_type: "freeform"``: the gateway turns a freeform tool into a
  call any dialect can write (``freeform``), so every model served can take Codex's freeform
  ``apply_patch``.

The models are the upstream's (its own fields kept: vLLM's ``root``, ``max_model_len`` ...), then
each ``--model-alias`` whose pattern is a plain name (no glob characters) and not already listed,
under that name, its display name the model it is sent to: so an alias such as
``claude-qwen3-coder=qwen3-coder`` is what Claude Code's discovery keeps. The context window is
the upstream's (``max_model_len``, vLLM's and SGLang's), else the ``--model-dir`` config's
``max_position_embeddings``.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .models import Alias

GLOB = frozenset("*?[")
# Codex asks for a model's instructions and refuses an entry without: ours, short, in place of
# its bundled prompt (which is Codex's own text, not ours to serve).
INSTRUCTIONS = ("You are a coding agent working in the user's repository through the Codex CLI. Read "
                "before you change; change files with the apply_patch tool and run commands with the "
                "shell tool you are offered; keep going until the task is done, then say briefly what "
                "you did.")
TRUNCATION = {"mode": "tokens", "limit": 10_000}  # what Codex keeps of a long tool output


def context_of_dir(model_dir: str) -> int | None:
    """The context window a ``--model-dir`` declares (``config.json``'s
    ``max_position_embeddings``), or None."""
    if not model_dir:
        return None
    try:
        config = json.loads((Path(model_dir) / "config.json").read_text())
    except (OSError, ValueError):
        return None
    window = config.get("max_position_embeddings") if isinstance(config, dict) else None
    return window if isinstance(window, int) and window > 0 else None


def catalog(listed: Iterable[Any], aliases: Iterable[Alias], window: int | None) -> dict[str, Any]:
    """The body of ``GET /v1/models`` (see the module docstring) for the upstream's listed
    entries (``data`` of its answer; none when it has no listing) and the aliases."""
    entries = [dict(m) for m in listed if isinstance(m, dict) and isinstance(m.get("id"), str) and m["id"]]
    windows = {m["id"]: _window(m) or window for m in entries}
    seen = set(windows)
    for alias in aliases:
        if GLOB.isdisjoint(alias.pattern) and alias.pattern not in seen:
            seen.add(alias.pattern)
            entries.append({"id": alias.pattern, "display_name": alias.name, "owned_by": "toolbridge"})
            windows[alias.pattern] = windows.get(alias.name) or window
    data = [_openai_anthropic(m, windows[m["id"]]) for m in entries]
    return {"object": "list", "data": data, "has_more": False,
            "first_id": data[0]["id"] if data else None, "last_id": data[-1]["id"] if data else None,
            "models": [_codex(m, k, windows[m["id"]]) for k, m in enumerate(data)]}


def _window(entry: dict[str, Any]) -> int | None:
    window = entry.get("max_model_len")
    return window if isinstance(window, int) and window > 0 else None


def _openai_anthropic(entry: dict[str, Any], window: int | None) -> dict[str, Any]:
    created = entry.get("created")
    created = created if isinstance(created, int) and created >= 0 else 0
    shown = entry.get("display_name")
    out = {**entry, "object": "model", "created": created,
           "owned_by": entry.get("owned_by") if isinstance(entry.get("owned_by"), str) else "upstream",
           "type": "model", "display_name": shown if isinstance(shown, str) and shown else entry["id"],
           "created_at": datetime.datetime.fromtimestamp(created, datetime.timezone.utc)
           .isoformat().replace("+00:00", "Z"), "lifecycle": "active"}
    if window is not None:
        out["max_input_tokens"] = window
    return out


def _codex(entry: dict[str, Any], priority: int, window: int | None) -> dict[str, Any]:
    out = {"slug": entry["id"], "display_name": entry["display_name"],
           "description": f"{entry['display_name']} through toolbridge", "shell_type": "shell_command",
           "visibility": "list", "supported_in_api": True, "priority": priority,
           "supported_reasoning_levels": [], "support_verbosity": False, "default_verbosity": None,
           "apply_patch_tool_type": "freeform", "truncation_policy": TRUNCATION,
           "supports_parallel_tool_calls": True, "supports_reasoning_summaries": False,
           "experimental_supported_tools": [], "input_modalities": ["text", "image"],
           "base_instructions": INSTRUCTIONS}
    if window is not None:
        out["context_window"] = window
    return out
