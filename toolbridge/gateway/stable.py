"""A cache-stable upstream prompt: what a client writes into its system prompt that changes from
request to request, though the model has no use for it, is taken out (every front's).

An upstream with prefix caching (vLLM, SGLang, llama.cpp) reuses the longest prefix a prompt
shares with one it has seen and reads the rest anew; the system prompt comes first, so one value
in it that changes makes every request re-read the whole prompt (system, tools, history). Claude
Code's first system block is such a value, its attribution block:

    x-anthropic-billing-header: cc_version=2.1.197.28d; cc_entrypoint=sdk-cli; cch=8fcfa;

- ``cc_version``: Claude Code's release and a 3-hex fingerprint of three characters of the
  session's first user message (a new session, a sub-agent, or a compaction that replaces that
  message changes it);
- ``cch``: a hash of the request body, written for Anthropic's API (Claude Code sends it when its
  base URL is api.anthropic.com or claims to be one, and to Vertex): new on every request;
- ``cc_entrypoint`` (``cli``, ``sdk-cli`` ...), and where they apply ``cc_workload`` and
  ``cc_is_subagent=true``.

Anthropic's API reads the block for billing and attribution; nothing in it is addressed to the
model (a sub-agent's own prompt says what it is). So the block, the first line of the leading
system message when it is ``x-anthropic-billing-header:`` and its ``key=value;`` pairs, with the
blank line after it, is taken out of the prompt (the same words anywhere else stay); its values go to the debug log (``stable_prompt``), nowhere else:
no upstream bills by them. Everything else passes byte for byte. Codex puts no such value in its
prompt (its per-request ids travel in headers and ``client_metadata``, which stay out of the
prompt): nothing of its is changed. ``--no-stable-prompt`` (``TOOLBRIDGE_STABLE_PROMPT=0``) sends
the system prompt as the client wrote it.
"""

from __future__ import annotations

import logging
import re
from typing import Any

log = logging.getLogger("toolbridge.gateway")

ATTRIBUTION = "x-anthropic-billing-header:"
# The block as Claude Code writes it, ``key=value;`` pairs, at the very start of the system prompt
# (its first block); the same words anywhere else are the prompt's own.
_LINE = re.compile(r"\Ax-anthropic-billing-header:(?: [a-z_]+=[^;\n]*;)* *(?:\n\n|\n|\Z)")


def stable_prompt(messages: list[dict[str, Any]]) -> int:
    """Take the attribution block out of the leading system message (in place; see the module
    docstring); returns how many lines went."""
    if not messages or messages[0].get("role") != "system":
        return 0
    content = messages[0].get("content")
    if isinstance(content, str):
        if not content.startswith(ATTRIBUTION):  # (the common case: one comparison)
            return 0
        kept, gone = _without(content)
        if kept:
            messages[0] = {**messages[0], "content": kept}
        else:  # the block was the whole system prompt: there is none
            del messages[0]
        return gone
    if isinstance(content, list) and content:
        first = content[0]
        if not (isinstance(first, dict) and isinstance(first.get("text"), str)
                and first["text"].startswith(ATTRIBUTION)):
            return 0
        text, gone = _without(first["text"])
        parts = ([{**first, "text": text}] if text else []) + content[1:]
        if parts:
            messages[0] = {**messages[0], "content": parts}
        elif gone:
            del messages[0]
        return gone
    return 0


def _without(text: str) -> tuple[str, int]:
    lines = [m.group(0).strip() for m in _LINE.finditer(text)]
    if lines:
        log.debug("stable prompt: not sent upstream: %s", " | ".join(lines))
    return _LINE.sub("", text), len(lines)
