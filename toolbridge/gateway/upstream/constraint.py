"""Constrained decoding in the gateway: the offered tools, in the dialect's own call format, sent
upstream as the grammar that server takes (``--constrain``, ``--upstream-kind``).

Which requests: ``required`` constrains those whose ``tool_choice`` is ``required``, a named
function or ``allowed_tools`` in required mode; ``strict`` those and any request offering a
tool with ``"strict": true``; ``always`` every request with tools (under ``auto`` the calls are
triggered and prose stays free). ``off`` makes no Constrainer at all: nothing changes.

The dialect is the one the gateway already knows for the turn: a pinned ``--tool-call-parser``,
the injected protocol's, or the chat template's (``--model-dir``/``--chat-template``, probed
once). With ``auto`` and no template nothing is constrained. A reasoning block may precede the
calls (``reasoning="auto"``); where the gateway rendered the prompt itself and it ends inside
the block, the grammar starts inside it (``"open"``). A JSON ``response_format`` is compiled
with the tools (the answer is a call or that JSON) and replaced by the combined constraint.

How, per upstream kind (``FIELDS`` names them for the header), as each server's source reads them:

- vLLM: ``structured_outputs.structural_tag``, the xgrammar structural tag as JSON text; a
  ``required`` or named ``tool_choice`` goes as ``none`` (vLLM would add its own JSON-schema
  constraint for those and refuse two);
- SGLang: ``response_format`` = the structural tag (it takes precedence over SGLang's own tool
  constraint); a ``required`` or named ``tool_choice`` goes as ``auto``;
- llama.cpp: ``grammar`` (GBNF), with ``tool_choice: none`` (it refuses a grammar beside tools
  otherwise). Its chat endpoint sets ``grammar_lazy`` and ``grammar_triggers`` from the chat
  template, so under ``auto`` the whole grammar is sent (prose, then optionally the calls); on
  its completions endpoint (``--upstream-api completions``) the lazy grammar goes with
  ``grammar_lazy: true``, word ``grammar_triggers`` and the triggers as ``preserved_tokens``;
- Ollama: ``response_format`` ``json_schema``, which it passes on as its ``format``: only for
  dialects whose call is one plain JSON object and a required or named call;
- OpenAI: nothing (strict tools are native there).

Invariants: the body keeps everything else, and what was changed is recorded
(``Outcome.restore``) so that a rejection is answered by sending the same request without it;
that upstream is then sent no grammar again, process-wide. The answer is parsed with the
dialect as without a grammar (recovery stays on). Each request's outcome is the
``x-toolbridge-constraint`` header and ``toolbridge_constraint_total{outcome, kind}``; each
reason for not constraining, and the fallback, is logged once.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from ...constrain import grammar_for
from ...dialects import get_dialect
from ...errors import ConfigError
from ...syntax.dialect import Dialect
from ..config import GatewayConfig
from ..http.client import UpstreamError, UpstreamPool
from ..metrics import Metrics
from ..turn import Plan, Turn
from .kind import describe, kind_of

log = logging.getLogger("toolbridge.gateway")

MISSING: Any = object()  # a restored key that the body did not have
FIELDS = {"vllm": "structured_outputs.structural_tag", "sglang": "response_format structural_tag",
          "llamacpp": "grammar", "llama-cpp-python": "grammar", "ollama": "response_format json_schema (format)"}
# Fields by which a request brings its own constraint: it is then left as it is.
OWN = ("structured_outputs", "guided_json", "guided_regex", "guided_choice", "guided_grammar",
       "structural_tag", "regex", "ebnf", "json_schema", "grammar", "format")
# Words of an upstream error that is about the constraint we sent (lower-cased).
REJECTIONS = ("grammar", "structured_output", "structural_tag", "structural tag", "response_format",
              "json_schema", "json schema", "xgrammar")
# Statuses that say nothing about the request's body: never read as a rejection.
NOT_THE_BODY = (401, 403, 404, 408, 429)
WORD = 1  # llama.cpp's COMMON_GRAMMAR_TRIGGER_TYPE_WORD


@dataclass
class Outcome:
    """What became of one request's constraint: ``applied``, ``fallback`` or ``skipped``."""

    outcome: str
    detail: str
    kind: str = ""
    restore: dict[str, Any] = field(default_factory=dict)  # applied: the changed keys as they were
    certain: bool = False  # a fallback the upstream's words blamed on the constraint

    def header(self) -> tuple[bytes, bytes]:
        text = f"{self.outcome} ({self.detail})".encode("ascii", "replace")
        return b"x-toolbridge-constraint", text.replace(b"\r", b" ").replace(b"\n", b" ")[:300]


