"""Step-3.5 (``step3p5``): Qwen3-Coder XML, one ``<tool_call>`` per function, ``<think>`` reasoning.

Sample (the stepfun-ai Step-3.5-Flash chat template; vLLM's and llama.cpp's Step-3.5 tests)::

    <think>
    The user wants the weather.
    </think>
    <tool_call>
    <function=get_weather>
    <parameter=city>
    Paris
    </parameter>
    </function>
    </tool_call>

The same reader and tolerances as ``qwen3_coder`` (one newline trimmed on each side of a value,
typing by the tool schema); a row of its own for its name, reasoning and end tokens.
"""

from __future__ import annotations

from functools import partial

from .._body_xml import XmlBody, XmlTags, render_xml
from ..dialect import Dialect, register

TAGS = XmlTags()

STEP3P5 = register(
    Dialect(
        name="step3p5",
        aliases=("step3.5", "step3_5", "step35"),
        call_start=("<tool_call>", TAGS.function[0]),
        body=partial(XmlBody, tags=TAGS),
        end_tokens=("<|im_end|>", "<|im_start|>", "<|endoftext|>"),
        render=partial(render_xml, TAGS),
        sample=render_xml(TAGS, [("get_weather", {"city": "Paris"})]),
    )
)
