"""Reasoning written inside the content (``gateway/thinking.py``), in process: the verdict on
an answer's start depends on its text alone, so a stream, however chunked, reads the same
reasoning, text and calls as the whole answer; the bound on how far a closer is looked for."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples
from toolbridge.events import Reasoning, Text
from toolbridge.gateway import thinking
from toolbridge.gateway.repair import repair_completion
from toolbridge.gateway.streaming import AnswerStream
from toolbridge.gateway.thinking import INSIDE, PLAIN, SPLIT, Lead
from toolbridge.gateway.turn import Settings, Turn, plan_turn
from toolbridge.gateway.validation import WholeCall

CALL = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
PIECES = ["<think>", "</think>", "<thi", "</th", "a b", " ", "\n", "\n\n", "x", CALL, "<tool_call>"]


def plan(asked: bool, tools: bool, flag: str = "auto", stream: bool = False) -> Any:
    options = {"reasoning_effort": "high"} if asked else {}
    turn = Turn(messages=[{"role": "user", "content": "q"}], tools=TOOLS if tools else None,
                model="Qwen/Qwen3-8B", options=options, stream=stream)
    return plan_turn(turn, Settings(reasoning_in_content=flag))


def streamed(text: str, cuts: list[int], asked: bool, tools: bool, finish: str) -> tuple[str, str, list[str]]:
    answer = AnswerStream(plan(asked, tools, stream=True))
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    events = []
    for start, end in zip(bounds, bounds[1:]):
        last = end == len(text)
        events += answer.feed_first({"choices": [{"index": 0, "delta": {"content": text[start:end]},
                                                  "finish_reason": finish if last else None}]})
    events += answer.finish_first()
    reasoning = "".join(e.text for e in events if type(e) is Reasoning)
    content = "".join(e.text for e in events if type(e) is Text)
    return reasoning, content, [e.name for e in events if type(e) is WholeCall]


def whole(text: str, asked: bool, tools: bool, finish: str) -> tuple[str, str, list[str]]:
    answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}]}
    message = repair_completion(answer, plan(asked, tools))[0]["choices"][0]["message"]
    calls = [c["function"]["name"] for c in message.get("tool_calls") or ()]
    return message.get("reasoning_content") or "", message.get("content") or "", calls


@settings(max_examples=examples(400), deadline=None)
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=12), cuts=st.lists(st.integers(0, 400), max_size=8),
       asked=st.booleans(), tools=st.booleans(), finish=st.sampled_from(["stop", "length"]),
       limit=st.sampled_from([thinking.LEAD_LIMIT, 3, 20]))
def test_stream_reads_as_whole(pieces: list[str], cuts: list[int], asked: bool, tools: bool, finish: str,
                               limit: int) -> None:
    text = "".join(pieces)
    with pytest.MonkeyPatch.context() as patch:  # (a small bound: the closer found past it, too)
        patch.setattr(thinking, "LEAD_LIMIT", limit)
        got, want = streamed(text, cuts, asked, tools, finish), whole(text, asked, tools, finish)
    assert got[0] == want[0] and got[2] == want[2]
    # (a whole answer's content is null where only white space is left beside calls; a stream
    # holds trailing white space until it knows)
    assert got[1].rstrip() == want[1].rstrip()


@pytest.mark.parametrize(("mode", "text", "verdict"), [
    ("opens", "<think>a</think>b", SPLIT),
    ("opens", "  \n<think>a", SPLIT),
    ("opens", "a</think>b", PLAIN),
    ("opens", "b <think>a</think>", PLAIN),
    ("opens", "", PLAIN),
    ("asked", "a</think>b", INSIDE),
    ("asked", "a<think>b</think>c", SPLIT),  # an opener before the closer: the prompt opened nothing
    ("asked", "plain", SPLIT),
    ("asked", "", SPLIT),
])
def test_verdicts(mode: str, text: str, verdict: tuple[bool, bool]) -> None:
    assert Lead(mode, ("<think>",), ("</think>",)).whole(text) == verdict
    lead = Lead(mode, ("<think>",), ("</think>",))
    told = next((v for v in map(lead.feed, text) if v is not None), None)  # one character a delta
    assert (told if told is not None else lead.end()) == verdict


@pytest.mark.parametrize("flag", ["auto", "on", "off"])
@pytest.mark.parametrize("asked", [False, True])
@pytest.mark.parametrize("reasoned", [False, True])
@pytest.mark.parametrize("text", ["<think>a</think>b", "  \n<think>a", "a</think>b", "b <think>a</think>", "",
                                  " \n ", "<thi", "a<think>b</think>c", "plain", CALL])
def test_whole_verdict_as_the_lead_reads_it(flag: str, asked: bool, reasoned: bool, text: str) -> None:
    """``Lead.read_whole`` (the whole answer's verdict, mostly without a Lead) is the Lead's:
    ``Lead.of``, made ``opening_only`` when the upstream gave reasoning in its own field."""
    planned = plan(asked, True, flag)
    lead = Lead.of(planned)
    if lead is not None and reasoned:
        lead.opening_only()
    assert Lead.read_whole(planned, text, reasoned) == (lead.whole(text) if lead is not None else None)


def test_opener_still_being_written_is_held() -> None:
    lead = Lead("opens", ("<think>",), ("</think>",))
    assert [lead.feed(c) for c in " <thi"] == [None] * 5
    assert lead.feed("nk>") == SPLIT and lead.text == " <think>"


def test_closer_looked_for_within_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(thinking, "LEAD_LIMIT", 50)
    closes_at = {49: INSIDE, 50: SPLIT}  # where the closer starts: within the bound, or past it
    for at, verdict in closes_at.items():
        text = "x" * at + "</think>answer"
        assert Lead("asked", ("<think>",), ("</think>",)).whole(text) == verdict
        lead = Lead("asked", ("<think>",), ("</think>",))
        told = [v for v in (lead.feed(text[i:i + 7]) for i in range(0, len(text), 7)) if v is not None]
        assert told[0] == verdict
    # Past the bound the answer is no longer held: streamed, its text goes out before its end.
    answer = AnswerStream(plan(True, False, stream=True))
    events = answer.feed_first({"choices": [{"index": 0, "delta": {"content": "y" * 60}}]})
    assert "".join(e.text for e in events if type(e) is Text) == "y" * 60


def test_flag_and_request() -> None:
    assert plan(False, False).think == "opens"
    assert plan(True, False).think == "asked"
    assert plan(False, False, flag="on").think == "asked"
    assert plan(True, True, flag="off").think is None
    assert thinking.asked({"chat_template_kwargs": {"enable_thinking": True}}) is True
    assert thinking.asked({"chat_template_kwargs": {"enable_thinking": False}}) is False
    assert thinking.asked({"reasoning_effort": "none"}) is False
    assert thinking.asked({"chat_template_kwargs": {"other": 1}}) is None
    # on: as if every request asked, but one that turns thinking off (its answer opens with no
    # reasoning: holding it for a closer would only delay it)
    assert thinking.mode("on", {"chat_template_kwargs": {"enable_thinking": False}}) == "opens"
    assert thinking.mode("on", {}) == "asked"
    assert thinking.mode("auto", {"reasoning_effort": "low"}) == "asked"


def test_markers_follow_the_dialect() -> None:
    from toolbridge.dialects import get_dialect

    assert thinking.markers(get_dialect("mistral"), None) == (("[THINK]", "<think>"), ("[/THINK]", "</think>"))
    assert thinking.markers("auto", "mistralai/Magistral-Small-2509") == (("<think>", "[THINK]"),
                                                                          ("</think>", "[/THINK]"))
    assert thinking.markers("auto", "unknown-model") == (("<think>",), ("</think>",))


def test_serve_flag_and_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolbridge.cli.main import build_parser
    from toolbridge.errors import ConfigError
    from toolbridge.gateway.config import GatewayConfig

    assert build_parser().parse_args(["serve"]).reasoning_in_content == "auto"
    assert build_parser().parse_args(["serve", "--reasoning-in-content", "off"]).reasoning_in_content == "off"
    monkeypatch.setenv("TOOLBRIDGE_REASONING_IN_CONTENT", "on")
    assert build_parser().parse_args(["serve"]).reasoning_in_content == "on"
    with pytest.raises(ConfigError, match="--reasoning-in-content"):
        GatewayConfig(upstream="http://127.0.0.1:1/v1", reasoning_in_content="always").check()


@pytest.mark.parametrize(("parser", "model", "text", "want"), [
    ("mistral", None, "[THINK]Check.[/THINK]Done.", ("Check.", "Done.")),
    ("auto", "mistralai/Magistral-Small-2509", "[THINK]Check.[/THINK]Done.", ("Check.", "Done.")),
    ("auto", "unknown", "<think>Check.</think>Done.", ("Check.", "Done.")),
    ("hermes", None, "<think>Check.</think>Done.", ("Check.", "Done.")),
    # A dialect with no reasoning convention reads its content as written.
    ("functionary_v3_2", None, "<think>Check.</think>Done.", ("", "<think>Check.</think>Done.")),
])
def test_dialects_own_markers(parser: str, model: str | None, text: str, want: tuple[str, str]) -> None:
    turn = Turn(messages=[{"role": "user", "content": "q"}], model=model, stream=True)
    plan = plan_turn(turn, Settings(dialect=parser))
    answer = AnswerStream(plan)
    events = [e for i in range(0, len(text), 2)
              for e in answer.feed_first({"choices": [{"index": 0, "delta": {"content": text[i:i + 2]}}]})]
    events += answer.finish_first()
    got = ("".join(e.text for e in events if type(e) is Reasoning), "".join(e.text for e in events if type(e) is Text))
    assert got == want
    answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
    message = repair_completion(answer, plan)[0]["choices"][0]["message"]
    assert (message.get("reasoning_content") or "", message["content"]) == want


def test_recovery_reads_only_the_upstreams_own_reasoning() -> None:
    """--recover-from-reasoning reads the upstream's reasoning field, not what the content's
    parser split out (a stream never fed that to it): whole and streamed alike."""
    text = '[THINK]Maybe [TOOL_CALLS][{"name": "f", "arguments": {"a": 1}}] later.[/THINK]Done.'
    turn = Turn(messages=[{"role": "user", "content": "q"}], tools=TOOLS, stream=True)
    plan = plan_turn(turn, Settings(dialect="mistral", recover_from_reasoning=True))
    answer = AnswerStream(plan)
    events = answer.feed_first({"choices": [{"index": 0, "delta": {"content": text}}]}) + answer.finish_first()
    assert not [e for e in events if type(e) is WholeCall]
    assert "".join(e.text for e in events if type(e) is Text) == "Done."
    whole = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
    message = repair_completion(whole, plan)[0]["choices"][0]["message"]
    assert "tool_calls" not in message and message["content"] == "Done."
    assert message["reasoning_content"] == "".join(e.text for e in events if type(e) is Reasoning)


def _fed(answer: AnswerStream, delta: dict[str, Any]) -> list[Any]:
    return answer.feed_first({"choices": [{"index": 0, "delta": delta}]})


def test_asked_answer_released_early() -> None:
    """Asked for thinking, an answer that opens with no marker is held for a closer; not past
    the family's call marker (a model that does not think, calling), and not at all once the
    upstream gave reasoning in its own field (it reads reasoning itself)."""
    answer = AnswerStream(plan(True, True, stream=True))
    assert _fed(answer, {"content": "Let me check.\n"}) == []
    assert [e.text for e in _fed(answer, {"content": "<tool_call>"}) if type(e) is Text] == ["Let me check."]
    answer = AnswerStream(plan(True, False, stream=True))
    assert _fed(answer, {"reasoning_content": "Thought."}) == [Reasoning("Thought.")]
    assert _fed(answer, {"content": "The answer"}) == [Text("The answer")]
    # (a stray closer then is text, as the upstream wrote it)
    assert _fed(answer, {"content": " ends </think> here."}) == [Text(" ends </think> here.")]
