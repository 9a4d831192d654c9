"""Repairing a non-streamed upstream answer: native calls kept, calls in text recovered.

For each choice: native ``tool_calls`` win and are canonicalised; otherwise the content is parsed
with the dialect (and, when the operator opted in, the reasoning too). What is left of the text
stays content (``null`` when only whitespace remains). ``finish_reason`` becomes ``tool_calls``
when calls are returned and ``length`` when the output was cut inside a call. A call that must
be valid and is not raises ``validation.InvalidArguments``. ``Provenance`` counts where calls
came from, for the response header, the metrics and the log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..events import ToolCallBegin
from ..parsing.parser import message_reader, parse, parse_plain
from ..tools import Toolset
from .thinking import PLAIN, Lead, Verdict
from .upstream.native import check_calls, new_id
from .turn import Plan, RequestError
from .validation import enforce, native_verdicts

REASONING_KEYS = ("reasoning_content", "reasoning")
NO_TOOLS = Toolset([])  # a parser that only splits reasoning: every call-like block stays text


HEADERS_KEPT = 1024
_HEADERS: dict[tuple[Any, ...], str] = {}  # Provenance.header's text, by the figures


@dataclass
class Provenance:
    """Where one response's calls came from."""

    native: int = 0
    content: int = 0
    reasoning: int = 0
    rejected: int = 0  # call-like blocks (or native calls) not returned as calls: they stay text
    aborted: int = 0  # calls that began and were cut off or broke (the answer ends with length)
    repaired: int = 0  # deviations tolerated and arguments typed by the schema (the report's list)
    invalid: int = 0  # calls returned whose arguments do not match the tool's schema
    dialect: str | None = None  # with the auto parser: the dialect it recognised

    def header(self) -> str:
        """The ``x-toolbridge-calls`` header: the report's own words (written once per distinct
        figures: every answer's response head and access line give it)."""
        figures = (self.native, self.content, self.reasoning, self.rejected, self.aborted, self.repaired,
                   self.invalid, self.dialect)
        text = _HEADERS.get(figures)
        if text is None:
            text = (f"native={self.native}; content={self.content}; reasoning={self.reasoning}; "
                    f"rejected={self.rejected}; aborted={self.aborted}; repaired={self.repaired}; "
                    f"invalid={self.invalid}" + (f"; dialect={self.dialect}" if self.dialect else ""))
            if len(_HEADERS) < HEADERS_KEPT:  # call counts vary: keep the common figures
                _HEADERS[figures] = text
        return text

    def noted(self, parser: Any) -> None:
        """Keep the dialect an auto parser recognised (the first one, when choices differ)."""
        self.dialect = self.dialect or getattr(parser, "detected", None)

    @property
    def calls(self) -> int:
        return self.native + self.content + self.reasoning


def first_choice(answer: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A repaired answer's first choice and its message, for an API with one output ({} for
    what is missing)."""
    choices = answer.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice["message"] if isinstance(choice.get("message"), dict) else {}
    return choice, message


def answer_text(message: dict[str, Any]) -> str:
    """A message's content as text (content parts joined, as a few upstreams answer)."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def answer_reasoning(message: dict[str, Any]) -> str:
    """A message's reasoning, under either name upstreams give it."""
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    return reasoning if isinstance(reasoning, str) else ""


def parser_options(plan: Plan) -> dict[str, Any]:
    """The plan's options for a StreamParser, with the gateway's call ids (``native.new_id``)."""
    return {"call_id": new_id, **plan.parser_options}


def tool_choice_unmet(required: str) -> RequestError:
    what = "a tool call" if required == "any" else f"a call to {required!r}"
    return RequestError(f"tool_choice requires {what}, and the model's answer has none",
                        status=502, type="upstream_error", code="tool_choice_unmet")


class NotPlain(Exception):
    """An answer ``repair_completion`` was asked to read only at C speed (``plain``) is not
    read so: what it repaired so far is to be dropped, and the answer read again in full."""


def repair_completion(answer: dict[str, Any], plan: Plan,
                      plain: int | None = None) -> tuple[dict[str, Any], Provenance]:
    """Repair a chat.completion object in place; raises RequestError when tool_choice is unmet,
    InvalidArguments (a RequestError) when a call that must be valid is not. ``plain``: read
    each text only when it is read at C speed with at most this many calls
    (``parsing.parser.parse_plain``), else raise NotPlain (the answer half repaired): the same
    result, or the exception, in a time bounded by the answer's length."""
    provenance = Provenance()
    if plan.tools is None:
        if Lead.of(plan) is not None:  # only reasoning written in the content is read
            for choice in answer.get("choices") or ():
                if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
                    _reasoning_only(choice, plan, provenance, plain)
        return answer, provenance
    seen_ids: set[str] = set()
    for choice in answer.get("choices") or ():
        if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
            _repair_choice(choice, plan, provenance, seen_ids, plain)
    return answer, provenance


