"""Prometheus counters for the gateway, rendered in the text exposition format.

Hand-written on purpose: a handful of labelled counters and a few gauges do not need a client
library, and keeping them as plain integers costs nothing on the request path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .repair import Provenance

_HELP = {
    "toolbridge_requests_total": ("counter", "Requests answered, by endpoint and status."),
    "toolbridge_tool_calls_total": ("counter", "Tool calls returned, by where they came from and front."),
    "toolbridge_rejected_total": ("counter", "Call-like blocks or native calls not returned as calls (kept as text)."),
    "toolbridge_aborted_total": ("counter", "Calls that began and were cut off or broke (answer ended with length)."),
    "toolbridge_repaired_total": ("counter", "Deviations tolerated and arguments typed by the tool's schema."),
    "toolbridge_invalid_arguments_total": ("counter", "Calls returned whose arguments fail the tool's schema, by front."),
    "toolbridge_invalid_retries_total": ("counter",
                                         "Upstream requests made again because a call's arguments failed "
                                         "its schema (--on-invalid retry)."),
    "toolbridge_invalid_rejected_total": ("counter",
                                          "Answers ended with invalid_tool_arguments (--on-invalid reject, "
                                          "retries spent, or a strict tool)."),
    "toolbridge_upstream_errors_total": ("counter", "Upstream failures, by kind."),
    "toolbridge_results_reordered_total": ("counter", "Requests whose tool results came in another order than "
                                           "their calls and went upstream in call order, by front."),
    "toolbridge_internal_errors_total": ("counter",
                                         "Failures no other handler took, by stage (request, answer, stream)."),
    "toolbridge_offloaded_total": ("counter", "Steps run on a worker thread, by kind (request, whole, chunk)."),
    "toolbridge_reasoning_unsealed_total": ("counter", "Reasoning items sent back whose encrypted_content "
                                            "did not verify (dropped; the turn went on without them)."),
    "toolbridge_compactions_total": ("counter", "Conversations compacted (a compaction item answered), "
                                     "by form (endpoint: /v1/responses/compact; trigger: a "
                                     "compaction_trigger item)."),
    "toolbridge_constraint_total": ("counter",
                                    "Requests selected by --constrain, by outcome (applied: the upstream took "
                                    "the grammar; fallback: it refused it and the request went again without; "
                                    "skipped: none could be sent) and upstream kind."),
    "toolbridge_grammar_compiles_total": ("counter", "Freeform tools' grammars compiled, by outcome "
                                          "(ok, error, timeout, crashed: the compiling process died)."),
    "toolbridge_models_mapped_total": ("counter", "Requests sent upstream under another model name than the "
                                       "one asked for, by how (alias: --model-alias; only: the one "
                                       "model served) and the model sent to."),
    "toolbridge_worker_restarts": ("gauge", "With --workers: workers the master had restarted when it "
                                   "started this one."),
    "toolbridge_streamed_chunks_total": ("counter", "Chunks sent to clients on streams."),
    "toolbridge_open_streams": ("gauge", "Streams in progress."),
    "toolbridge_responses_stored": ("gauge", "Responses (and Messages thread turns) in the store (a shared "
                                    "store's: as this process last saw it)."),
    "toolbridge_responses_stored_bytes": ("gauge", "Bytes the stored responses account for (their JSON)."),
    "toolbridge_responses_dropped_total": ("counter",
                                           "Stored responses that went before a DELETE, by reason (expired; "
                                           "count, bytes: evicted by a bound, the oldest first; too_large: "
                                           "never stored). A shared store's, as this process saw them."),
    "toolbridge_store_stored_total": ("counter", "Responses and thread turns this process stored (--state)."),
    "toolbridge_store_misses_total": ("counter", "Lookups of a response, item or thread turn the store did "
                                      "not hold for the caller (unknown, expired, evicted, deleted)."),
    "toolbridge_store_errors_total": ("counter", "Requests answered 503 store_unavailable: the store did not "
                                      "answer or could not write."),
    "toolbridge_store_up": ("gauge", "1 when the store answered at its last look (/health, the sweep), else 0."),
}


Key = tuple[str, tuple[tuple[str, str], ...]]  # a counter: its name and sorted labels
FIGURES_KEPT = 512  # distinct answer figures ``answered`` tallies before they are added up


@dataclass
class Metrics:
    open_streams: int = 0
    gauges: dict[str, Callable[[], int]] = field(default_factory=dict)  # read when rendered
    # The keys of the counters every request moves, by name and label values: made once, not
    # per request (every value is one of a few: routes, statuses, fronts, sources).
    _keys: dict[tuple[str, tuple[str, ...]], Key] = field(default_factory=dict, repr=False)
    # Answers ``answered`` counted, by their figures (route, status, front, call counts), not
    # yet added to the counters (``counters`` adds them).
    _answers: dict[tuple[Any, ...], list[int]] = field(default_factory=dict, repr=False)
    _counters: Counter[Key] = field(default_factory=Counter, repr=False)

    @property
    def counters(self) -> Counter[Key]:
        """Every counter, with the answers ``answered`` tallied added first."""
        if self._answers:
            self._add_answers()
        return self._counters

    def inc(self, name: str, amount: int = 1, **labels: str) -> None:
        self._counters[(name, tuple(sorted(labels.items())))] += amount

    def request(self, endpoint: str, status: int) -> None:
        """Count one answered request (``endpoint``: its route, or ``other``)."""
        key = self._key("toolbridge_requests_total", ("endpoint", "status"), (endpoint, str(status)))
        self._counters[key] += 1

    def record(self, provenance: Provenance, front: str) -> None:
        """Count one response's calls; ``front`` labels the calls and invalid counters."""
        for source in ("native", "content", "reasoning"):
            count = getattr(provenance, source)
            if count:
                key = self._key("toolbridge_tool_calls_total", ("front", "source"), (front, source))
                self._counters[key] += count
        for word in ("rejected", "aborted", "repaired"):
            if getattr(provenance, word):
                self.inc(f"toolbridge_{word}_total", getattr(provenance, word))
        if provenance.invalid:
            key = self._key("toolbridge_invalid_arguments_total", ("front",), (front,))
            self._counters[key] += provenance.invalid

    def answered(self, endpoint: str, status: int, provenance: Provenance, front: str) -> None:
        """``request`` and ``record`` of one answer, tallied by its figures: one dict lookup,
        where the counters it moves are several keys, each hashed twice. The tally is
        added to the counters when they are read (``counters``), and when it holds
        ``FIGURES_KEPT`` figures (call counts vary)."""
        p = provenance
        figures = (endpoint, status, front, p.native, p.content, p.reasoning, p.rejected, p.aborted,
                   p.repaired, p.invalid)
        count = self._answers.get(figures)
        if count is not None:  # (a list: counted in place, the figures hashed once)
            count[0] += 1
        else:
            self._answers[figures] = [1]
            if len(self._answers) > FIGURES_KEPT:
                self._add_answers()

    def _add_answers(self) -> None:
        """Add the tallied answers to the counters: each figures' moves worked out once (by
        ``request`` and ``record``, on a scratch Metrics) and added as many times."""
        answers, self._answers = self._answers, {}
        counters = self._counters
        for (endpoint, status, front, *calls), (times,) in answers.items():
            scratch = Metrics(_keys=self._keys)
            scratch.request(endpoint, status)
            scratch.record(Provenance(*calls), front)
            for key, amount in scratch._counters.items():
                counters[key] += amount * times

    def _key(self, name: str, labels: tuple[str, ...], values: tuple[str, ...]) -> Key:
        key = self._keys.get((name, values))
        if key is None:
            key = self._keys[name, values] = (name, tuple(sorted(zip(labels, values))))
        return key

    def render(self) -> str:
        lines: list[str] = []
        by_name: dict[str, list[str]] = {}
        for (name, labels), value in sorted(self.counters.items()):
            text = ",".join(f'{k}="{v}"' for k, v in labels)
            by_name.setdefault(name, []).append(f"{name}{{{text}}} {value}" if text else f"{name} {value}")
        by_name["toolbridge_open_streams"] = [f"toolbridge_open_streams {self.open_streams}"]
        for name, read in self.gauges.items():
            by_name[name] = [f"{name} {read()}"]
        for name, (kind, help_text) in _HELP.items():
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", *by_name.get(name, [])]
        return "\n".join(lines) + "\n"
