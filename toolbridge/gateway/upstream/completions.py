"""The completions upstream mode: toolbridge renders the prompt and reads the raw text itself.

For ``--upstream-api completions`` a chat request becomes a ``/v1/completions`` request: the
prompt is the model's own chat template applied to the messages (or the injected tool protocol,
when the template lacks tool support and the operator opted in), special tokens are kept
(``skip_special_tokens: false``, ``spaces_between_special_tokens: false``), and the template's
end-of-turn markers are stop strings. The answer's text is then read exactly as an upstream's
chat ``content`` is: ``TextAnswerStream`` reads each text-completion chunk as a chat chunk with
the same AnswerStream, with the family's reasoning split out (from the start
when the prompt ended by opening it). A non-streamed answer is the same translation fed once.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ...dialects import get_dialect
from ...events import Event, ToolCallBegin, ToolCallEnd
from ...openai import ChunkEncoder, assemble
from ...render import ChatTemplate, Prompt, build_prompt
from ...render.guard import ResultGuard
from ...render.hint import template_dialect
from ...render.prompt import stop_markers
from ...tools import Toolset
from ..turn import Plan, RequestError
from ..repair import Provenance
from ..streaming import AnswerStream, Finish
from ..validation import WholeCall

# Chat-only request fields: replaced by the prompt, or shaped differently in the text API.
_CHAT_ONLY = frozenset({
    "messages", "tools", "tool_choice", "parallel_tool_calls", "response_format",
    "chat_template_kwargs", "logprobs", "top_logprobs", "max_completion_tokens",
    "reasoning_effort", "modalities", "audio", "store", "metadata",
})
_NO_TOOLS = Toolset([])  # text is parsed even without tools: reasoning is split, nothing is a call


@dataclass
class TextPlan(Plan):
    """A Plan whose parsers also split reasoning (the upstream returns it inside the text)."""

    reasoning: bool = False
    in_reasoning: bool = False
    hint: str | None = None  # with the auto parser: the dialect the chat template writes calls in

    @property
    def parser_options(self) -> dict[str, Any]:
        options = dict(Plan.parser_options.fget(self))  # type: ignore[attr-defined]
        options.update(reasoning=self.reasoning, in_reasoning=self.in_reasoning)
        if self.dialect == "auto" and self.hint:
            options["hint"] = self.hint
        return options

    @property
    def family(self) -> Any:
        """The Dialect known for this request (named, injected, or the template's hint), or None."""
        if not isinstance(self.dialect, str):
            return self.dialect
        return get_dialect(self.hint) if self.hint else None


def render_request(body: dict[str, Any], plan: Plan, template: ChatTemplate, *,
                   tool_fallback: bool, fallback_dialect: str, guard: bool = True) -> TextPlan:
    """The prompt and the ``/v1/completions`` body for a validated chat request (``plan``);
    with ``guard``, tool results written into the template are guarded for the dialects the
    answer is read with (the injected protocol guards its own in any case).

    Raises:
        RenderError: the template failed, or it lacks tool support and the protocol is off
            (FallbackRequired, naming the flag).
        RequestError: ``chat_template_kwargs`` is not an object.
    """
    variables = body.get("chat_template_kwargs") or {}
    if not isinstance(variables, dict):
        raise RequestError("'chat_template_kwargs' must be an object", param="chat_template_kwargs")
    hint = template_hint(template) if plan.dialect == "auto" else None
    prompt = build_prompt(
        template, body["messages"], body.get("tools"), tool_fallback=tool_fallback,
        dialect=fallback_dialect, tool_choice=body.get("tool_choice"),
        parallel=body.get("parallel_tool_calls", True) is not False, variables=variables,
        guard=_guard(plan, hint) if guard else None,
    )
    stops = stop_markers(template)
    text_plan = TextPlan(**{f.name: getattr(plan, f.name) for f in fields(Plan)})
    text_plan.think = None  # the prompt tells where reasoning starts (_reasoning), not the answer
    if prompt.injected:
        text_plan.dialect = get_dialect(fallback_dialect)
    else:
        text_plan.hint = hint
    _reasoning(text_plan, prompt)
    text_plan.tools = plan.tools if plan.tools is not None else _NO_TOOLS
    text_plan.drop_tokens = tuple(dict.fromkeys((*stops, *_end_tokens(text_plan))))
    text_plan.body = completions_body(body, prompt.text, stops)
    return text_plan


def _guard(plan: Plan, hint: str | None) -> ResultGuard:
    """The guard of the results this answer is read after: the plan's dialects (every one under
    auto), and its tools (none offered: no call can be made, so only markers are guarded)."""
    names = plan.tools.schemas if plan.tools is not None else ()
    return ResultGuard.for_parser(plan.dialect, hint, names)


_HINTS: dict[int, tuple[ChatTemplate, str | None]] = {}


def template_hint(template: ChatTemplate) -> str | None:
    """The dialect ``template`` writes calls in (probed once per template object)."""
    kept = _HINTS.get(id(template))
    if kept is None or kept[0] is not template:
        kept = _HINTS[id(template)] = (template, template_dialect(template))
    return kept[1]


def _reasoning(plan: TextPlan, prompt: Prompt) -> None:
    family = plan.family
    markers = family.reasoning if family is not None else ("<think>", "</think>")
    plan.reasoning = markers is not None
    plan.in_reasoning = markers is not None and prompt.text.rstrip().endswith(markers[0])


def _end_tokens(plan: TextPlan) -> tuple[str, ...]:
    family = plan.family
    return () if family is None else family.end_tokens


def completions_body(body: dict[str, Any], prompt: str, stops: tuple[str, ...]) -> dict[str, Any]:
    """The ``/v1/completions`` request: the chat request's sampling fields, the prompt, the
    end-of-turn stops after the client's own, and special tokens kept."""
    out = {k: v for k, v in body.items() if k not in _CHAT_ONLY}
    if "max_tokens" not in out and body.get("max_completion_tokens") is not None:
        out["max_tokens"] = body["max_completion_tokens"]
    stop = body.get("stop")
    given = [stop] if isinstance(stop, str) else list(stop or ())
    out["stop"] = given + [s for s in stops if s not in given]
    if not out["stop"]:
        del out["stop"]
    out["prompt"] = prompt
    out["skip_special_tokens"] = False
    out["spaces_between_special_tokens"] = False
    return out


def chat_chunk(chunk: Any) -> dict[str, Any]:
    """A text-completion chunk as the chat chunk an upstream would have sent."""
    if not isinstance(chunk, dict):
        return {}
    out = {k: chunk[k] for k in ("id", "created", "model", "system_fingerprint", "usage") if k in chunk}
    if "error" in chunk:
        out["error"] = chunk["error"]
    choices = []
    for ch in chunk.get("choices") or ():
        if isinstance(ch, dict):
            text = ch.get("text")
            delta = {"content": text} if isinstance(text, str) and text else {}
            choices.append({"index": ch.get("index", 0), "delta": delta,
                            "finish_reason": ch.get("finish_reason")})
    out["choices"] = choices
    return out


class TextAnswerStream(AnswerStream):
    """AnswerStream over text-completion chunks (each read as the chat chunk it stands for)."""

    def feed(self, chunk: dict[str, Any]) -> list[tuple[int, list[Event]]]:
        converted = chat_chunk(chunk)
        if "error" in converted and not converted["choices"]:
            return []
        return super().feed(converted)


def whole_answer(answer: Any, plan: TextPlan) -> tuple[dict[str, Any], Provenance]:
    """A non-streamed text completion as a chat.completion: the same translation, fed once.
    Raises RequestError when ``tool_choice`` is unmet or a call is malformed."""
    if not isinstance(answer, dict) or not isinstance(answer.get("choices"), list):
        raise RequestError("the upstream's completion has no choices", status=502, type="upstream_error")
    stream = TextAnswerStream(plan)
    events: dict[int, list[Event]] = {}
    for index, evs in stream.feed(answer) + stream.finish():
        events.setdefault(index, []).extend(evs)
    choices = [{"index": i, **_message(events[i]), "logprobs": None} for i in sorted(events)]
    for choice in choices:  # the key order of a chat.completion choice
        choice["finish_reason"] = choice.pop("finish_reason")
    out = {"id": answer.get("id", "chatcmpl-toolbridge"), "object": "chat.completion",
           "created": answer.get("created", 0), "model": answer.get("model", ""), "choices": choices}
    if answer.get("usage") is not None:
        out["usage"] = answer["usage"]
    return out, stream.provenance


def _message(events: list[Event]) -> dict[str, Any]:
    """One choice's events folded into its message and finish reason."""
    encoder = ChunkEncoder()
    finish = [ev.reason for ev in events if isinstance(ev, Finish)]
    library: list[Event] = []  # a call released whole, as the library's events say it
    for ev in events:
        if isinstance(ev, WholeCall):
            library += (ToolCallBegin(ev.index, ev.id, ev.name), ToolCallEnd(ev.index, ev.arguments))
        else:
            library.append(ev)
    deltas = encoder.encode(library) + encoder.finish()
    return {"message": assemble(deltas), "finish_reason": finish[-1] if finish else None}
