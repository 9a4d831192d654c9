"""Compaction, the request side: a conversation summarised by the upstream model itself.

Two forms ask for it: ``POST /v1/responses/compact`` (``compacted.CompactFront``), and an
ordinary ``POST /v1/responses`` whose input ends with ``{"type": "compaction_trigger"}`` (what
Codex sends with ``remote_compaction_v2``). Either way the turn sent upstream is the
conversation as it would be sent for a reply, then one user message asking for the summary
(``PROMPT``), with no tools and at most ``--compact-max-tokens`` tokens; the answer is one
``compaction`` item whose ``encrypted_content`` is the summary sealed as reasoning is
(``sealed``: the same key, the same check), so that a client with ``store: false`` carries it.

A later request carrying that item shows the upstream, in its place, a user message: ``LEAD``
and the summary. A user message because it keeps its place in the conversation (a system
message would be merged into the one leading system message chat templates take), every
template takes one anywhere, and the model reads it as what it was told rather than as words
of its own to continue (an assistant message). An item that does not verify (changed, or
sealed by a gateway with another key, or by OpenAI) is a 400: the conversation it stood for
cannot be given to the model, and going on without it would silently lose the session.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...turn import RequestError, Turn
from .sealed import Sealer

TRIGGER = "compaction_trigger"
ITEM = "compaction"
LEAD = "Summary of the conversation so far (the earlier turns were compacted into it):\n\n"
PROMPT = """\
Your context is nearly full: write a summary of this conversation that will replace it. You \
will continue the work from this summary alone, so it must hold everything needed to go on:

1. The task: what the user asked for, in their words where they matter, with every \
requirement and constraint they gave.
2. Decisions: what was decided or agreed, and why, and the approaches that were tried and \
abandoned.
3. Files: every file read, created or changed, with what was done to each.
4. State: what is done, what is in progress, and the open todos, in order.
5. Results: the last tool results that still matter (errors, test outcomes, values found), \
quoted briefly where their exact words matter.

Write the summary only, as plain text with short headings; call no tools, and do not answer \
or continue the task here."""


def trigger(value: Any) -> tuple[Any, bool]:
    """``input`` without its trailing ``compaction_trigger`` item, and whether it had one."""
    if isinstance(value, list) and value and isinstance(value[-1], dict) and value[-1].get("type") == TRIGGER:
        return value[:-1], True
    return value, False


def summary_message(item: dict[str, Any], where: str, sealer: Sealer) -> dict[str, Any]:
    """A ``compaction`` input item as the user message the upstream sees in its place; raises
    RequestError (400) when it does not verify."""
    sealed = item.get("encrypted_content")
    if not isinstance(sealed, str) or not sealed:
        raise RequestError(f"{where}.encrypted_content: a compaction item carries its encrypted_content "
                           "(a string)", param=f"{where}.encrypted_content")
    text, why = sealer.read(sealed, where)
    if text is None:
        raise RequestError(f"{where}.encrypted_content: this compaction item does not verify ({why}: made by "
                           "another gateway or changed): the conversation it stands for cannot be given to "
                           "the model; compact again, or send the conversation",
                           param=f"{where}.encrypted_content", code="invalid_encrypted_content")
    return {"role": "user", "content": LEAD + text}


def summarising(turn: Turn, max_tokens: int) -> Turn:
    """``turn`` as the request for its conversation's summary: the conversation and ``PROMPT``,
    no tools, no output format, at most ``max_tokens`` tokens (the client's streaming kept)."""
    options = {k: v for k, v in turn.options.items() if k not in ("response_format", "max_tokens")}
    options["max_tokens"] = max_tokens
    return replace(turn, messages=[*turn.messages, {"role": "user", "content": PROMPT}], tools=None,
                   tool_choice=None, parallel=None, freeforms={}, schema_paths=None, options=options,
                   fields=None)  # (planned as its own: not as the turns of its request's fields are)


def compacted_history(history: list[dict[str, Any]], summary: str) -> list[dict[str, Any]]:
    """What a stored compaction response's conversation is (``previous_response_id`` naming it
    continues from it): the system messages, then the summary in place of the rest."""
    return [*(m for m in history if m.get("role") == "system"), {"role": "user", "content": LEAD + summary}]
