"""MiniMax-M2 / M2.1: ``<invoke name=...>`` elements with raw-text ``<parameter name=...>`` values.

Sample (the MiniMax-M2 chat template; vLLM's and llama.cpp's MiniMax-M2 parser tests)::

    <think>
    The user wants the weather.
    </think>

    <minimax:tool_call>
    <invoke name="get_weather">
    <parameter name="city">Paris</parameter>
    <parameter name="days">3</parameter>
    </invoke>
    </minimax:tool_call>

Values are raw text, written as they are (no newline trimming) and typed by the tool schema.
Names may be unquoted or single-quoted. Tolerated: ``<invoke name=`` without the wrapper (also
when only the closing wrapper tag is present), missing parameter, invoke or block close tags.
"""

from __future__ import annotations

from functools import partial

from ..syntax.bodies.attrxml import AttrTags, AttrXmlBody
from ..syntax.dialect import Calls, Dialect, raw_value, register
from ..syntax.shape import Shape

TAGS = AttrTags(block_close=("</minimax:tool_call>",))

SAMPLE = (
    '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n'
    '<parameter name="days">3</parameter>\n</invoke>\n</minimax:tool_call>'
)


def render(calls: Calls) -> str:
    """Calls as the MiniMax-M2 template writes them: one wrapper around every invoke."""
    invokes = "".join(
        f'<invoke name="{name}">\n'
        + "".join(f'<parameter name="{k}">{raw_value(v)}</parameter>\n' for k, v in args.items())
        + "</invoke>\n"
        for name, args in calls
    )
    return f"<minimax:tool_call>\n{invokes}</minimax:tool_call>"


MINIMAX_M2 = register(
    Dialect(
        name="minimax_m2",
        aliases=("minimax-m2", "minimax_m21", "minimax_m2_1"),
        call_start=("<minimax:tool_call>", '<invoke name='),
        body=partial(AttrXmlBody, tags=TAGS),
        special_markers=True,
        # MiniMax's role markers: "]~b]ai" opens a turn, "[e~[" ends one, "]~!b[" begins the text.
        end_tokens=("[e~[", "]~b]", "]~!b["),
        render=render,
        shape=Shape(calls=('<invoke name="{NAME}">\n{ARGS}</invoke>\n',), args='<parameter name="{KEY}">{VALUE}</parameter>\n',
                    value_ends=('<parameter name=', '</invoke>'), section=("<minimax:tool_call>\n", "</minimax:tool_call>"),
                    trigger="<minimax:tool_call>"),
        sample=SAMPLE,
    )
)
