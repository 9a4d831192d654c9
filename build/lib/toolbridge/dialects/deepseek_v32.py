"""DeepSeek V3.2 (``deepseek_v32``) and V4 / V4.1 (``deepseek_v4``): DSML invoke blocks.

Sample (the DeepSeek-V3.2 chat template; vLLM's, SGLang's and llama.cpp's DSML parser tests)::

    <think>The user wants the weather.</think>

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>
    <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

V4 names the block ``<｜DSML｜tool_calls>``; V4.1 writes ``<｜DSML｜ calls>`` and
``<｜DSML｜ invoke name=...>`` (a space after the bars), read by the same row. ``string="true"``
marks a raw string, ``string="false"`` JSON; the tool schema, when it knows the parameter, has the
last word. Tolerated: ASCII bars (``|DSML|``), an invoke holding one JSON object instead of
parameters, self-closing ``<｜DSML｜invoke name="x"/>``, a lone ``arguments``/``input`` parameter
wrapping the whole arguments (unwrapped when the schema has no such key), missing close tags.
V4 may open the block inside reasoning; the block then ends the reasoning.
"""

from __future__ import annotations

import json
from functools import partial

from ..syntax.bodies.attrxml import AttrTags, AttrXmlBody
from ..syntax.dialect import Calls, Dialect, register

SPELLINGS = ("｜DSML｜", "|DSML|")
V41 = tuple(s + " " for s in SPELLINGS)  # V4.1 puts a space after the bars


def dsml_tags(prefixes: tuple[str, ...], block: tuple[str, ...]) -> AttrTags:
    """The DSML tags for the given namespace spellings and block names."""
    return AttrTags(
        invoke=tuple(f"<{p}invoke" for p in prefixes),
        invoke_close=tuple(f"</{p}invoke>" for p in prefixes),
        param=tuple(f"<{p}parameter" for p in prefixes),
        param_close=tuple(f"</{p}parameter>" for p in prefixes),
        block_close=tuple(f"</{p}{b}>" for p in prefixes for b in block),
        string_attr="string",
        unwrap=("arguments", "input"),
        json_body=True,
    )


def render_dsml(block: str, calls: Calls) -> str:
    """Calls as the DeepSeek V3.2/V4 templates write them."""
    d = SPELLINGS[0]
    out = [f"<{d}{block}>\n"]
    for name, args in calls:
        out.append(f'<{d}invoke name="{name}">\n')
        for k, v in args.items():
            text, string = (v, "true") if isinstance(v, str) else (json.dumps(v, ensure_ascii=False), "false")
            out.append(f'<{d}parameter name="{k}" string="{string}">{text}</{d}parameter>\n')
        out.append(f"</{d}invoke>\n")
    out.append(f"</{d}{block}>")
    return "".join(out)


V32_TAGS = dsml_tags(SPELLINGS, ("function_calls",))
V4_TAGS = dsml_tags(SPELLINGS + V41, ("tool_calls", "calls"))
END_TOKENS = ("<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>")

DEEPSEEK_V32 = register(
    Dialect(
        name="deepseek_v32",
        aliases=("deepseekv32", "deepseek_v3_2"),
        call_start=tuple(f"<{p}function_calls>" for p in SPELLINGS),
        body=partial(AttrXmlBody, tags=V32_TAGS),
        special_markers=True,
        end_tokens=END_TOKENS,
        render=partial(render_dsml, "function_calls"),
        sample=render_dsml("function_calls", [("get_weather", {"city": "Paris", "days": 3})]),
    )
)

DEEPSEEK_V4 = register(
    Dialect(
        name="deepseek_v4",
        aliases=("deepseekv4", "deepseek_v41", "deepseekv41", "deepseek_v4_1"),
        call_start=tuple(f"<{p}tool_calls>" for p in SPELLINGS) + tuple(f"<{p}calls>" for p in V41),
        body=partial(AttrXmlBody, tags=V4_TAGS),
        special_markers=True,
        end_tokens=END_TOKENS,
        render=partial(render_dsml, "tool_calls"),
        sample=render_dsml("tool_calls", [("get_weather", {"city": "Paris", "days": 3})]),
    )
)
