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

Values are raw text: one leading and one trailing newline are trimmed and the type comes from the
tool schema. Tolerated: a missing ``</parameter>``, ``<function=`` without the wrapper (also when
only the closing ``</tool_call>`` is present), several functions in one wrapper, no parameters.
"""

from __future__ import annotations

from functools import partial

from .._body_xml import XmlBody, XmlTags, render_xml
from ..dialect import Dialect, register

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
    )
)