class Constrainer:
    """Decides, writes and, on rejection, takes back the constraint of each request, for one
    upstream (one per gateway process)."""

    def __init__(self, config: GatewayConfig, metrics: Metrics, template: Any = None) -> None:
        self.mode = config.constrain
        self.drift = config.constrain_drift
        self.kind: str | None = None if config.upstream_kind == "auto" else config.upstream_kind
        self.detected = config.upstream_kind != "auto"
        self.refused: str | None = None  # why this upstream takes no grammar (after a fallback)
        self.confirmed = False  # a constrained request was answered 200
        self.metrics = metrics
        self._template = template
        self._hint: Dialect | None | bool = False  # the template's dialect, once probed
        self._said: set[str] = set()
        self._probing = asyncio.Lock()

    # ------------------------------------------------------------ detection

    async def detect(self, pool: UpstreamPool, target: str, headers: list[tuple[bytes, bytes]]) -> None:
        """Learn the upstream's kind from ``GET target`` (its ``/v1/models``), once; a probe that
        cannot reach the upstream is made again at the next request."""
        if self.detected:
            return
        async with self._probing:
            if self.detected:
                return
            try:
                async with pool.request("GET", target, headers) as up:
                    body, status, answer_headers = await up.read(1 << 20), up.status, up.headers
            except UpstreamError as exc:
                self._say(f"the upstream kind could not be probed ({exc}); trying again with the next request")
                return
            self.learn(target, status, body, answer_headers)

    def learn(self, target: str, status: int, body: bytes, answer_headers: list[tuple[bytes, bytes]]) -> None:
        """Learn the upstream's kind from its answer to ``GET target`` (once: the model list's
        fetch at start brings it, else ``detect``'s at the first request)."""
        if self.detected:
            return
        self.detected = True
        self.kind = kind_of(body, answer_headers) if status == 200 else None
        if self.kind is None:
            self._say(f"the upstream kind is not recognised from {target} ({status}, "
                      f"{describe(body)}); no grammar is sent: set --upstream-kind")
        else:
            log.info("constrained decoding: upstream kind %s (from %s)", self.kind, target)

    # ------------------------------------------------------------ per request

    def apply(self, turn: Turn, plan: Plan, path: str) -> None:
        """Constrain ``plan.body`` where the mode selects ``turn`` and it can be done; records
        ``plan.constraint`` (None: the request offers no tools to constrain)."""
        if not turn.tools or plan.tools is None or turn.tool_choice == "none":
            return
        choice, tools = _choice(turn.tool_choice, turn.tools)
        if not self._selected(choice, tools):
            plan.constraint = Outcome("skipped", f"tool_choice {_mode(choice)} is not constrained "
                                                 f"under --constrain {self.mode}")
            return
        reason = self._blocked(plan, path)
        dialect = self._dialect(plan) if reason is None else None
        if reason is None and dialect is None:
            reason = ("the dialect is not known: --tool-call-parser auto without --model-dir or "
                      "--chat-template; pin the parser to constrain")
        if reason is None:
            assert dialect is not None and self.kind is not None
            reason = self._write(plan, path, dialect, choice, tools, turn.parallel,
                                 turn.options.get("response_format"))
        if reason is not None:
            self._skip(plan, reason)

    def report(self, plan: Plan) -> None:
        """Count and log a request the mode selected but that goes without a grammar (on the
        event loop: ``apply`` may run on a worker thread)."""
        outcome = plan.constraint
        if outcome is not None and outcome.outcome == "skipped" and outcome.kind:
            self.metrics.inc("toolbridge_constraint_total", outcome="skipped", kind=outcome.kind)
            self._say(f"request not constrained: {outcome.detail}")

    def _write(self, plan: Plan, path: str, dialect: Dialect, choice: Any, tools: list[dict[str, Any]],
               parallel: Any, final: Any) -> str | None:
        """Put the constraint into the body; the reason it cannot be, or None. ``final``: the
        request's ``response_format`` (the completions mode's body no longer has it)."""
        body = plan.body
        own = [k for k in OWN if k in body]
        if own or (isinstance(final, dict) and final.get("type") not in (None, "text", "json_object",
                                                                          "json_schema")):
            return f"the request brings its own constraint ({', '.join(own) or 'response_format'})"
        options = {"tool_choice": choice, "parallel_tool_calls": parallel is not False,
                   "reasoning": "open" if getattr(plan, "in_reasoning", False) else "auto",
                   "response_format": final if isinstance(final, dict) and final.get("type") != "text"
                   else None}
        assert self.kind is not None
        try:
            fields = _fields(self.kind, path == "/chat/completions", dialect, tools, options, body,
                             self.drift)
        except ConfigError as exc:
            return str(exc)
        restore = {k: body.get(k, MISSING) for k in fields}
        _restore(body, fields)
        plan.constraint = Outcome("applied", f"{self.kind} {FIELDS[self.kind]}; {dialect.name}",
                                  self.kind, restore)
        return None

    def accepted(self, plan: Plan) -> None:
        """The upstream answered 200 to ``plan``: counted, and its 4xx are no longer blamed on a
        grammar unless they say so."""
        outcome = plan.constraint
        if outcome is not None and outcome.outcome == "applied" and outcome.restore:
            outcome.restore = {}  # nothing to take back any more
            self.confirmed = True
            self.metrics.inc("toolbridge_constraint_total", outcome="applied", kind=outcome.kind)

    def rejected(self, plan: Plan, status: int, raw: bytes) -> bool:
        """Whether a failed answer to ``plan`` refuses its constraint: a 400 or 422 naming a
        grammar field, or any 4xx about the body while no constrained request has succeeded.
        When it does, ``plan.body`` is restored for sending again and the fallback is reported."""
        outcome = plan.constraint
        if outcome is None or outcome.outcome != "applied" or not outcome.restore:
            return False
        text = raw[:4000].decode("utf-8", "replace").lower()
        certain = status in (400, 422) and any(word in text for word in REJECTIONS)
        if not certain and (self.confirmed or not 400 <= status < 500 or status in NOT_THE_BODY):
            return False
        _restore(plan.body, outcome.restore)
        message = _message(raw) or text[:120]
        plan.constraint = Outcome("fallback", f"upstream answered {status}: {message}"[:200], outcome.kind,
                                  certain=certain)
        self.metrics.inc("toolbridge_constraint_total", outcome="fallback", kind=outcome.kind)
        if certain:
            self._refuse(f"{outcome.kind} answered {status} to the grammar: {message}")
        return True

    def settled(self, plan: Plan, status: int) -> None:
        """The request sent again without its constraint was answered ``status``: an uncertain
        rejection is remembered only when the request then went through."""
        outcome = plan.constraint
        if outcome is not None and outcome.outcome == "fallback" and not outcome.certain and status < 400:
            self._refuse(f"{outcome.kind} refused the first constrained request and took it without "
                         f"the grammar ({outcome.detail})")

    def withdraw(self, plan: Plan, reason: str) -> None:
        """Take ``plan``'s constraint out of its body, unreported as a fallback (the request goes
        on another way: ``reason``)."""
        outcome = plan.constraint
        if outcome is not None and outcome.restore:
            _restore(plan.body, outcome.restore)
            plan.constraint = Outcome("skipped", reason, outcome.kind)

    # ------------------------------------------------------------ helpers

    def _selected(self, choice: Any, tools: list[dict[str, Any]]) -> bool:
        if self.mode == "always" or choice != "auto":
            return True
        return self.mode == "strict" and any(_spec(t).get("strict") is True for t in tools)

    def _blocked(self, plan: Plan, path: str) -> str | None:
        """Why this upstream is sent no grammar, before looking at the request."""
        if self.refused is not None:
            return f"the upstream refused a grammar before: {self.refused}"[:200]
        if self.kind is None:
            return "the upstream kind is unknown: set --upstream-kind"
        if self.kind == "openai":
            return "an OpenAI upstream takes strict tools natively; nothing is sent"
        if self.kind == "ollama" and path != "/chat/completions":
            return "Ollama's completions endpoint takes no format"
        return None

    def _dialect(self, plan: Plan) -> Dialect | None:
        if isinstance(plan.dialect, Dialect):
            return plan.dialect
        family = getattr(plan, "family", None)  # the completions mode's: the template's hint
        if isinstance(family, Dialect):
            return family
        if self._hint is False:
            self._hint = None
            if self._template is not None:
                from .completions import template_hint

                name = template_hint(self._template)
                self._hint = get_dialect(name) if name else None
        return self._hint if isinstance(self._hint, Dialect) else None

    def _skip(self, plan: Plan, reason: str) -> None:
        plan.constraint = Outcome("skipped", reason, self.kind or "unknown")

    def _refuse(self, reason: str) -> None:
        if self.refused is None:
            self.refused = reason
            log.warning("constrained decoding: falling back to recovery for this upstream from now on: %s",
                        reason)

    def _say(self, line: str) -> None:
        """Log ``line`` once (a bounded set: reasons are few, their details may vary)."""
        if line not in self._said and len(self._said) < 256:
            self._said.add(line)
            log.info("constrained decoding: %s", line)


