"""Inkling: ``<|message_model|>`` blocks of reasoning, text and JSON tool invocations (``args``)."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool
from toolbridge import get_dialect

M, E, ES = "<|message_model|>", "<|end_message|>", "<|content_model_end_sampling|>"
THINK, TEXT, INVOKE = "<|content_thinking|>", "<|content_text|>", "<|content_invoke_tool_json|>"
WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]
FILES = [tool("read_file", path={"type": "string"}), tool("list_dir", path={"type": "string"})]
REASONING = {"reasoning": True}
DROP = {"drop_tokens": get_dialect("inkling").end_tokens}  # the upstream kept special tokens


def call(name: str, body: str, header: str | None = None) -> str:
    return f"{M}{name if header is None else header}{INVOKE}{body}{E}"


CASES = [
    Case("single", call("get_weather", '{"name": "get_weather", "args": {"city": "Paris", "days": 2}}'),
         [("get_weather", {"city": "Paris", "days": 2})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", call("read_file", '{"name": "read_file", "args": {"path": "a.py"}}')
         + call("list_dir", '{"args": {"path": "src"}, "name": "list_dir"}'),
         [("read_file", {"path": "a.py"}), ("list_dir", {"path": "src"})], None, tools=FILES),
    Case("zero-arguments", call("now", '{"name": "now", "args": {}}'), [("now", {})], None),
    Case("nested-arguments", call("plan", '{"name": "plan", "args": {"steps": [{"n": [1, 2.5], "s": "<|end_message|>"}], '
                                  '"ok": null}}'),
         [("plan", {"steps": [{"n": [1, 2.5], "s": "<|end_message|>"}], "ok": None})], None),
    Case("reasoning-text-call-text", f"{M}{THINK}Weather first.{E}{M}{TEXT}Checking.{E}"
         + call("get_weather", '{"name": "get_weather", "args": {"city": "Oslo"}}') + f"{M}{TEXT} Done.{E}{ES}",
         [("get_weather", {"city": "Oslo"})], "Checking. Done.", "Weather first.", tools=WEATHER, options=REASONING | DROP),
    Case("text-block-tokens-never-reach-content", f"{M}{TEXT}Hi.{E}", [], f"Hi.{E}"),
    Case("prompt-ended-in-reasoning", f"Still thinking.{E}" + call("get_weather",
         '{"name": "get_weather", "args": {"city": "Rome"}}'), [("get_weather", {"city": "Rome"})], None,
         "Still thinking.", tools=WEATHER, options={"reasoning": True, "in_reasoning": True}),
    Case("call-without-header-name", call("", '{"name": "get_weather", "args": {"city": "Kyiv"}}'),
         [("get_weather", {"city": "Kyiv"})], None, tools=WEATHER),
    Case("block-ended-by-end-of-sampling", f"{M}{TEXT}Hello!{ES}", [], "Hello!", options=DROP),
    Case("tool-text-and-error-kinds-are-content", f"{M}<|content_invoke_tool_text|>ls -la{E}"
         f"{M}<|content_tool_error|>no such file{E}", [], "ls -lano such file", options=DROP),
    Case("arguments-key-accepted", call("get_weather", '{"name": "get_weather", "arguments": {"city": "Riga"}}'),
         [("get_weather", {"city": "Riga"})], None, tools=WEATHER),
    Case("malformed-json-stays-content", "Hm. " + call("get_weather", '{"name": "get_weather", "args": {"city": }}'),
         [], "Hm. " + call("get_weather", '{"name": "get_weather", "args": {"city": }}'), tools=WEATHER,
         report={"aborted": 1, "calls": 0}),
    Case("truncated-mid-arguments", f"{M}get_weather{INVOKE}" + '{"name": "get_weather", "args": {"city": "Ba', [],
         f"{M}get_weather{INVOKE}" + '{"name": "get_weather", "args": {"city": "Ba', tools=WEATHER,
         report={"truncated": True, "calls": 0}),
    Case("end-token-cut-after-arguments", call("get_weather", '{"name": "get_weather", "args": {"city": "Baku"}}')[:-4],
         [("get_weather", {"city": "Baku"})], None, tools=WEATHER, report={"recovered": 1, "truncated": False}),
    Case("unknown-tool-stays-content", call("drop_db", '{"name": "drop_db", "args": {}}'), [],
         call("drop_db", '{"name": "drop_db", "args": {}}'), tools=WEATHER, report={"rejected": 1}),
    Case("prose-mentions-the-role-token", "Inkling starts each block with <|message_model|> and a kind.", [],
         "Inkling starts each block with <|message_model|> and a kind.", report={"rejected": 1}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("inkling", CASES)
