"""Turns the plain relay cannot serve: the completions upstream mode, and the opt-in
prompt-injected tool protocol (``--tool-fallback``) in front of a chat upstream.

The pipeline makes a Router only when the configuration ``rewrites_requests``; otherwise it
relays as it is (this module is then not even imported). Otherwise the pipeline asks the router where
each turn goes and how its answer is read:

- completions mode: render the prompt (``completions.render_request``), call
  ``/v1/completions``, read the text (``TextAnswerStream``, ``whole_answer``);
- chat mode with the flag: send the request as it is; when the upstream answers with a
  recognisable "tools not supported" error (``refusal``), the pipeline retries once with the
  protocol written into the messages (``injected``: no ``tools`` sent) and the answer is parsed
  in the fallback dialect. A model that refused once is sent the protocol directly afterwards
  (``remember``). With ``--chat-template`` or ``--model-dir`` the template's probed
  capabilities decide up front instead.

Without the flag, a template without tool support is answered 400 naming the flag
(FallbackRequired).
"""

from __future__ import annotations

from typing import Any

from ...dialects import get_dialect
from ...errors import FLAG_HINT, FallbackRequired, RenderError
from ...render import ChatTemplate, capabilities, inject, missing
from ..config import GatewayConfig
from ..repair import Provenance, repair_completion
from ..streaming import AnswerStream
from ..turn import TOOL_FIELDS, Plan, RequestError, Turn
from .completions import TextAnswerStream, TextPlan, render_request, whole_answer

def injected_body(body: dict[str, Any], dialect: str) -> dict[str, Any]:
    """A chat request with the protocol written into its messages and no tool fields."""
    out = {k: v for k, v in body.items() if k not in TOOL_FIELDS}
    out["messages"] = inject(body["messages"], body.get("tools"), dialect=dialect,
                             tool_choice=body.get("tool_choice"),
                             parallel=body.get("parallel_tool_calls", True) is not False)
    return out


def _uses_tools(body: dict[str, Any]) -> bool:
    return bool(body.get("tools")) or any(
        isinstance(m, dict) and (m.get("role") == "tool" or m.get("tool_calls"))
        for m in body.get("messages") or ())


class Router:
    """Where a turn goes and how its answer is read, for the completions mode or the flag."""

    def __init__(self, config: GatewayConfig, template: ChatTemplate | None) -> None:
        self.template = template
        self.completions = config.upstream_api == "completions"
        self.flag = config.tool_fallback
        self.dialect = config.fallback_dialect
        self.guard = config.guard_tool_results
        self._refusing: set[Any] = set()  # models whose upstream refused tools

    def remember(self, model: Any) -> None:
        """The upstream refused tools for ``model``: send it the protocol from now on."""
        if len(self._refusing) >= 256:  # model names come from clients: keep the set bounded
            self._refusing.pop()
        self._refusing.add(model)

    def prepare(self, turn: Turn, plan: Plan) -> tuple[str, Plan, bool]:
        """The upstream path, the plan its answer is read with, and whether a refusal of tools
        is retried with the protocol. Raises RenderError (FallbackRequired naming the flag) or
        RequestError."""
        body = turn.body()
        if self.completions:
            assert self.template is not None
            text_plan = render_request(body, plan, self.template, tool_fallback=self.flag,
                                       fallback_dialect=self.dialect, guard=self.guard)
            return "/completions", text_plan, False
        if not _uses_tools(body):
            return "/chat/completions", plan, False
        if self.template is not None:
            lacking = missing(capabilities(self.template), body["messages"], body.get("tools"),
                              body.get("tool_choice"))
            if lacking and not self.flag:
                raise FallbackRequired(
                    f"chat template {self.template.name} does not render {', '.join(lacking)}; "
                    f"enable the prompt-injected tool protocol with {FLAG_HINT}")
            if lacking:
                return "/chat/completions", self.injected(plan), False
        if self.flag and turn.model in self._refusing:
            return "/chat/completions", self.injected(plan), False
        return "/chat/completions", plan, self.flag

    def injected(self, plan: Plan) -> Plan:
        """``plan`` with the protocol written into its upstream body, read in the fallback dialect."""
        try:
            plan.body = injected_body(plan.body, self.dialect)
        except RenderError as exc:
            raise RequestError(str(exc), param="messages") from exc
        plan.dialect = get_dialect(self.dialect)
        plan.drop_tokens = (plan.dialect.end_tokens if plan.body.get("skip_special_tokens") is False
                            else ())
        return plan

    @staticmethod
    def answer_stream(plan: Plan) -> AnswerStream:
        """The reader of a streamed answer to ``plan``."""
        return TextAnswerStream(plan) if isinstance(plan, TextPlan) else AnswerStream(plan)

    @staticmethod
    def whole(answer: Any, plan: Plan) -> tuple[dict[str, Any], Provenance]:
        """A whole answer to ``plan`` as a repaired chat.completion."""
        return whole_answer(answer, plan) if isinstance(plan, TextPlan) else repair_completion(answer, plan)
