"""A call to a tool the request did not offer is never silent: for every dialect, pinned and
under ``auto``, whole and streamed, the answer reports it in ``report.rejected`` (``unknown
tool``) with the dialect named, exactly once, and the call's text stays content.
"""

from __future__ import annotations

import pytest

from toolbridge import MessageBuilder, StreamParser, dialect_names, get_dialect, parse

DIALECTS = sorted({get_dialect(n).name for n in dialect_names() if get_dialect(n).render is not None})
OFFERED = [{"type": "function", "function": {"name": "create_event", "parameters": {
    "type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}}}]
UNOFFERED = [("schedule_meeting", {"title": "standup"})]


def _unknown(rejected: list[dict[str, str]]) -> list[dict[str, str]]:
    return [r for r in rejected if r["reason"] == "unknown tool 'schedule_meeting'"]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("mode", ["pinned", "auto"])
def test_a_call_to_an_unoffered_tool_is_reported_once(dialect: str, mode: str) -> None:
    text = get_dialect(dialect).render(UNOFFERED)  # type: ignore[misc]
    name = dialect if mode == "pinned" else "auto"
    hint = {} if mode == "pinned" else {"hint": dialect}  # the chat template names the family
    whole = parse(text, name, OFFERED, **hint)
    assert "tool_calls" not in whole.message, text
    assert len(_unknown(whole.report.rejected)) == 1, (text, whole.report.rejected)
    assert whole.report.rejected == parse(text, dialect, OFFERED).report.rejected  # as pinned
    assert whole.report.dialect == dialect  # the dialect is named
    parser = StreamParser(name, OFFERED, **hint)
    builder = MessageBuilder(name)
    for ch in text:
        builder.add(parser.feed(ch))
    builder.add(parser.close())
    assert "tool_calls" not in builder.message
    assert builder.report.rejected == whole.report.rejected
    assert parser.dialect is not None and parser.dialect.name == dialect


@pytest.mark.parametrize("text", [
    '<tool_call>\n{"name": "schedule_meeting", "arguments": {"title": "x"}}\n</tool_call>',
    '```json\n{"name": "schedule_meeting", "arguments": {"title": "x"}}\n```',
    'Sure:\n```json\n{"name": "schedule_meeting", "arguments": {"title": "x"}}\n```\nDone.',
    '{"name": "schedule_meeting", "arguments": {"title": "x"}}',
])
def test_drifted_hermes_calls_to_an_unoffered_tool(text: str) -> None:
    """The forms a small Qwen model writes: under auto with no hint, and pinned, one report."""
    for dialect in ("auto", "hermes"):
        result = parse(text, dialect, OFFERED)
        assert result.message["content"] == text
        assert [r["reason"] for r in result.report.rejected] == ["unknown tool 'schedule_meeting'"], dialect
        # (bare JSON is llama3_json's own form: auto with no hint names that family)
        assert result.report.dialect == ("llama3_json" if text[0] == "{" and dialect == "auto" else "hermes")


@pytest.mark.parametrize("stream", [False, True])
def test_the_gateway_reports_an_unoffered_call_under_auto(stream: bool) -> None:
    """Through the gateway with its default parser (auto): the call stays content, streamed or
    not, and the whole answer's header counts it as rejected with the dialect named."""
    from toolbridge.gateway.replay.stack import Stack
    from toolbridge.gateway.replay.upstream import Reply

    text = '```json\n{"name": "schedule_meeting", "arguments": {"title": "x"}}\n```'
    with Stack(lambda body: Reply(content=text, chunk=7)) as s:
        client = s.client()
        kwargs = {"model": "qwen2.5-coder", "messages": [{"role": "user", "content": "book it"}], "tools": OFFERED}
        header = ""
        if stream:
            chunks = client.chat.completions.create(**kwargs, stream=True)
            content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            raw = client.chat.completions.with_raw_response.create(**kwargs)
            header, content = raw.headers["x-toolbridge-calls"], raw.parse().choices[0].message.content
    assert content == text
    if not stream:  # (a stream's header is sent before the answer is read)
        assert "rejected=1" in header and "dialect=hermes" in header, header
