"""Mistral: ``[TOOL_CALLS]`` then a JSON array (older tokenizers) or ``NAME[ARGS]{json}`` (v11+).

Samples (the Mistral Nemo, Mistral Small 3.2 and Ministral 3 Reasoning chat templates)::

    [TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1b2c3d4e"}]
    [TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Paris"}
    [THINK]The user wants the weather.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}

The v11+ form repeats ``[TOOL_CALLS]`` before every call; ``[CALL_ID]ID`` (Small 3.2) is
optional, and so is ``[ARGS]``, which detokenisers that drop special tokens erase. Reasoning
(Magistral, Ministral 3) is ``[THINK]...[/THINK]``. All of these are special tokens. Magistral
Small 2506 reasons in plain text, ``<think>...</think>``, as its system prompt asks: read alike.
"""

from __future__ import annotations

import json
import re
from functools import partial

from ..syntax.bodies.array import ChooseBody, JsonArrayBody
from ..syntax.bodies.named import NamedJsonBody
from ..syntax.dialect import THINK, Calls, Dialect, register
from ..syntax.shape import Shape

HEADER = re.compile(r"\s*(?P<name>[A-Za-z_][\w.\-:/]*)\s*(?:\[CALL_ID\]\s*[\w\-]+\s*)?(?:\[ARGS\]\s*)?")

# A list of call objects, a lone call object (read as a one-call list), or NAME[ARGS]{json}.
body = partial(ChooseBody, choices={"[": JsonArrayBody, "{": JsonArrayBody}, default=partial(NamedJsonBody, header=HEADER))


def render(calls: Calls) -> str:
    """Calls as the v11+ templates (Devstral, Magistral, Ministral 3) write them."""
    return "".join(f"[TOOL_CALLS]{n}[ARGS]" + json.dumps(a, ensure_ascii=False) for n, a in calls)


MISTRAL = register(
    Dialect(
        name="mistral",
        aliases=("magistral", "ministral", "devstral", "mistral_v11"),
        call_start=("[TOOL_CALLS]",),
        body=body,
        reasoning=("[THINK]", "[/THINK]"),
        reasoning_also=THINK,  # Magistral Small 2506 reasons in plain-text tags (its system prompt's)
        calls_in_reasoning=False,  # [THINK] is always closed and may quote a call
        special_markers=True,
        end_tokens=("</s>", "[INST]", "[/INST]"),
        render=render,
        shape=Shape(calls=("[TOOL_CALLS]{NAME}[ARGS]{ARGS}",), trigger="[TOOL_CALLS]"),
        sample='[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
    )
)
