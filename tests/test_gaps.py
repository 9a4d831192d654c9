"""The dialect gaps seen in the wild, each through its dialect and through ``auto``, whole and
per character: GLM keys holding markup, end-of-sentence and end-of-turn tokens, Cohere's single
action object and response wrappers, Gemma 4's ordinary quoted strings, a DeepSeek-V3-format
model that reasons."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .harness import Case, run, tool

TOOLS = [tool("set_item", **{"items<0>": {"type": "string"}}), tool("search", q={"type": "string"}, query={"type": "string"}),
         tool("get_weather", city={"type": "string"})]
DS = ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
      '{"city": "Rome"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>')

GAPS = [
    ("glm45", "<tool_call>set_item<arg_key>items<0></arg_key><arg_value>x</arg_value></tool_call>",
     [("set_item", {"items<0>": "x"})], None, {}, "glm-4.6"),
    ("glm47", "<tool_call>set_item<arg_key>items<0></arg_key><arg_value>x</arg_value></tool_call>",
     [("set_item", {"items<0>": "x"})], None, {}, "glm-4.7"),
    ("deepseek_v3", "Done.<｜end▁of▁sentence｜>", [], "Done.", {}, "deepseek-v3"),
    ("deepseek_v31", "Done.<｜end▁of▁sentence｜>", [], "Done.", {}, "deepseek-v3.1"),
    ("hermes", "Done.<|im_end|>", [], "Done.", {}, "qwen2.5"),
    ("command_r7b", '<|START_ACTION|>{"tool_name": "search", "parameters": {"q": "x"}}<|END_ACTION|>',
     [("search", {"q": "x"})], None, {}, "command-r7b"),
    ("command_r7b", "<|START_RESPONSE|>It is sunny.<|END_RESPONSE|>", [], "It is sunny.", {}, "command-a"),
    ("mistral", '[TOOL_CALLS]{"name": "search", "arguments": {"q": "x"}}', [("search", {"q": "x"})], None, {},
     "mistral-small"),
    ("gemma4", '<|tool_call>call:search{query:"raw \\"quoted\\""}<tool_call|>', [("search", {"query": 'raw "quoted"'})],
     None, {}, "gemma-4"),
    ("deepseek_v3", "Rome, then.</think>" + DS, [("get_weather", {"city": "Rome"})], "", {"reasoning": True,
     "in_reasoning": True}, "deepseek-v3"),
]


@pytest.mark.parametrize("dialect, text, calls, content, options, model", GAPS,
                         ids=[f"{g[0]}-{i}" for i, g in enumerate(GAPS)])
def test_gap_closed_in_the_dialect_and_in_auto(dialect: str, text: str, calls: list, content: Any,
                                               options: dict, model: str) -> None:
    for parser, extra in ((dialect, {}), ("auto", {}), ("auto", {"model": model})):
        case = Case("gap", text, tools=TOOLS, options={**options, **extra})
        whole = run(case, parser, [text])[0]
        got = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in whole.get("tool_calls") or []]
        assert got == calls, (parser, extra, whole)
        assert (whole["content"] or "") == (content or ""), (parser, extra, whole)
        assert run(case, parser, list(text))[0] == whole, (parser, extra)
