"""A short call block is held, unread, until its close marker comes, then read at once (JSON
blocks up to HOLD_BLOCK characters, tagged blocks, ``Body.hold_until``, up to
HOLD_TAGGED_BLOCK); a longer one streams as it is written. Pinned and under ``auto``, which
keeps the held deltas itself."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import tool
from toolbridge import ArgumentsDelta, StreamParser, ToolCallBegin, ToolCallEnd, get_dialect
from toolbridge.syntax.bodies.argkey import ArgKeyTags, held_at_most
from toolbridge.syntax.bodies.json import HOLD_BLOCK
from toolbridge.syntax.bodies.xml import GAP
from toolbridge.syntax.dialect import HOLD_TAGGED_BLOCK

TOOLS = [tool("note", text={"type": "string"}, n={"type": "integer"})]
HOLDS = {"hermes": HOLD_BLOCK, "qwen3_coder": HOLD_TAGGED_BLOCK, "glm45": HOLD_TAGGED_BLOCK,
         "deepseek_v3": HOLD_TAGGED_BLOCK, "kimi_k2": HOLD_TAGGED_BLOCK, "minimax_m2": HOLD_TAGGED_BLOCK,
         "gemma4": HOLD_TAGGED_BLOCK, "jamba": HOLD_TAGGED_BLOCK, "command_r_plus": HOLD_TAGGED_BLOCK,
         "gpt_oss": HOLD_TAGGED_BLOCK, "mistral": 0}  # (mistral: read as it comes)
# The marker whose arrival releases the block, when not the last one.
RELEASED_BY = {"jamba": "]", "command_r_plus": "]"}


def feeds(dialect: str, name: str, text: str, size: int = 4) -> list[list[Any]]:
    parser = StreamParser(name, TOOLS)
    return [parser.feed(text[k : k + size]) for k in range(0, len(text), size)] + [parser.close()]


def call(dialect: str, value: str) -> str:
    render = get_dialect(dialect).render
    assert render is not None
    return "Sure.\n" + render([("note", {"text": value, "n": 2})])


@pytest.mark.parametrize("name", ["pinned", "auto"])
@pytest.mark.parametrize("dialect", [d for d, hold in HOLDS.items() if hold])
def test_a_short_block_comes_whole_when_closed(dialect: str, name: str) -> None:
    text = call(dialect, "hi")
    start = text.index(get_dialect(dialect).call_start[0])
    assert len(text) - start <= HOLDS[dialect]
    out = feeds(dialect, dialect if name == "pinned" else "auto", text)
    with_call = [k for k, events in enumerate(out) if any(isinstance(e, ArgumentsDelta) for e in events)]
    assert len(with_call) == 1, "the call's arguments came in one feed"
    [k] = with_call
    kinds = [type(e) for e in out[k]]
    assert ToolCallBegin in kinds and ToolCallEnd in kinds
    close = RELEASED_BY.get(dialect)
    released_at = text.rindex(close) + len(close) if close else len(text)
    assert (k + 1) * 4 >= released_at, "not before the close marker came"
    if name == "pinned":  # (under auto, another claimant's trial may hold it to the block's end)
        assert released_at > k * 4, "released by the feed that completed the close marker"


@pytest.mark.parametrize("dialect", sorted(HOLDS))
def test_a_long_block_streams_before_it_closes(dialect: str) -> None:
    text = call(dialect, "x" * 600)
    out = feeds(dialect, dialect, text)
    first = next(k for k, events in enumerate(out) if any(isinstance(e, ArgumentsDelta) for e in events))
    start = text.index(get_dialect(dialect).call_start[0])
    # (the hold counts from the block's start, or from its arguments after a header: gpt-oss)
    assert first * 4 <= start + HOLDS[dialect] + 128, "arguments flowed once the block outgrew the hold"
    assert sum(isinstance(e, ArgumentsDelta) for events in out for e in events) > 10


def test_a_block_that_does_not_open_as_json_is_refused_as_it_comes() -> None:
    """hermes holds only a block that opens with "{" (what it reads whole at C speed): another
    family's block (here Qwen3-Coder's XML) is refused once it shows it, not at its close, so
    that under auto the trial of the right family starts early."""
    text = call("qwen3_coder", "hi")
    out = feeds("hermes", "hermes", text)
    refused = next(k for k, events in enumerate(out) if any(type(e).__name__ == "CallRejected" for e in events))
    assert (refused + 1) * 4 < text.index("</tool_call>"), "refused before the block closed"


def test_a_harmony_final_message_streams_as_written() -> None:
    """gpt-oss holds a call's arguments, not its content messages: the final answer streams."""
    text = "<|channel|>final<|message|>" + "word " * 120 + "<|return|>"
    out = feeds("gpt_oss", "gpt_oss", text)
    with_text = [k for k, events in enumerate(out) if any(type(e).__name__ == "Text" for e in events)]
    assert len(with_text) > 100 and with_text[0] * 4 < 64, "the answer's text flowed as it came"


def test_a_chosen_body_holds_its_short_block() -> None:
    """Mistral's list form (its body is chosen at the first character): a short list comes whole."""
    text = 'Sure.\n[TOOL_CALLS][{"name": "note", "arguments": {"text": "hi", "n": 2}}]'
    out = feeds("mistral", "mistral", text)
    with_call = [k for k, events in enumerate(out) if any(isinstance(e, ArgumentsDelta) for e in events)]
    assert len(with_call) == 1 and (with_call[0] + 1) * 4 >= len(text), with_call


@pytest.mark.parametrize("name", ["pinned", "auto"])
@pytest.mark.parametrize(("dialect", "head", "tag", "bound"), [
    ("qwen3_coder", "<tool_call>\n<function=note>\n<parameter=text>\n", "</parameter>", GAP + len("</tool_call>")),
    ("seed_oss", "<seed:tool_call>\n<function=note>\n<parameter=text>", "</parameter>",
     GAP + len("</seed:tool_call>")),
    ("glm45", "<tool_call>note\n<arg_key>text</arg_key>\n<arg_value>", "</tool_call>",
     held_at_most(ArgKeyTags(), "<tool_call>")),
])
def test_a_tag_inside_a_value_is_held_only_as_long_as_its_look_ahead(dialect: str, head: str, tag: str, bound: int,
                                                                      name: str) -> None:
    """A value's text goes out as it comes; a tag whose verdict waits on what follows it is held
    with what follows, no further than the look-ahead, and then goes out as value text."""
    value = "x" * 300 + " a " + tag + " " * 3 + "b" * (bound + 40)
    parser = StreamParser(dialect if name == "pinned" else "auto", TOOLS)
    parser.feed(head)
    sent, fed, worst = "", 0, 0
    for k in range(0, len(value), 7):
        piece = value[k : k + 7]
        sent += "".join(e.text for e in parser.feed(piece) if isinstance(e, ArgumentsDelta))
        fed += len(piece)
        shown = sent.split('"text": "', 1)[1] if '"text": "' in sent else ""
        if fed >= 300:  # (past the short block's hold)
            worst = max(worst, fed - len(shown))
        if fed >= 300 + 3 + len(tag) + 3 + bound + 7:
            assert tag in shown, "the tag went out as value text once its look-ahead was done"
    assert len(tag) <= worst <= len(tag) + bound + 7, "held while the verdict waits, no longer"
