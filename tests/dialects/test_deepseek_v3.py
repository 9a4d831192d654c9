"""DeepSeek V3: ``function<｜tool▁sep｜>NAME`` + a fenced JSON object per call, inside a section."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

SB, SE, CB, CE, SEP = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]


def call(name: str, args: str, sep: str = SEP, begin: str = CB, end: str = CE) -> str:
    return f"{begin}function{sep}{name}\n```json\n{args}\n```{end}"


def spell(text: str, space: str) -> str:
    return text.replace("▁", space)


CASES = [
    Case("single", SB + call("get_weather", '{"city": "Tokyo", "days": 1}') + SE,
         [("get_weather", {"city": "Tokyo", "days": 1})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", SB + call("get_weather", '{"city": "Tokyo"}') + "\n" + call("search", '{"q": "hotels"}') + SE,
         [("get_weather", {"city": "Tokyo"}), ("search", {"q": "hotels"})], None),
    Case("zero-arguments", SB + call("now", "{}") + SE, [("now", {})], None),
    Case("end-of-sentence-never-reaches-content", "Done.<｜end▁of▁sentence｜>", [], "Done."),
    Case("a-reasoning-model-in-this-format", "Weather first.</think>Sure." + SB + call("get_weather", '{"city": "Rome"}')
         + SE, [("get_weather", {"city": "Rome"})], "Sure.", reasoning="Weather first.", tools=WEATHER,
         options={"reasoning": True, "in_reasoning": True}),
    Case("think-block-split-when-asked", "<think>Hm.</think>Hi.", [], "Hi.", reasoning="Hm.",
         options={"reasoning": True}),
    Case("think-block-stays-content-otherwise", "<think>Hm.</think>Hi.", [], "<think>Hm.</think>Hi."),
    Case("nested-arguments", SB + call("plan", '{"a": [1, {"b": null}], "c": {"d": "```"}, "e": false}') + SE,
         [("plan", {"a": [1, {"b": None}], "c": {"d": "```"}, "e": False})], None),
    Case("content-before-and-after", "Checking.\n" + SB + call("get_weather", '{"city": "Pune"}') + SE + "\nDone.",
         [("get_weather", {"city": "Pune"})], "Checking.\n\nDone.", tools=WEATHER),
    Case("underscore-spelling", spell(SB + call("get_weather", '{"city": "Oslo"}') + SE, "_"),
         [("get_weather", {"city": "Oslo"})], None, tools=WEATHER),
    Case("space-spelling", spell(SB + call("get_weather", '{"city": "Oslo"}') + SE, " "),
         [("get_weather", {"city": "Oslo"})], None, tools=WEATHER),
    Case("escaped-underscore-spelling", spell(SB + call("get_weather", '{"city": "Oslo"}') + SE, "\\_"),
         [("get_weather", {"city": "Oslo"})], None, tools=WEATHER),
    Case("short-opener", "<｜tool▁calls｜>function" + SEP + 'get_weather\n```json\n{"city": "Rio"}\n```' + CE + SE,
         [("get_weather", {"city": "Rio"})], None, tools=WEATHER),
    Case("fence-without-newlines", SB + CB + "function" + SEP + 'get_weather\n```json{"city": "Rio"}```' + CE + SE,
         [("get_weather", {"city": "Rio"})], None, tools=WEATHER),
    Case("malformed-json-stays-content", "Hm." + SB + call("get_weather", '{"city": "Rio",}') + SE,
         [], "Hm." + SB + call("get_weather", '{"city": "Rio",}') + SE, tools=WEATHER, report={"aborted": 1}),
    Case("truncated-mid-arguments", SB + CB + "function" + SEP + 'get_weather\n```json\n{"city": "R',
         [], SB + CB + "function" + SEP + 'get_weather\n```json\n{"city": "R', tools=WEATHER,
         report={"truncated": True, "calls": 0}),
    Case("truncated-after-arguments", SB + CB + "function" + SEP + 'get_weather\n```json\n{"city": "Rio"}\n``',
         [("get_weather", {"city": "Rio"})], None, tools=WEATHER, report={"recovered": 1}),
    Case("unknown-tool-stays-content", SB + call("drop_db", "{}") + SE, [], SB + call("drop_db", "{}") + SE,
         tools=WEATHER, report={"rejected": 1}),
    Case("prose-mentions-markers", "DeepSeek starts calls with <｜tool▁calls▁begin｜> then more.", [],
         "DeepSeek starts calls with <｜tool▁calls▁begin｜> then more.", report={"rejected": 1}),
]

# A length stop always wins: a call whose end token never came is cut, never a call; one whose
# end token came stands, though the section's end is missing.
_OPEN = SB + f"{CB}function{SEP}get_weather\n```json\n" + '{"city": "Rome"}'
CASES += [
    Case("length-stop-before-the-closing-fence", _OPEN + "\n`", [], _OPEN + "\n`", tools=WEATHER, cut=True,
         report={"truncated": True, "aborted": 1, "calls": 0}),
    Case("length-stop-before-the-call-end", _OPEN + "\n```<｜tool▁call", [], _OPEN + "\n```<｜tool▁call", tools=WEATHER,
         cut=True, report={"truncated": True, "aborted": 1}),
    Case("length-stop-after-the-call-end-keeps-the-call", _OPEN + f"\n```{CE}<｜tool▁calls",
         [("get_weather", {"city": "Rome"})], None, tools=WEATHER, cut=True),
    Case("call-end-missing-at-a-clean-end-is-repaired", _OPEN + "\n```", [("get_weather", {"city": "Rome"})], None,
         tools=WEATHER, report={"recovered": 1}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("deepseek_v3", CASES)
