"""One prompt for one request: the native template when it renders what the conversation holds,
the injected protocol when it does not and the caller opted in, a clear refusal otherwise.

With ``tool_fallback`` off, ``build_prompt`` is exactly ``ChatTemplate.render``: the protocol
code is not on that path, so prompts are byte-identical to rendering without this feature.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import FLAG_HINT, FallbackRequired, RenderError
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
    """What the conversation needs that the template does not render (empty: nothing)."""
    needs = []
    if tools and tool_choice != "none" and not caps.tools:
        needs.append("tool declarations")
    if any(m.get("role") == "assistant" and m.get("tool_calls") for m in messages) \
            and not caps.tool_calls:
        needs.append("assistant tool calls")
    if any(m.get("role") == "tool" for m in messages) and not caps.tool_role:
        needs.append("tool results")
    return needs


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
    decode_arguments: bool = False,
    variables: Mapping[str, Any] | None = None,
) -> Prompt:
    """Render a request's prompt.

    Raises:
        FallbackRequired: the template lacks what the conversation needs and ``tool_fallback``
            is off (the message names the flag).
        RenderError: bad messages, or the template failed.
    """
    extra = dict(variables or {})
    if isinstance(messages, (str, bytes)) or not all(isinstance(m, Mapping) for m in messages):
        raise RenderError("messages must be a list of message objects")
    if not tools and not any(m.get("role") == "tool" or m.get("tool_calls") for m in messages):
        lacking: list[str] = []
    else:
        lacking = missing(capabilities(template), messages, tools, tool_choice)
    if not lacking:
        text = template.render(messages, tools, add_generation_prompt=add_generation_prompt,
                               decode_arguments=decode_arguments, **extra)
        return Prompt(text, injected=False)
    if not tool_fallback:
        raise FallbackRequired(
            f"chat template {template.name} does not render {', '.join(lacking)}; enable the "
            f"prompt-injected tool protocol with {FLAG_HINT}")
    caps = capabilities(template)
    rewritten = inject(messages, tools, dialect=dialect, tool_choice=tool_choice,
                       parallel=parallel, system_role=caps.system_role)
    text = template.render(rewritten, None, add_generation_prompt=add_generation_prompt, **extra)
    return Prompt(text, injected=True)
