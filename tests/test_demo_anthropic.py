"""``toolbridge demo --front anthropic``, ``--front responses`` and ``--front all``: the demo's
loop through the Anthropic Messages front with the anthropic SDK and through the Responses front
with the openai SDK, beside the chat front."""

from __future__ import annotations

import pytest

from toolbridge.cli.main import main

pytest.importorskip("anthropic")


def test_demo_through_the_messages_front(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--front", "anthropic"]) == 0
    out = capsys.readouterr().out
    assert "all dialects: the client got tool_use blocks, whole and streamed" in out
    assert out.count("tool_use run_tests(") == 10  # five dialects, whole and streamed
    assert out.count("stop_reason=tool_use, events: message_start x1") == 5
    assert "(chat front)" not in out


def test_demo_through_the_responses_front(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--front", "responses"]) == 0
    out = capsys.readouterr().out
    assert "all dialects: the client got function_call items, whole and streamed" in out
    assert out.count("function_call run_tests(") == 10  # five dialects, whole and streamed
    assert out.count("(by previous_response_id)") == 10
    assert out.count("status=completed, events: response.created x1, response.in_progress x1") == 5


def test_demo_through_every_front(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--front", "all"]) == 0
    out = capsys.readouterr().out
    assert "the client got native tool_calls / tool_use blocks / function_call items, whole and streamed" in out
    assert out.count("tool_call run_tests(") == out.count("tool_use run_tests(") == 10
    assert out.count("function_call run_tests(") == 10