def _fields(kind: str, chat: bool, dialect: Dialect, tools: list[dict[str, Any]], options: dict[str, Any],
            body: dict[str, Any], drift: str = "off") -> dict[str, Any]:
    """The body fields that carry the constraint to ``kind`` (MISSING: remove the key); raises
    ConfigError where the dialect or request cannot be said in that server's terms."""
    offers_tools = chat and bool(body.get("tools"))
    if kind in ("vllm", "sglang"):
        tag = grammar_for(dialect, tools, "structural-tag", **options)
        out: dict[str, Any] = ({"structured_outputs": {"structural_tag": json.dumps(tag, ensure_ascii=False)},
                                "response_format": MISSING} if kind == "vllm" else {"response_format": tag})
        if offers_tools and options["tool_choice"] != "auto":
            out["tool_choice"] = "none" if kind == "vllm" else "auto"
        return out
    if kind in ("llamacpp", "llama-cpp-python"):
        # (llama-cpp-python's server has no lazy grammar: the whole grammar on both endpoints)
        lazy = not chat and kind == "llamacpp" and options["tool_choice"] == "auto"
        triggers = grammar_for(dialect, tools, "triggers", drift=drift, **options) if lazy else ()
        out = {"grammar": grammar_for(dialect, tools, "gbnf", lazy=bool(triggers), drift=drift, **options),
               "response_format": MISSING}
        if triggers:
            # (only the dialect's own markers are tokens to keep whole; the drifted openers are text)
            out.update(grammar_lazy=True, grammar_triggers=[{"type": WORD, "value": t} for t in triggers],
                       preserved_tokens=list(grammar_for(dialect, tools, "triggers", **options)))
        if offers_tools:
            out["tool_choice"] = "none"
        return out
    schema = grammar_for(dialect, tools, "json-schema", **options)  # ollama
    return {"response_format": {"type": "json_schema",
                                "json_schema": {"name": "toolbridge_constraint", "schema": schema}}}


