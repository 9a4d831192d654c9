"""GLM-4.5 / 4.6 (``glm45``) and GLM-4.7 / 5.x (``glm47``): a name then ``<arg_key>``/``<arg_value>`` pairs.

Samples (the GLM-4.6 and GLM-4.7 chat templates)::

    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Paris</arg_value>
    </tool_call>

    <tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>

The two versions differ only in the newlines between elements, which the reader accepts either
way; they are two rows so that each renders its own spelling. Values keep their whitespace.
"""

from __future__ import annotations

from functools import partial

from ..syntax.bodies.argkey import ArgKeyBody, ArgKeyTags, render_argkey
from ..syntax.dialect import Dialect, register
from ..syntax.shape import Shape

TAGS = ArgKeyTags()
# <tool_call>, <arg_key>... are special tokens of the GLM tokenizers; so are these.
END_TOKENS = ("<|endoftext|>", "<|user|>", "<|observation|>", "<|assistant|>", "<|system|>")


def shape(nl: str) -> Shape:
    """The calls as ``render_argkey`` writes them; a value ends at the call's close tag too."""
    return Shape(calls=(f"<tool_call>{{NAME}}{nl}{{ARGS}}</tool_call>",),
                 args=f"<arg_key>{{KEY}}</arg_key>{nl}<arg_value>{{VALUE}}</arg_value>{nl}",
                 value_ends=(TAGS.block_close,), separator="\n", trigger="<tool_call>")


GLM45 = register(
    Dialect(
        name="glm45",
        aliases=("glm4", "glm4_moe", "glm46"),
        call_start=("<tool_call>",),
        body=partial(ArgKeyBody, tags=TAGS),
        special_markers=True,
        end_tokens=END_TOKENS,
        render=partial(render_argkey, TAGS, newlines=True),
        sample="<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
        shape=shape("\n"),
    )
)

GLM47 = register(
    Dialect(
        name="glm47",
        aliases=("glm5", "glm4_7"),
        call_start=("<tool_call>",),
        body=partial(ArgKeyBody, tags=TAGS),
        special_markers=True,
        end_tokens=END_TOKENS,
        render=partial(render_argkey, TAGS, newlines=False),
        sample="<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
        shape=shape(""),
    )
)
