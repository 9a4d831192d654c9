"""Tool results in the order of the calls they answer (every front's turn, in the pipeline).

Clients return the results of parallel calls in the order the tools finished (Claude Code does),
and chat templates and strict upstreams pair results with calls by position, not by id: a
result out of order is read as the answer to another call. So each run of ``tool`` messages
right after an assistant message with ``tool_calls`` is put in the order of those calls, by id;
the pairing by id is untouched (each message keeps its ``tool_call_id``). A result whose id is
not among that message's calls (the Responses API lets an output answer an earlier call) keeps
its place after the ones that are, in the order sent. The fronts have refused a result that
answers no call before this runs (each in its API's own terms), so the sort only moves messages;
each request whose results moved is counted (``toolbridge_results_reordered_total``).
"""

from __future__ import annotations

from typing import Any


def in_call_order(messages: list[dict[str, Any]]) -> int:
    """Reorder ``messages`` in place (see the module docstring); returns how many runs of
    results were out of order."""
    moved = 0
    for i, message in enumerate(messages):  # (a run, when sorted, keeps its length and place)
        if message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        start = end = i + 1
        while end < len(messages) and messages[end].get("role") == "tool":
            end += 1
        if end - start > 1:
            calls = message["tool_calls"]
            rank = {call.get("id"): k for k, call in enumerate(calls) if isinstance(call, dict)}
            run = messages[start:end]
            ordered = sorted(run, key=lambda m: rank.get(m.get("tool_call_id"), len(rank)))
            if any(a is not b for a, b in zip(ordered, run)):  # (identity: contents may be large)
                messages[start:end] = ordered
                moved += 1
    return moved