def _repair_choice(choice: dict[str, Any], plan: Plan, provenance: Provenance, seen_ids: set[str],
                   plain: int | None) -> None:
    message = choice["message"]
    leftovers: list[str] = []
    truncated = False
    verdicts: dict[str, tuple[str, ...]] = {}  # schema errors by call id
    if message.get("tool_calls"):
        checked = check_calls(message["tool_calls"], plan.tools, seen_ids)
        calls, leftovers = checked.calls, checked.rejected
        provenance.native += len(calls)
        provenance.invalid += checked.invalid
        if checked.invalid and plan.enforcing:
            verdicts = native_verdicts(plan, calls)
        _reasoning_only(choice, plan, provenance, plain)  # the upstream read the calls, not the reasoning
    else:
        cut = choice.get("finish_reason") == "length"  # a call the end would close is truncated
        # (not what the content's parser splits)
        own = [key for key in REASONING_KEYS if message.get(key)] if plan.recover_from_reasoning else ()
        calls, truncated = _from_text(message, "content", plan, provenance, verdicts, cut, None, plain)
        provenance.content += len(calls)
        if plan.recover_from_reasoning:
            for key in own:
                found, broke = _from_text(message, key, plan, provenance, verdicts, cut, None, plain)
                provenance.reasoning += len(found)
                calls, truncated = calls + found, truncated or broke
    provenance.rejected += len(leftovers)
    if not plan.parallel and len(calls) > 1:
        provenance.rejected += len(calls) - 1
        calls = calls[:1]
    if plan.required and not calls and choice.get("finish_reason") != "length":
        raise tool_choice_unmet(plan.required)  # (cut by the limit: the answer is length, as the APIs say)
    if verdicts:  # (without one, no call has errors to enforce)
        enforce(plan, calls, verdicts)
    _settle(choice, message, calls, leftovers, truncated)


def _reasoning_only(choice: dict[str, Any], plan: Plan, provenance: Provenance, plain: int | None) -> None:
    """Split reasoning written in the content out of an answer whose content holds no call to
    read (no tools offered, or native calls), as a stream's content parser does."""
    cut = choice.get("finish_reason") == "length"
    _from_text(choice["message"], "content", plan, provenance, {}, cut, NO_TOOLS, plain)


def _from_text(message: dict[str, Any], key: str, plan: Plan, provenance: Provenance,
               verdicts: dict[str, tuple[str, ...]], cut: bool = False,
               tools: Toolset | None = None, plain: int | None = None) -> tuple[list[Any], bool]:
    text = message.get(key)
    if not isinstance(text, str) or not text:
        return [], False
    # (the upstream that gave reasoning in its own field reads reasoning itself: opening_only,
    # which only mode ``asked`` asks about; a plan with no ``think`` reads the content as written)
    how = plan.think if key == "content" else None
    verdict = Lead.read_whole(plan, text, how == "asked" and bool(answer_reasoning(message))) if how else None
    if verdict is None or not verdict[0]:
        if tools is not None:
            return [], False  # nothing to split, nothing to read
        # Read at C speed (the common answer), the message is all there is to take: its report
        # would say nothing, and it is cut short only when it ends inside a call, which it does not.
        reader = message_reader(plan.dialect, plan.tools, plan.drop_tokens, plan.coerce, plan.repair)
        if reader is not None and plan.decoded is None:
            plan.decoded = {}
        read = reader.plain_message(text, plain, new_id, plan.decoded) if reader is not None else None
        if read is not None:
            content, calls = read
            if calls:  # (the content beside calls as ``openai.assistant_message`` has it)
                content = content.rstrip() or None
            message[key] = content if key == "content" or content else None
            return calls, False
        if plain is not None:
            raise NotPlain  # (parse_plain reads no more than parse_message)
        verdict = PLAIN
    read, truncated = _parsed(message, text, plan, provenance, verdicts, cut,
                              plan.tools if tools is None else tools, verdict, plain)
    message[key] = read["content"] if key == "content" or read["content"] else None
    return read.get("tool_calls", []), truncated


def _parsed(message: dict[str, Any], text: str, plan: Plan, provenance: Provenance,
            verdicts: dict[str, tuple[str, ...]], cut: bool, offered: Toolset | None, verdict: Verdict,
            plain: int | None) -> tuple[dict[str, Any], bool]:
    """A text's message read by the parser (``verdict``: how reasoning is split out of it),
    what the parser reported counted in ``provenance`` and ``verdicts``; and whether the output
    was cut inside a call."""
    options = parser_options(plan)
    split, inside = verdict
    if split:  # reasoning written in the content (thinking.py)
        options.update(reasoning=True, in_reasoning=inside)
    if plain is None:
        result = parse(text, plan.dialect, offered, cut, **options)
    else:
        read = parse_plain(text, plan.dialect, offered, cut, plain, **options)
        if read is None:
            raise NotPlain
        result = read
    if split:  # the answer without the white space that led it (thinking.py, as a stream has it)
        thought = (result.message.get("reasoning_content") or "").lstrip()
        if thought and not answer_reasoning(message):
            message["reasoning_content"] = thought
        if isinstance(result.message["content"], str):
            result.message["content"] = result.message["content"].lstrip()
    provenance.dialect = provenance.dialect or result.report.detected
    provenance.rejected += len(result.report.rejected)
    provenance.aborted += len(result.report.aborted)
    provenance.repaired += len(result.report.repaired)
    provenance.invalid += len(result.report.invalid)
    if result.report.invalid and plan.enforcing:  # the parser's verdicts, by call id
        ids = {ev.index: ev.id for ev in result.events if isinstance(ev, ToolCallBegin)}
        verdicts.update((ids[bad["index"]], tuple(bad["errors"])) for bad in result.report.invalid)
    return result.message, result.finish_reason == "length"


def _settle(choice: dict[str, Any], message: dict[str, Any], calls: list[Any], leftovers: list[str],
            truncated: bool) -> None:
    content = message.get("content")
    if leftovers:  # rejected native calls stay visible as text
        content = "\n".join(([content] if content else []) + leftovers)
    if calls:
        message["tool_calls"] = calls
        message["content"] = content if isinstance(content, str) and content.strip() else None
        choice["finish_reason"] = "length" if truncated else "tool_calls"
    else:
        message.pop("tool_calls", None)
        message["content"] = content
        if truncated:
            choice["finish_reason"] = "length"
