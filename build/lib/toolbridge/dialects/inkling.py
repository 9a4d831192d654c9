"""Inkling: self-describing blocks, each a role token, a header, a content-kind token and a body.

Sample (the Inkling chat template renders an assistant turn this way; vLLM's and SGLang's Inkling
parsers read it)::

    <|message_model|><|content_thinking|>The user wants the weather.<|end_message|><|message_model|>get_weather<|content_invoke_tool_json|>{"name": "get_weather", "args": {"city": "Paris"}}<|end_message|>

A block is ``<|message_model|>`` + an optional header (the tool's name, metadata) + a kind token +
body + ``<|end_message|>`` (or ``<|content_model_end_sampling|>``). Kinds: ``<|content_thinking|>``
is reasoning, ``<|content_text|>`` visible text, ``<|content_invoke_tool_json|>`` a call whose body
is one JSON object with the arguments under ``args`` (``arguments`` is accepted; the keys come in
either order), and ``<|content_invoke_tool_text|>`` / ``<|content_tool_error|>`` text shown as
content. Blocks repeat in any order; text may follow calls. The role token and header are read
as structure; the kind and end tokens of text blocks are the family's other special tokens
(``end_tokens``: dropped from content when the upstream keeps special tokens, kept verbatim
otherwise, like any end-of-turn token). When the prompt ends inside a block, feed its tail first
(``<|message_model|>``; or start in reasoning after ``<|content_thinking|>``), as for any
prefilled turn.
"""

from __future__ import annotations

import json
from functools import partial

from ..syntax.bodies.header import HeaderBody
from ..syntax.bodies.json import JsonEnvelopeBody
from ..syntax.dialect import Body, Calls, CallSink, Dialect, register

MESSAGE, END, END_SAMPLING = "<|message_model|>", "<|end_message|>", "<|content_model_end_sampling|>"
THINKING, TEXT, INVOKE_JSON = "<|content_thinking|>", "<|content_text|>", "<|content_invoke_tool_json|>"
SHOWN = (TEXT, "<|content_invoke_tool_text|>", "<|content_tool_error|>")  # kinds whose body is content
KINDS = (THINKING, INVOKE_JSON, *SHOWN)

invoke = partial(JsonEnvelopeBody, close=END, args_keys=("args", "arguments", "parameters"))


def body(sink: CallSink, opened_by: str) -> Body:
    if opened_by == MESSAGE:
        return HeaderBody(sink, opened_by, kinds=KINDS, readers={INVOKE_JSON: invoke})
    return invoke(sink, opened_by)


def render(calls: Calls) -> str:
    """Calls as the Inkling template writes them: one model message per call."""
    return "".join(
        f"{MESSAGE}{name}{INVOKE_JSON}" + json.dumps({"name": name, "args": args}, ensure_ascii=False) + END
        for name, args in calls
    )


INKLING = register(
    Dialect(
        name="inkling",
        aliases=("inkling_small",),
        call_start=(MESSAGE, INVOKE_JSON),
        body=body,
        reasoning=(THINKING, END),
        special_markers=True,
        end_tokens=(*SHOWN, END, END_SAMPLING, "<|message_tool|>", "<|message_user|>", "<|message_system|>"),
        render=render,
        sample=(
            f"{MESSAGE}{THINKING}The user wants the weather.{END}{MESSAGE}get_weather{INVOKE_JSON}"
            '{"name": "get_weather", "args": {"city": "Paris"}}' + END
        ),
    )
)
