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
JSON structure), raw newlines inside JSON strings (escaped).
"""

from __future__ import annotations

from functools import partial

from .._body_json import JsonEnvelopeBody
from ..dialect import Dialect, register

SAMPLE = (
    "<think>\nThe user wants the weather.\n</think>\n\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)

HERMES = register(
    Dialect(
        name="hermes",
        aliases=("qwen25", "qwen3", "qwen"),
        call_start=("<tool_call>",),
        body=partial(JsonEnvelopeBody, close="</tool_call>"),
        sample=SAMPLE,
    )
)
