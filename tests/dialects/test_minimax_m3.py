"""MiniMax M3: invokes whose arguments are nested elements, every tag led by the marker.

Outputs are written in the layout of docs/dialects.md: one ``<tool_call>`` wrapper, one
``<invoke>`` per call, one element per argument, each tag led by ``]<]minimax[>[``.
"""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool
from toolbridge.parsing.auto import dialect_for_model

M = "]<]minimax[>["
WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]
WRITE = [tool("write_file", path={"type": "string"}, content={"type": "string"})]
DEPLOY = [tool("deploy", target={"type": "object", "properties": {"host": {"type": "string"},
                                                                     "port": {"type": "integer"}}},
               ports={"type": "array", "items": {"type": "integer"}},
               tags={"type": "array", "items": {"type": "string"}},
               zip={"type": "string"})]
REASONING = {"reasoning": True}


def el(key: str, inner: str) -> str:
    return f"{M}<{key}>{inner}{M}</{key}>"


def invoke(name: str, *elements: str) -> str:
    return f'{M}<invoke name="{name}">\n' + "".join(e + "\n" for e in elements) + f"{M}</invoke>\n"


def block(*invokes: str) -> str:
    return f"{M}<tool_call>\n" + "".join(invokes) + f"{M}</tool_call>"


CASES = [
    Case("single", block(invoke("get_weather", el("city", "Paris"), el("days", "3"))),
         [("get_weather", {"city": "Paris", "days": 3})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel-in-one-wrapper",
         block(invoke("get_weather", el("city", "Oslo")), invoke("get_weather", el("city", "Lima"), el("days", "2"))),
         [("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Lima", "days": 2})], None,
         tools=WEATHER, report={"calls": 2}),
    Case("zero-arguments", block(f'{M}<invoke name="list_files">\n{M}</invoke>\n'), [("list_files", {})], None),
    Case("self-closing-invoke", block(f'{M}<invoke name="list_files"/>\n'), [("list_files", {})], None),
    Case("nested-object-and-item-list",
         block(invoke("deploy", el("target", el("host", "db1") + el("port", "5432")),
                      el("ports", el("item", "80") + el("item", "443")), el("zip", "02134"))),
         [("deploy", {"target": {"host": "db1", "port": 5432}, "ports": [80, 443], "zip": "02134"})],
         None, tools=DEPLOY),
    Case("repeated-name-becomes-a-list",
         block(invoke("deploy", el("tags", "blue"), el("tags", "green"), el("ports", "8080"))),
         [("deploy", {"tags": ["blue", "green"], "ports": [8080]})], None, tools=DEPLOY),
    Case("empty-elements-by-schema", block(invoke("deploy", el("ports", ""), el("target", ""), el("zip", ""))),
         [("deploy", {"ports": [], "target": {}, "zip": ""})], None, tools=DEPLOY),
    Case("children-without-schema",
         block(invoke("note", el("meta", el("id", "7") + el("id", "8") + el("flag", "true")),
                      el("list", el("item", "a") + el("item", "2")))),
         [("note", {"meta": {"id": [7, 8], "flag": True}, "list": ["a", 2]})], None),
    Case("mixed-text-goes-under-text-key",
         block(invoke("note", el("body", "Hello " + el("b", "bold") + " world"))),
         [("note", {"body": {"b": "bold", "$text": "Hello  world"}})], None),
    Case("json-text-value-without-schema", block(invoke("note", el("opts", '{"a": [1, 2]}'), el("n", "null"))),
         [("note", {"opts": {"a": [1, 2]}, "n": None})], None),
    Case("value-holds-angle-brackets-and-newlines",
         block(invoke("write_file", el("path", "a.html"), el("content", "\n<p>1 < 2</p>\n<content>\n"))),
         [("write_file", {"path": "a.html", "content": "\n<p>1 < 2</p>\n<content>\n"})], None, tools=WRITE),
    Case("content-before-and-after", "Checking.\n" + block(invoke("get_weather", el("city", "Rome"))) + "\nDone.",
         [("get_weather", {"city": "Rome"})], "Checking.\n\nDone.", tools=WEATHER),
    Case("reasoning-before-call",
         "<think>\nThe user wants Paris.\n</think>\n" + block(invoke("get_weather", el("city", "Paris"))),
         [("get_weather", {"city": "Paris"})], None, "\nThe user wants Paris.\n", tools=WEATHER, options=REASONING),
    Case("invoke-without-wrapper", "Sure.\n" + invoke("get_weather", el("city", "Bern")),
         [("get_weather", {"city": "Bern"})], "Sure.", tools=WEATHER),
    Case("closing-tags-without-marker",
         f'Let me look.{M}<tool_call>\n<invoke name="get_weather">{M}<city>Graz</city>{M}<days>2</days>'
         f"{M}</invoke>\n{M}</tool_call>",
         [("get_weather", {"city": "Graz", "days": 2})], "Let me look.", tools=WEATHER, report={"repaired": 1}),
    Case("missing-inner-closes",
         block(f'{M}<invoke name="deploy">{M}<target>{M}<host>web{M}</invoke>\n'),
         [("deploy", {"target": {"host": "web"}})], None, tools=DEPLOY, report={"repaired": 1}),
    Case("malformed-text-between-elements",
         block(f'{M}<invoke name="get_weather">city=Paris{M}</invoke>\n'), [],
         block(f'{M}<invoke name="get_weather">city=Paris{M}</invoke>\n'), tools=WEATHER,
         report={"aborted": 1, "calls": 0}),
    Case("mismatched-closing-tag",
         block(invoke("get_weather", f"{M}<city>Oslo{M}</town>")), [],
         block(invoke("get_weather", f"{M}<city>Oslo{M}</town>")), tools=WEATHER, report={"aborted": 1}),
    Case("truncated-mid-value", f'{M}<tool_call>\n{M}<invoke name="write_file">\n{M}<content>half a li', [],
         f'{M}<tool_call>\n{M}<invoke name="write_file">\n{M}<content>half a li', tools=WRITE,
         report={"truncated": True, "calls": 0}),
    Case("truncated-after-complete-element",
         f'{M}<tool_call>\n{M}<invoke name="get_weather">\n{el("city", "Oslo")}\n',
         [("get_weather", {"city": "Oslo"})], None, tools=WEATHER, report={"recovered": 1, "truncated": False}),
    Case("truncated-right-after-invoke-tag", f'{M}<tool_call>\n{M}<invoke name="get_weather">', [],
         f'{M}<tool_call>\n{M}<invoke name="get_weather">', tools=WEATHER, report={"truncated": True}),
    Case("unknown-tool-stays-content", "Trying.\n" + block(invoke("delete_all", el("path", "/"))), [],
         "Trying.\n" + block(invoke("delete_all", el("path", "/"))), tools=WEATHER, report={"rejected": 1}),
    Case("prose-mentions-the-marker",
         f"The sentinel {M} leaked, and {M}<tool_call> is how calls open.", [],
         f"The sentinel {M} leaked, and {M}<tool_call> is how calls open.", report={"calls": 0, "truncated": False}),
    Case("end-token-dropped", block(invoke("get_weather", el("city", "Nice"))) + "[e~[",
         [("get_weather", {"city": "Nice"})], None, tools=WEATHER, options={"drop_tokens": ("[e~[",)}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("minimax_m3", CASES)


def test_model_hint() -> None:
    found = dialect_for_model("MiniMaxAI/MiniMax-M3")
    assert found is not None and found.name == "minimax_m3"
