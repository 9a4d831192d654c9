"""lfm2 (LFM2, LFM2.5): a Python call list between ``<|tool_call_start|>`` and ``<|tool_call_end|>``,
as the LFM2 templates render it; JSON call objects accepted as elements; ``<think>`` reasoning."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_time", city={"type": "string"}), tool("search", query={"type": "string"})]
R = {"reasoning": True}
S, E = "<|tool_call_start|>", "<|tool_call_end|>"

CASES = [
    Case("single", f"{S}[get_time(city='Paris')]{E}", [("get_time", {"city": "Paris"})], None, tools=TOOLS),
    Case("parallel", f'{S}[get_time(city="Oslo"), search(query="cafés")]{E}',
         [("get_time", {"city": "Oslo"}), ("search", {"query": "cafés"})], None, tools=TOOLS, report={"calls": 2}),
    Case("zero-arguments", f"{S}[empty_args()]{E}", [("empty_args", {})], None),
    Case("nested", f"{S}[order(items=[{{'name': 'apple', 'qty': 2}}], meta={{\"rush\": true}})]{E}",
         [("order", {"items": [{"name": "apple", "qty": 2}], "meta": {"rush": True}})], None),
    Case("json-elements", f'{S}[{{"name": "search", "arguments": {{"query": "x"}}}}, '
         f'{{"name": "get_time", "parameters": {{"city": "Y"}}}}]{E}',
         [("search", {"query": "x"}), ("get_time", {"city": "Y"})], None, tools=TOOLS),
    Case("bare-json-object", f'{S}{{"name": "search", "arguments": {{"query": "q"}}}}{E}',
         [("search", {"query": "q"})], None, tools=TOOLS),
    Case("content-before-and-after", f"Let me check.{S}[get_time(city='Rome')]{E}\nDone.",
         [("get_time", {"city": "Rome"})], "Let me check.\nDone.", tools=TOOLS),
    Case("reasoning-before-call", f"<think>I need the time.</think>{S}[get_time(city='Kyiv')]{E}",
         [("get_time", {"city": "Kyiv"})], None, "I need the time.", tools=TOOLS, options=R),
    Case("reasoning-quotes-a-call",
         f"<think>Maybe {S}[search(query='a')]{E} first?</think>{S}[get_time(city='Lima')]{E}",
         [("get_time", {"city": "Lima"})], None, f"Maybe {S}[search(query='a')]{E} first?", tools=TOOLS, options=R),
    Case("end-marker-inside-string", f"{S}[search(query='{E} and ]')]{E}", [("search", {"query": f"{E} and ]"})],
         None, tools=TOOLS),
    Case("malformed", f"{S}[A(A=\t)A(A=,\t]{E}", [], f"{S}[A(A=\t)A(A=,\t]{E}", report={"rejected": 1}),
    Case("truncated", f"{S}[get_time(city=", [], f"{S}[get_time(city=", tools=TOOLS,
         report={"truncated": True, "calls": 0}),
    Case("end-marker-missing", f"{S}[get_time(city='X')]", [("get_time", {"city": "X"})], None, tools=TOOLS,
         report={"recovered": 1}),
    Case("unknown-tool", f"{S}[send(to='x')]{E}", [], f"{S}[send(to='x')]{E}", tools=TOOLS, report={"rejected": 1}),
    Case("prose-markdown-links", "Use [link text](url). Example: [Wikipedia](https://w.org).", [],
         "Use [link text](url). Example: [Wikipedia](https://w.org).", tools=TOOLS, report={"rejected": 0}),
    Case("prose-mentions-marker", f"Write {S} before calls.", [], f"Write {S} before calls.",
         report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("lfm2", CASES)
