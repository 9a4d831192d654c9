"""Nemotron 3: Qwen3-Coder XML (the Nemotron-3-Nano template's layout), ``<think>`` reasoning."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}, state={"type": "string"}, days={"type": "integer"})]
AREA = [tool("calculate_area", shape={"type": "string"}, dimensions={"type": "object"}, precision={"type": "integer"})]
CODE = [tool("python", code={"type": "string"})]
REASONING = {"reasoning": True}
IN_REASONING = {"reasoning": True, "in_reasoning": True}


def call(name: str, *params: tuple[str, str]) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params)
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


CASES = [
    Case("single", call("get_weather", ("city", "Dallas"), ("state", "TX")),
         [("get_weather", {"city": "Dallas", "state": "TX"})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", call("get_weather", ("city", "Dallas")) + "\n" + call("get_weather", ("city", "Orlando")),
         [("get_weather", {"city": "Dallas"}), ("get_weather", {"city": "Orlando"})], None, tools=WEATHER),
    Case("zero-arguments", "<tool_call>\n<function=now>\n</function>\n</tool_call>", [("now", {})], None),
    Case("nested-object", call("calculate_area", ("shape", "rect"), ("dimensions", '{"w": 10,\n "h": [2, {"u": "cm"}]}'),
                               ("precision", "2")),
         [("calculate_area", {"shape": "rect", "dimensions": {"w": 10, "h": [2, {"u": "cm"}]}, "precision": 2})], None,
         tools=AREA),
    Case("multiline-code", call("python", ("code", 'def hello():\n    print("hi")\n\nhello()')),
         [("python", {"code": 'def hello():\n    print("hi")\n\nhello()'})], None, tools=CODE),
    Case("content-before", "Sure! Let me check." + call("get_weather", ("city", "Austin")),
         [("get_weather", {"city": "Austin"})], "Sure! Let me check.", tools=WEATHER),
    Case("reasoning-then-call", "Need the weather.\n</think>\n" + call("get_weather", ("city", "Waco")),
         [("get_weather", {"city": "Waco"})], None, "Need the weather.\n", tools=WEATHER, options=IN_REASONING),
    Case("call-quoted-in-reasoning",
         "Try " + call("python", ("code", "print(0)")) + "\nor better:\n</think>\n" + call("python", ("code", "print(1)")),
         [("python", {"code": "print(1)"})], None, "Try " + call("python", ("code", "print(0)")) + "\nor better:\n",
         tools=CODE, options=IN_REASONING, report={"calls": 1}),
    Case("reasoning-then-answer", "<think>\nNo tool.\n</think>\nHello!", [], "\nHello!", "\nNo tool.\n",
         options=REASONING),
    Case("function-without-wrapper", "<function=get_weather>\n<parameter=city>\nDallas\n</parameter>\n</function>",
         [("get_weather", {"city": "Dallas"})], None, tools=WEATHER),
    Case("malformed-wrapper-content", "<tool_call>\n{not a call}\n</tool_call>", [],
         "<tool_call>\n{not a call}\n</tool_call>", report={"rejected": 1}),
    Case("truncated-mid-value", "<tool_call>\n<function=python>\n<parameter=code>\nprint(", [],
         "<tool_call>\n<function=python>\n<parameter=code>\nprint(", tools=CODE, report={"truncated": True}),
    Case("unknown-tool-stays-content", call("drop_db", ("name", "prod")), [], call("drop_db", ("name", "prod")),
         tools=WEATHER, report={"rejected": 1}),
    Case("prose-mentions-markers", "Write <function=name> inside <tool_call> tags.", [],
         "Write <function=name> inside <tool_call> tags.", report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("nemotron_v3", CASES)
