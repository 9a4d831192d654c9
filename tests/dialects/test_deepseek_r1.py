"""DeepSeek R1: the V3 call format after ``<think>`` reasoning (the template opens it in the prompt)."""

from __future__ import annotations

from tests.dialects.test_deepseek_v3 import CASES as V3_CASES
from tests.dialects.test_deepseek_v3 import SB, SE, WEATHER, call
from tests.harness import Case, make_table_tests

REASONING = {"reasoning": True}
IN_REASONING = {"reasoning": True, "in_reasoning": True}

CASES = [
    *V3_CASES,
    Case("reasoning-then-call", "<think>\nNeed data.\n</think>\n\n" + SB + call("get_weather", '{"city": "Rio"}') + SE,
         [("get_weather", {"city": "Rio"})], None, "\nNeed data.\n", tools=WEATHER, options=REASONING),
    Case("prompt-opened-reasoning", "Need data.\n</think>\n\nLet me check." + SB
         + call("get_weather", '{"city": "Rio"}') + SE,
         [("get_weather", {"city": "Rio"})], "\n\nLet me check.", "Need data.\n", tools=WEATHER, options=IN_REASONING),
    Case("call-ends-open-reasoning", "Need data." + SB + call("get_weather", '{"city": "Rio"}') + SE,
         [("get_weather", {"city": "Rio"})], None, "Need data.", tools=WEATHER, options=IN_REASONING),
    Case("marker-mentioned-in-reasoning", "It starts with <｜tool▁calls▁begin｜> and ends\n</think>Hi.",
         [], "Hi.", "It starts with <｜tool▁calls▁begin｜> and ends\n", options=IN_REASONING,
         report={"rejected": 1}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("deepseek_r1", CASES)
