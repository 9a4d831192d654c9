"""Poolside v1 (``poolside_v1``): GLM-style ``<arg_key>``/``<arg_value>`` pairs after the name.

Sample (SGLang's Poolside v1 detector tests)::

    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Paris</arg_value>
    </tool_call>

The GLM-4.5 reader (``ArgKeyBody``): the name up to the first tag, values raw text typed by the
tool schema and kept exactly as written, ``<tool_call>NAME</tool_call>`` for no arguments. A
closed key followed by another key or by ``</tool_call>`` instead of its value is dropped and
reported, and the call stands (as SGLang's Poolside detector specifies); a key that runs into
another tag without ``</arg_key>`` is malformed and stays content.
"""

from __future__ import annotations

from functools import partial

from ..syntax.bodies.argkey import ArgKeyBody, ArgKeyTags, render_argkey
from ..syntax.dialect import Dialect, register
from ..syntax.shape import Shape

TAGS = ArgKeyTags(orphan_keys=True)

POOLSIDE_V1 = register(
    Dialect(
        name="poolside_v1",
        aliases=("poolside", "poolside-v1"),
        call_start=("<tool_call>",),
        body=partial(ArgKeyBody, tags=TAGS),
        render=partial(render_argkey, TAGS, newlines=True),
        shape=Shape(calls=(f"<tool_call>{{NAME}}\n{{ARGS}}{TAGS.block_close}",),
                    args=f"{TAGS.key[0]}{{KEY}}{TAGS.key[1]}\n{TAGS.value[0]}{{VALUE}}{TAGS.value[1]}\n",
                    value_ends=(TAGS.block_close,), separator="\n", trigger="<tool_call>"),
        sample="<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
    )
)
