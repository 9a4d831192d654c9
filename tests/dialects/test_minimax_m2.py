"""MiniMax-M2: ``<invoke name=...>`` elements with raw ``<parameter name=...>`` values.

Outputs are written the way the MiniMax-M2 chat template renders calls: one
``<minimax:tool_call>`` wrapper, each invoke and parameter on its own line.
"""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]
WRITE = [tool("write_file", path={"type": "string"}, content={"type": "string"}, mode={"type": "integer"})]
CONF = [tool("configure", opts={"type": "object"}, ports={"type": "array", "items": {"type": "integer"}},
             zip={"type": "string"})]
REASONING = {"reasoning": True}


def invoke(name: str, *params: tuple[str, str], quote: str = '"') -> str:
    body = "".join(f'<parameter name={quote}{k}{quote}>{v}</parameter>\n' for k, v in params)
    return f"<invoke name={quote}{name}{quote}>\n{body}</invoke>\n"


def block(*invokes: str) -> str:
    return "<minimax:tool_call>\n" + "".join(invokes) + "</minimax:tool_call>"


CASES = [
    Case("single", block(invoke("get_weather", ("city", "Paris"), ("days", "3"))),
         [("get_weather", {"city": "Paris", "days": 3})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel-in-one-wrapper",
         block(invoke("get_weather", ("city", "Oslo")), invoke("get_weather", ("city", "Lima"), ("days", "2"))),
         [("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Lima", "days": 2})], None,
         tools=WEATHER, report={"calls": 2}),
    Case("zero-arguments", block('<invoke name="list_files">\n</invoke>\n'), [("list_files", {})], None),
    Case("nested-json-values",
         block(invoke("configure", ("opts", '{"retries": 3, "tls": {"verify": false}}'), ("ports", "[80, 443]"),
                      ("zip", "02134"))),
         [("configure", {"opts": {"retries": 3, "tls": {"verify": False}}, "ports": [80, 443], "zip": "02134"})],
         None, tools=CONF),
    Case("content-before-and-after", "Checking.\n" + block(invoke("get_weather", ("city", "Rome"))) + "\nDone.",
         [("get_weather", {"city": "Rome"})], "Checking.\n\nDone.", tools=WEATHER),
    Case("multiline-string-kept-verbatim",
         block(invoke("write_file", ("path", "a.py"), ("content", "\ndef f():\n    return '<x>'\n"))),
         [("write_file", {"path": "a.py", "content": "\ndef f():\n    return '<x>'\n"})], None, tools=WRITE),
    Case("unquoted-and-single-quoted-names",
         "<minimax:tool_call><invoke name=get_weather><parameter name='city'>Kyiv</parameter></invoke>"
         "</minimax:tool_call>",
         [("get_weather", {"city": "Kyiv"})], None, tools=WEATHER),
    Case("reasoning-before-call",
         "<think>\nThe user wants Paris.\n</think>\n\n" + block(invoke("get_weather", ("city", "Paris"))),
         [("get_weather", {"city": "Paris"})], None, "\nThe user wants Paris.\n", tools=WEATHER, options=REASONING),
    Case("invoke-without-wrapper", "Sure.\n" + invoke("get_weather", ("city", "Bern")),
         [("get_weather", {"city": "Bern"})], "Sure.", tools=WEATHER),
    Case("missing-parameter-close",
         block('<invoke name="write_file">\n<parameter name="path">x.txt\n<parameter name="mode">600</parameter>\n'
               "</invoke>\n"),
         [("write_file", {"path": "x.txt\n", "mode": 600})], None, tools=WRITE, report={"repaired": 1}),
    Case("malformed-parameter-without-name",
         block('<invoke name="get_weather">\n<parameter>Paris</parameter>\n</invoke>\n'), [],
         block('<invoke name="get_weather">\n<parameter>Paris</parameter>\n</invoke>\n'), tools=WEATHER,
         report={"aborted": 1, "calls": 0}),
    Case("duplicate-parameter-is-malformed",
         block(invoke("get_weather", ("city", "A"), ("city", "B"))), [],
         block(invoke("get_weather", ("city", "A"), ("city", "B"))), tools=WEATHER, report={"aborted": 1, "calls": 0}),
    Case("truncated-mid-value",
         '<minimax:tool_call>\n<invoke name="write_file">\n<parameter name="content">half a li', [],
         '<minimax:tool_call>\n<invoke name="write_file">\n<parameter name="content">half a li', tools=WRITE,
         report={"truncated": True, "calls": 0}),
    Case("truncated-after-complete-parameter",
         '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Oslo</parameter>\n',
         [("get_weather", {"city": "Oslo"})], None, tools=WEATHER, report={"recovered": 1, "truncated": False}),
    Case("truncated-right-after-invoke-tag", '<minimax:tool_call>\n<invoke name="get_weather">', [],
         '<minimax:tool_call>\n<invoke name="get_weather">', tools=WEATHER, report={"truncated": True}),
    Case("unknown-tool-stays-content", "Trying.\n" + block(invoke("delete_all", ("path", "/"))), [],
         "Trying.\n" + block(invoke("delete_all", ("path", "/"))), tools=WEATHER, report={"rejected": 1}),
    Case("prose-mentions-markers",
         'Wrap calls in <minimax:tool_call> and write <invoke name="x"> then <parameter name="k">.', [],
         'Wrap calls in <minimax:tool_call> and write <invoke name="x"> then <parameter name="k">.',
         report={"calls": 0, "truncated": False}),
    Case("end-token-dropped", block(invoke("get_weather", ("city", "Nice"))) + "[e~[",
         [("get_weather", {"city": "Nice"})], None, tools=WEATHER, options={"drop_tokens": ("[e~[",)}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("minimax_m2", CASES)
