"""Seed-OSS (``seed_oss``): Qwen3-Coder XML inside ``<seed:tool_call>``, reasoning in ``<seed:think>``.

Sample (the ByteDance Seed-OSS chat template; vLLM's and llama.cpp's Seed-OSS tests)::

    <seed:think>The user wants the weather.</seed:think>
    <seed:tool_call>
    <function=get_weather>
    <parameter=city>Paris</parameter>
    <parameter=days>3</parameter>
    </function>
    </seed:tool_call>

The template writes values inline, so they are kept exactly as written (no newline trimming) and
typed by the tool schema. ``<seed:cot_budget_reflect>`` notes inside reasoning stay reasoning, and
so does a call the model quotes while thinking: reasoning always ends with ``</seed:think>``
(vLLM's Seed-OSS tests expect a call written inside it to be no call); with reasoning extraction
off, the block passes through as content and a call quoted in it is still no call.
Tolerated as for Qwen3-Coder: a missing ``</parameter>``, ``<function=`` without the wrapper,
several functions in one wrapper, no parameters.
"""

from __future__ import annotations

from functools import partial

from ..syntax.bodies.xml import XmlBody, XmlTags, render_xml
from ..syntax.dialect import Dialect, register
from ..syntax.shape import Shape

TAGS = XmlTags(block_close="</seed:tool_call>", trim_newline=False)
WRAPPER = ("<seed:tool_call>", "</seed:tool_call>")
THINK = ("<seed:think>", "</seed:think>")

SEED_OSS = register(
    Dialect(
        name="seed_oss",
        aliases=("seed-oss", "seed"),
        call_start=(WRAPPER[0], TAGS.function[0]),
        body=partial(XmlBody, tags=TAGS),
        reasoning=THINK,
        calls_in_reasoning=False,
        special_markers=True,
        end_tokens=("<seed:eos>", "<seed:bos>"),
        render=partial(render_xml, TAGS, wrapper=WRAPPER),
        shape=Shape(calls=(f"{WRAPPER[0]}\n<function={{NAME}}>\n{{ARGS}}</function>\n{WRAPPER[1]}",),
                    args="<parameter={KEY}>{VALUE}</parameter>\n", separator="\n",
                    value_ends=(TAGS.parameter[0], TAGS.function_close), trigger=WRAPPER[0]),
        sample=render_xml(TAGS, [("get_weather", {"city": "Paris", "days": 3})], WRAPPER),
    )
)
