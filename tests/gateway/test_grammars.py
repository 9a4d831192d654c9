"""Client grammars never crash or stall the gateway: over HTTP with the official ``openai`` SDK,
a grammar past a bound (the 2,700-rule chain that overflowed llguidance's stack, an oversized
one) is a 400 naming the field and the limit on both fronts that take freeform tools, and the
gateway keeps answering; the child process that compiles new grammars first turns a crash or an
overrun into that grammar's error and is replaced for the next (``gateway.grammars``)."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest

from tests.gateway.test_responses import create, stacks  # noqa: F401  (stacks is a fixture)
from tests.test_freeform import GRAMMAR
from toolbridge.freeform import Format, bounds
from toolbridge.gateway.grammars import GrammarChecker
from toolbridge.gateway.replay.upstream import Reply

USER = [{"role": "user", "content": "hi"}]


def chain(rules: int) -> str:
    """``start: r0``, ``r0: r1 "x"``, ...: ``rules`` definitions, each referring to the next."""
    return "start: r0\n" + "".join(f'r{i}: r{i + 1} "x"\n' for i in range(rules - 2)) + f'r{rules - 2}: "x"\n'


def alternatives(count: int, tag: str = "") -> str:
    return f'start: "{tag}" (' + " | ".join(f'"a{i}"' for i in range(count)) + ")\n"


CRASH = chain(2700)  # 2,700 definitions, 44 KB: a segfault in llguidance 1.9 on an 8 MB stack
OVERSIZED = 'start: "' + "x" * (bounds.MAX_BYTES + 1) + '"\n'
REFUSED = [
    (CRASH, "the grammar has 2700 rules; at most 1000"),
    (OVERSIZED, f"the grammar is {len(OVERSIZED)} bytes long; at most {bounds.MAX_BYTES}"),
    ("start: undefined_rule", "the lark grammar does not compile: "),
]


def responses_tool(definition: str) -> dict[str, Any]:
    return {"type": "custom", "name": "p", "format": {"type": "grammar", "syntax": "lark", "definition": definition}}


def chat_tool(definition: str) -> dict[str, Any]:
    return {"type": "custom", "custom": {"name": "p", "format": {
        "type": "grammar", "grammar": {"syntax": "lark", "definition": definition}}}}


@pytest.mark.parametrize("definition, message", REFUSED)
def test_a_grammar_past_a_bound_is_a_400_on_responses(stacks: Any, definition: str, message: str) -> None:
    s = stacks(lambda b: Reply(content="ok"))
    with pytest.raises(openai.BadRequestError) as refused:
        create(s, tools=[responses_tool(definition)])
    assert refused.value.body["message"].startswith("tools[0].format.definition: " + message)
    assert refused.value.body["param"] == "tools[0].format"
    assert create(s, tools=[responses_tool(GRAMMAR)]).output_text == "ok"  # still answering


@pytest.mark.parametrize("definition, message", REFUSED)
def test_a_grammar_past_a_bound_is_a_400_on_chat(stacks: Any, definition: str, message: str) -> None:
    s = stacks(lambda b: Reply(content="ok"))
    with s.client() as c:
        with pytest.raises(openai.BadRequestError) as refused:
            c.chat.completions.create(model="m", messages=USER, tools=[chat_tool(definition)])
        assert refused.value.body["message"].startswith("tools[0].custom.format.grammar.definition: " + message)
        answer = c.chat.completions.create(model="m", messages=USER, tools=[chat_tool(GRAMMAR)])
    assert answer.choices[0].message.content == "ok"


def test_the_child_dying_on_a_grammar_fails_that_grammar_only() -> None:
    """A compile that overflows the child's stack (a small one here, the fault the bounds keep
    grammars from) is that grammar's error; the next grammar gets a new child."""

    async def run() -> tuple[Any, Any, Any]:
        checker = GrammarChecker(stack=256 << 10)
        try:
            died = await checker.first_failure([Format("lark", chain(500))])
            after = await checker.first_failure([Format("lark", chain(20))])
            again = await checker.first_failure([Format("lark", chain(500))])  # kept: not compiled again
            return died, after, again
        finally:
            await checker.close()

    died, after, again = asyncio.run(run())
    assert died is not None and "the grammar engine's process died compiling it (signal" in died[1]
    assert after is None and again == died


def test_a_compile_past_its_budget_is_that_grammars_error() -> None:
    async def run() -> tuple[Any, Any]:
        checker = GrammarChecker(budget=0.001)
        try:
            slow = await checker.first_failure([Format("lark", alternatives(5000))])
            checker.budget = 30.0
            return slow, await checker.first_failure([Format("lark", alternatives(10, "quick"))])
        finally:
            await checker.close()

    slow, quick = asyncio.run(run())
    assert slow is not None and slow[1] == "compiling it took more than 0.001 s"
    assert quick is None
