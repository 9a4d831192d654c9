"""One prompt for one request: the native template when it renders what the conversation holds,
the injected protocol when it does not and the caller opted in, a clear refusal otherwise.

With ``tool_fallback`` off and no ``guard``, ``build_prompt`` is exactly ``ChatTemplate.render``
with call arguments in the shape the template takes (``Capabilities.arguments``): the protocol
code is not on that path, so prompts are byte-identical to rendering without this feature. With a
``guard`` (``guard.ResultGuard``: the gateway's completions mode gives one by default), the
contents of ``role: "tool"`` messages go through it before the template sees them; a result that
holds nothing a parser could read as a call is unchanged. The injected protocol always guards
its results (with every dialect, whatever ``guard`` says).

A conversation is refused (``FallbackRequired``) only when the template would lose what the model
needs to go on: the declarations of offered tools, or the results of its calls. A template that
renders tool results but not the calls before them (LFM2, SmolLM3: their models write calls in
the turn's text, which a client gets back as ``tool_calls``) renders the loop as ``transformers``
and the serving engines do, the results shown and the calls left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import FLAG_HINT, FallbackRequired, RenderError
from .guard import ResultGuard
from .probe import Capabilities, end_markers, probe
from .protocol import inject
from .template import ChatTemplate

@dataclass(frozen=True)
class Prompt:
    """A rendered prompt and whether the injected protocol wrote it."""

    text: str
    injected: bool


_PROBED: dict[tuple[Any, ...], Any] = {}


def _key(template: ChatTemplate, what: str) -> tuple[Any, ...]:
    return (what, tuple(sorted(template.sources.items())), tuple(sorted(template.variables.items())))


def capabilities(template: ChatTemplate) -> Capabilities:
    """``probe(template)``, cached by the template's sources and variables."""
    key = _key(template, "capabilities")
    if key not in _PROBED:
        _PROBED[key] = probe(template)
    return _PROBED[key]  # type: ignore[no-any-return]


def stop_markers(template: ChatTemplate) -> tuple[str, ...]:
    """``end_markers(template)``, cached by the template's sources and variables."""
    key = _key(template, "stops")
    if key not in _PROBED:
        _PROBED[key] = end_markers(template)
    return _PROBED[key]  # type: ignore[no-any-return]


def missing(caps: Capabilities, messages: Sequence[Mapping[str, Any]],
            tools: Sequence[Mapping[str, Any]] | None, tool_choice: Any = None) -> list[str]:
    """What the conversation needs that the template does not render (empty: nothing).
    Calls the template leaves out are needed only when it renders no tool results either."""
    needs = []
    if tools and tool_choice != "none" and not caps.tools:
        needs.append("tool declarations")
    if any(m.get("role") == "assistant" and m.get("tool_calls") for m in messages) \
            and not caps.tool_calls and not caps.tool_role:
        needs.append("assistant tool calls")
    if any(m.get("role") == "tool" for m in messages) and not caps.tool_role:
        needs.append("tool results")
    return needs


def declared(prompt: str, tools: Sequence[Mapping[str, Any]] | None,
             tool_choice: Any = None) -> bool:
    """Whether ``prompt`` names every offered tool (True when none is offered or needed)."""
    if not tools or tool_choice == "none":
        return True
    for tool in tools:
        function = tool.get("function", tool) if isinstance(tool, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if isinstance(name, str) and name not in prompt:
            return False
    return True


def guarded(messages: Sequence[Mapping[str, Any]], guard: ResultGuard) -> list[Mapping[str, Any]]:
    """``messages`` with each tool result's content written through ``guard`` (other messages
    are the same objects)."""
    return [{**m, "content": guard.content(m.get("content"))}
            if m.get("role") == "tool" and m.get("content") is not None else m for m in messages]


def build_prompt(
    template: ChatTemplate,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None = None,
    *,
    tool_fallback: bool = False,
    dialect: str = "hermes",
    tool_choice: Any = None,
    parallel: bool = True,
    add_generation_prompt: bool = True,
    variables: Mapping[str, Any] | None = None,
    guard: ResultGuard | None = None,
) -> Prompt:
    """Render a request's prompt (``guard``: tool results written through it, in the native
    template; the injected protocol guards its own).

    Raises:
        FallbackRequired: the template lacks what the conversation needs and ``tool_fallback``
            is off (the message names the flag).
        RenderError: bad messages, or the template failed.
    """
    extra = dict(variables or {})
    if isinstance(messages, (str, bytes)) or not all(isinstance(m, Mapping) for m in messages):
        raise RenderError("messages must be a list of message objects")
    caps = None
    if tools or any(m.get("role") == "tool" or m.get("tool_calls") for m in messages):
        caps = capabilities(template)
    lacking = missing(caps, messages, tools, tool_choice) if caps is not None else []
    if not lacking:
        shown = guarded(messages, guard) if guard is not None else messages
        text = template.render(shown, tools, add_generation_prompt=add_generation_prompt,
                               arguments=caps.arguments if caps is not None else "object", **extra)
        if declared(text, tools, tool_choice):
            return Prompt(text, injected=False)
        lacking = ["tool declarations"]  # the template declares tools only in some conversations
    if not tool_fallback:
        raise FallbackRequired(
            f"chat template {template.name} does not render {', '.join(lacking)}; enable the "
            f"prompt-injected tool protocol with {FLAG_HINT}")
    caps = caps or capabilities(template)
    rewritten = inject(messages, tools, dialect=dialect, tool_choice=tool_choice,
                       parallel=parallel, system_role=caps.system_role)
    text = template.render(rewritten, None, add_generation_prompt=add_generation_prompt, **extra)
    return Prompt(text, injected=True)
