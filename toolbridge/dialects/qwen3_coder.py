"""Qwen3-Coder / Qwen3.5 / Qwen3.6 XML: ``<function=NAME>`` with raw-text ``<parameter=K>`` values.

Sample (the Qwen3-Coder and Qwen3.5 chat templates)::

    <tool_call>
    <function=write_file>
    <parameter=path>
    /tmp/a.txt
    </parameter>
    <parameter=mode>
    644
    </parameter>
    </function>
    </tool_call>

Nemotron 3 (``nemotron_v3``) and Step-3.5 (``step3p5``) write the same format and are rows below.

Values are raw text: one leading and one trailing newline are trimmed and the type comes from the
tool schema. Tolerated: a missing ``</parameter>``, ``<function=`` without the wrapper (also when
only the closing ``</tool_call>`` is present), several functions in one wrapper, no parameters.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from ..syntax.bodies.xml import XmlBody, XmlTags, render_xml
from ..syntax.dialect import Dialect, register
from ..syntax.shape import Shape

SAMPLE = (
    "<tool_call>\n<function=write_file>\n<parameter=path>\n/tmp/a.txt\n</parameter>\n"
    "<parameter=mode>\n644\n</parameter>\n</function>\n</tool_call>"
)

TAGS = XmlTags()

QWEN3_CODER = register(
    Dialect(
        name="qwen3_coder",
        aliases=("qwen3_xml", "qwen35", "qwen3_5", "qwen36"),
        call_start=("<tool_call>", TAGS.function[0]),
        body=partial(XmlBody, tags=TAGS),
        render=partial(render_xml, TAGS),
        end_tokens=("<|im_end|>", "<|endoftext|>", "<|im_start|>"),
        sample=SAMPLE,
        shape=Shape(calls=("<tool_call>\n<function={NAME}>\n{ARGS}</function>\n</tool_call>",),
                    args="<parameter={KEY}>\n{VALUE}\n</parameter>\n", separator="\n",
                    value_ends=(TAGS.parameter[0], TAGS.function_close), trigger="<tool_call>"),
        # Inside the wrapper a function tag comes first: any other first character is refused.
        block_opens={"<tool_call>": (TAGS.function[0],)},
    )
)

# Families that write the same XML (their chat templates: NVIDIA-Nemotron-3-Nano-30B-A3B,
# stepfun-ai Step-3.5-Flash; llama.cpp's and vLLM's tests of both) are rows of their own for
# their names, with the same reader, tolerances and <think> reasoning. Both templates open
# <think> in the prompt and always write </think> before the answer, so a call the model quotes
# while thinking stays reasoning (llama.cpp's Nemotron 3 tests expect exactly that).
NEMOTRON_V3 = register(
    replace(QWEN3_CODER, name="nemotron_v3", aliases=("nemotron3", "nemotron_3", "nemotron_nano_v3"),
            calls_in_reasoning=False)
)
STEP3P5 = register(replace(NEMOTRON_V3, name="step3p5", aliases=("step3.5", "step3_5", "step35")))