def _restore(body: dict[str, Any], values: dict[str, Any]) -> None:
    """Set ``values`` in ``body``; a MISSING value removes its key."""
    for key, value in values.items():
        if value is MISSING:
            body.pop(key, None)
        else:
            body[key] = value


def _choice(choice: Any, tools: list[dict[str, Any]]) -> tuple[Any, list[dict[str, Any]]]:
    """The compiler's ``tool_choice`` and tools: ``allowed_tools`` as its mode over its tools."""
    if choice is None:
        return "auto", tools
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        spec = choice.get("allowed_tools", choice)
        names = {(e.get("function") or e).get("name") for e in spec.get("tools") or () if isinstance(e, dict)}
        return spec.get("mode", "auto"), [t for t in tools if _spec(t).get("name") in names]
    return choice, tools


def _spec(tool: dict[str, Any]) -> dict[str, Any]:
    spec = tool.get("function")
    return spec if isinstance(spec, dict) else tool


def _mode(choice: Any) -> str:
    return choice if isinstance(choice, str) else "named"


def _message(raw: bytes) -> str:
    """An upstream error's message, shortened for the header and the log."""
    try:
        error = json.loads(raw)["error"]
        text = error.get("message") if isinstance(error, dict) else error
    except (ValueError, KeyError, TypeError):
        return ""
    return " ".join(str(text).split())[:160]
