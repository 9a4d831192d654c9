"""Hermes / Qwen2.5 / Qwen3: one JSON object per call inside ``<tool_call>`` tags.

Sample (Qwen3 with thinking; the Qwen2.5/Qwen3 and Hermes 2 Pro/3 chat templates)::

    <think>
    The user wants the weather.
    </think>

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

Tolerated: ``parameters`` for ``arguments``, arguments given as a JSON string, a missing close tag
at the end of output, a literal ``</tool_call>`` inside a string value (the object is bounded by
JSON structure), raw newlines inside JSON strings (escaped). Hermes 2 Pro and Qwen2.5 models also
put the same object in other wrappers (``<tools>``, ``<function_call>``, a ```` ```json ```` fence,
...), write ``<function=NAME>{...}</function>``, or answer with the bare object alone; those
are read too. A wrapper whose content is
not a call object is prose and stays content.
"""

from __future__ import annotations

import json

from ..syntax.bodies.json import JsonEnvelopeBody, NameJsonBody
from ..syntax.dialect import Body, Calls, CallSink, Dialect, register
from ..syntax.shape import Shape

SAMPLE = (
    "<think>\nThe user wants the weather.\n</think>\n\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)

# Opening marker -> closing marker of the wrappers around one JSON call object.
WRAPPERS = {
    "<tool_call>": "</tool_call>",
    "<function_call>": "</function_call>",
    "<tool>": "</tool>",
    "<tools>": "</tools>",
    "<response>": "</response>",
    "<json>": "</json>",
    "<JSON>": "</JSON>",
    "<xml>": "</xml>",
    "```json": "```",
    "```xml": "```",
    "```": "```",
}
# Opening marker -> what ends the name, for <function=NAME>{json}</function>.
NAMED = {"<function=": ">", '<function name="': '">'}


def body(sink: CallSink, opened_by: str) -> Body:
    if opened_by == "{":  # a bare call object as the whole answer: its wrapper is missing
        return JsonEnvelopeBody(sink, opened_by, close="", missing="<tool_call>")
    if opened_by in NAMED:
        return NameJsonBody(sink, opened_by, name_end=NAMED[opened_by], close="</function>")
    inner = WRAPPERS if opened_by.startswith("```") else None  # a fence may hold a tagged call
    lenient = opened_by != "<tool_call>"
    return JsonEnvelopeBody(sink, opened_by, close=WRAPPERS[opened_by], inner=inner, lenient=lenient)


def render(calls: Calls) -> str:
    """Calls as Hermes/Qwen templates write them: one tagged JSON object each."""
    return "\n".join(
        "<tool_call>\n" + json.dumps({"name": n, "arguments": a}, ensure_ascii=False) + "\n</tool_call>"
        for n, a in calls
    )


HERMES = register(
    Dialect(
        name="hermes",
        aliases=("qwen25", "qwen3", "qwen"),
        call_start=(*WRAPPERS, *NAMED),
        bare_start=("{",),
        body=body,
        render=render,
        end_tokens=("<|im_end|>", "<|endoftext|>", "<|im_start|>"),
        sample=SAMPLE,
        shape=Shape(calls=('<tool_call>\n{"name": "{NAME}", "arguments": {ARGS}}\n</tool_call>',),
                    separator="\n", trigger="<tool_call>"),
        # A tag wrapper's block is the call object: anything but "{" is refused at once (a
        # fence may also hold a tagged call, so its blocks are read).
        block_opens={m: ("{",) for m in WRAPPERS if not m.startswith("```")},
    )
)
