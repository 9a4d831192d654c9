"""Nemotron 3 (``nemotron_v3``): Qwen3-Coder XML with ``<think>`` reasoning.

Sample (the NVIDIA-Nemotron-3-Nano-30B-A3B chat template; llama.cpp's Nemotron 3 tests)::

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

The same reader and tolerances as ``qwen3_coder``; a row of its own for its name, reasoning
and end tokens.
"""

from __future__ import annotations

from functools import partial

from .._body_xml import XmlBody, XmlTags, render_xml
from ..dialect import Dialect, register

TAGS = XmlTags()

NEMOTRON_V3 = register(
    Dialect(
        name="nemotron_v3",
        aliases=("nemotron3", "nemotron_3", "nemotron_nano_v3"),
        call_start=("<tool_call>", TAGS.function[0]),
        body=partial(XmlBody, tags=TAGS),
        end_tokens=("<|im_end|>", "<|im_start|>", "<|endoftext|>"),
        render=partial(render_xml, TAGS),
        sample=render_xml(TAGS, [("get_weather", {"city": "Paris"})]),
    )
)
