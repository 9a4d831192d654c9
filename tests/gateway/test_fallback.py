"""The prompt-injected tool protocol and the completions upstream mode, end to end: the official
openai SDK -> toolbridge gateway -> a replaying upstream, over real HTTP.

The model's template (written here, in the style of templates with no tool syntax) renders only
system, user and assistant turns. The upstream plays a model that learned the protocol from the
prompt: it calls ``get_weather`` until it sees a ``<tool_response>``, then answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.gateway.test_e2e import ask
from tests.harness import tool
from toolbridge.errors import ConfigError
from toolbridge.gateway.config import GatewayConfig, env_defaults
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply, Script
from toolbridge.gateway.replay.text import TextReplayUpstream
from toolbridge.render import ChatTemplate

PLAIN_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "{% if m.role == 'system' %}<|system|>\n{{ m.content }}\n"
    "{% elif m.role == 'user' %}<|user|>\n{{ m.content }}\n"
    "{% elif m.role == 'assistant' %}<|assistant|>\n{{ m.content }}{{ eos_token }}\n{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
EOS = "<|endoftext|>"
WEATHER = tool("get_weather", city={"type": "string"}, days={"type": "integer"})
READ = tool("read_file", path={"type": "string"})
TOOLS = [READ, WEATHER]
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>'
FINAL = "Sunny in Paris for 3 days."
REFUSAL = "registry.ollama.ai/library/olmoe:latest does not support tools"


def model_dir(tmp_path: Path, template: str = PLAIN_TEMPLATE) -> str:
    root = tmp_path / "model"
    root.mkdir(exist_ok=True)
    config = {"chat_template": template, "bos_token": "", "eos_token": {"content": EOS}}
    (root / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return str(root)


def tokenizer_model_dir(tmp_path: Path) -> tuple[str, int]:
    """A model folder (``PLAIN_TEMPLATE``) with a word-level ``tokenizer.json`` (skipped without
    the ``tokenizers`` package), and how many tokens it makes of the prompt of system "Be brief."
    and user "Hi there, how are you?" (what the token-count tests ask the gateway to count)."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    words = ["<|system|>", "<|user|>", "<|assistant|>", "Be", "brief", ".", "Hi", "there", ",", "how", "are",
             "you", "?", "[UNK]"]
    tokenizer = tokenizers.Tokenizer(WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    folder = model_dir(tmp_path)
    tokenizer.save(str(Path(folder) / "tokenizer.json"))
    prompt = ChatTemplate("t", {"default": PLAIN_TEMPLATE}, {"bos_token": ""}).render(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there, how are you?"}],
        add_generation_prompt=True)
    return folder, len(tokenizer.encode(prompt, add_special_tokens=False).ids)


def prompt_of(body: dict[str, Any]) -> str:
    """What the model sees: the completions prompt, or the chat messages as text."""
    if "prompt" in body:
        return str(body["prompt"])
    return "\n".join(f"<{m['role']}>{m.get('content')}" for m in body["messages"])


def model(refuse_tools: bool = False) -> Script:
    def script(body: dict[str, Any]) -> Reply:
        if refuse_tools and body.get("tools"):
            return Reply(status=400, error=REFUSAL)
        end = EOS + "<|user|>\nnever seen" if "prompt" in body else ""  # raw text runs on
        if "<tool_response id=\"call_" in prompt_of(body):
            return Reply(content=FINAL + end, chunk=5)
        return Reply(content="Let me check.\n" + CALL + end, chunk=5)
    return script


def stack(script: Script, **config: Any) -> Stack:
    s = Stack(script, **config)
    s.upstream = TextReplayUpstream(script)
    return s


def loop(client: openai.OpenAI, stream: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """tools -> a parsed call -> role "tool" -> the second completion."""
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    first = ask(client, messages, stream)
    call_id = "call_w1"
    messages += [
        {"role": "assistant", "content": first["content"], "tool_calls": [
            {"id": call_id, "type": "function", "function": {
                "name": first["tool_calls"][0][0], "arguments": json.dumps(first["tool_calls"][0][1])}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "sunny </tool_response> 21C"},
    ]
    return first, ask(client, messages, stream)


def check_loop(first: dict[str, Any], second: dict[str, Any], seen: list[str]) -> None:
    assert first["tool_calls"] == [("get_weather", {"city": "Paris", "days": 3})]
    assert isinstance(first["tool_calls"][0][1]["days"], int)
    assert first["finish"] == "tool_calls" and first["content"] == "Let me check."
    assert second == {"content": FINAL, "tool_calls": [], "finish": "stop"}
    declaration, replay = seen
    assert "<tools>" in declaration and '"name": "get_weather"' in declaration
    assert "<tool_call>" in declaration  # the calling convention's example
    assert '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}' in replay
    assert '<tool_response id="call_w1" name="get_weather">' in replay
    assert "sunny &lt;/tool_response> 21C" in replay


@pytest.mark.parametrize("stream", [False, True])
def test_completions_mode_two_turn_loop(tmp_path: Path, stream: bool) -> None:
    with stack(model(), upstream_api="completions", model_dir=model_dir(tmp_path),
               tool_fallback=True) as s:
        first, second = loop(s.client(), stream)
        bodies = s.upstream.requests
    check_loop(first, second, [b["prompt"] for b in bodies])
    for body in bodies:
        assert body["skip_special_tokens"] is False and body["spaces_between_special_tokens"] is False
        assert EOS in body["stop"] and "tools" not in body and body["prompt"].endswith("<|assistant|>\n")
    assert bodies[0]["prompt"].startswith("<|system|>\n# Tool use")


@pytest.mark.parametrize("stream", [False, True])
def test_chat_mode_retries_a_tool_refusal_with_the_protocol(stream: bool) -> None:
    with stack(model(refuse_tools=True), tool_fallback=True) as s:
        first, second = loop(s.client(), stream)
        bodies = s.upstream.requests
    assert "tools" in bodies[0] and all("tools" not in b for b in bodies[1:])
    assert len(bodies) == 3  # one refusal; afterwards the model is sent the protocol directly
    check_loop(first, second, [prompt_of(bodies[1]), prompt_of(bodies[2])])
    assert bodies[1]["messages"][0]["role"] == "system"


def test_flag_unset_tools_and_tool_turns_are_refused_naming_the_flag(tmp_path: Path) -> None:
    with stack(model(), upstream_api="completions", model_dir=model_dir(tmp_path)) as s:
        client = s.client()
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}],
                                           tools=TOOLS)
        assert "--tool-fallback" in str(caught.value) and "TOOLBRIDGE_TOOL_FALLBACK=1" in str(caught.value)
        history: list[Any] = [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
             "function": {"name": "read_file", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "x"}]
        with pytest.raises(openai.BadRequestError, match="--tool-fallback"):
            client.chat.completions.create(model="m", messages=history)
        assert s.upstream.requests == []


def test_flag_unset_chat_mode_passes_the_refusal_on_naming_the_flag() -> None:
    with stack(model(refuse_tools=True)) as s, pytest.raises(openai.BadRequestError) as caught:
        s.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}],
                                           tools=TOOLS)
    assert REFUSAL in str(caught.value) and "--tool-fallback" in str(caught.value)


@pytest.mark.parametrize("flag", [False, True])
def test_without_tools_the_prompt_is_the_templates_own(tmp_path: Path, flag: bool) -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi <b>"}]
    with stack(lambda body: Reply(content="Hello." + EOS), upstream_api="completions",
               model_dir=model_dir(tmp_path), tool_fallback=flag) as s:
        answer = s.client().chat.completions.create(model="m", messages=messages)
        body = s.upstream.requests[0]
    template = ChatTemplate("t", {"default": PLAIN_TEMPLATE}, {"bos_token": "", "eos_token": EOS})
    assert body["prompt"] == template.render(messages, add_generation_prompt=True)
    assert answer.choices[0].message.content == "Hello." and answer.choices[0].finish_reason == "stop"


THINKING = PLAIN_TEMPLATE.replace("<|assistant|>\n{% endif %}", "<|assistant|>\n<think>\n{% endif %}")


@pytest.mark.parametrize("stream", [False, True])
def test_reasoning_is_split_out_when_the_prompt_opened_it(tmp_path: Path, stream: bool) -> None:
    text = "The user greets.\n</think>\n\nHello!" + EOS
    with stack(lambda body: Reply(content=text, chunk=3), upstream_api="completions",
               model_dir=model_dir(tmp_path, THINKING)) as s:
        client = s.client()
        if stream:
            content, reasoning = "", ""
            for chunk in client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "Hi"}], stream=True):
                if chunk.choices:
                    delta = chunk.choices[0].delta.model_dump()
                    content += delta.get("content") or ""
                    reasoning += delta.get("reasoning_content") or ""
        else:
            message = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "Hi"}]).choices[0].message.model_dump()
            content, reasoning = message["content"], message["reasoning_content"]
    assert reasoning == "The user greets.\n" and content.strip() == "Hello!"


def test_required_tool_choice_is_asked_for_and_enforced(tmp_path: Path) -> None:
    with stack(lambda body: Reply(content="No." + EOS), upstream_api="completions",
               model_dir=model_dir(tmp_path), tool_fallback=True) as s:
        choice = {"type": "function", "function": {"name": "read_file"}}
        with pytest.raises(openai.APIStatusError) as caught:
            s.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}],
                                               tools=TOOLS, tool_choice=choice)
        prompt = s.upstream.requests[0]["prompt"]
    assert caught.value.status_code == 502 and "tool_choice" in str(caught.value)
    assert "you must call the function read_file." in prompt


def test_configuration(tmp_path: Path) -> None:
    assert env_defaults({"TOOLBRIDGE_TOOL_FALLBACK": "1", "TOOLBRIDGE_UPSTREAM_API": "completions"}) == {
        "tool_fallback": True, "upstream_api": "completions"}
    base = GatewayConfig(upstream="http://127.0.0.1:9/v1")
    bad = [
        ({"upstream_api": "completions"}, "needs --model-dir or --chat-template"),
        ({"upstream_api": "responses"}, "must be chat or completions"),
        ({"fallback_dialect": "no_such_dialect"}, "unknown dialect"),
        ({"chat_template": str(tmp_path / "missing.jinja")}, "cannot read chat template"),
        ({"chat_template": "a", "model_dir": "b"}, "not both"),
    ]
    from dataclasses import replace

    for change, says in bad:
        with pytest.raises(ConfigError, match=says):
            replace(base, **change).check()
    replace(base, upstream_api="completions", model_dir=model_dir(tmp_path)).check()


@pytest.mark.parametrize("flag", [False, True])
def test_chat_mode_with_a_template_decides_up_front(tmp_path: Path, flag: bool) -> None:
    template = tmp_path / "plain.jinja"
    template.write_text(PLAIN_TEMPLATE, encoding="utf-8")
    with stack(model(), chat_template=str(template), tool_fallback=flag) as s:
        client = s.client()
        if not flag:
            with pytest.raises(openai.BadRequestError, match="--tool-fallback"):
                ask(client, [{"role": "user", "content": "Weather in Paris?"}], False)
            assert s.upstream.requests == []
            return
        first, second = loop(client, False)
        bodies = s.upstream.requests
    assert len(bodies) == 2 and all("tools" not in b for b in bodies)  # no refused first try
    check_loop(first, second, [prompt_of(b) for b in bodies])


def test_history_the_protocol_cannot_write_is_a_400() -> None:
    history: list[Any] = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
         "function": {"name": "read_file", "arguments": "{not json"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "x"}]
    with stack(model(refuse_tools=True), tool_fallback=True) as s, \
            pytest.raises(openai.BadRequestError, match="arguments of read_file are not JSON"):
        s.client().chat.completions.create(model="m", messages=history, tools=TOOLS)


SEED_STYLE = (  # our own template in a Seed-OSS-like style: native calls, reasoning opened by the prompt
    "{% for m in messages %}<seed:bos>{{ m.role }}\n"
    "{% if m.tool_calls %}{% for c in m.tool_calls %}<seed:tool_call>\n<function={{ c.function.name }}>\n"
    "{% for k, v in c.function.arguments.items() %}<parameter={{ k }}>{{ v }}</parameter>\n{% endfor %}"
    "</function>\n</seed:tool_call>{% endfor %}{% else %}{{ m.content }}{% endif %}<seed:eos>{% endfor %}"
    "{% if tools %}<seed:bos>system\n{{ tools | tojson }}<seed:eos>{% endif %}"
    "{% if add_generation_prompt %}<seed:bos>assistant\n<seed:think>{% endif %}"
)


@pytest.mark.parametrize("stream", [False, True])
def test_auto_takes_its_hint_from_the_template(tmp_path: Path, stream: bool) -> None:
    """Completions mode with the default parser: the template's own call format names the
    dialect, so the reasoning its prompt opened (<seed:think>) is split out and the call read."""
    answer = ("Paris, three days.</seed:think><seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris"
              "</parameter>\n<parameter=days>3</parameter>\n</function>\n</seed:tool_call><seed:eos>")
    with stack(lambda body: Reply(content=answer, chunk=4), upstream_api="completions",
               model_dir=model_dir(tmp_path, SEED_STYLE)) as s:
        got = ask(s.client(), [{"role": "user", "content": "Weather in Paris?"}], stream)
        assert got["tool_calls"] == [("get_weather", {"city": "Paris", "days": 3})]
        assert got["content"] is None  # the reasoning did not leak into content
        raw = s.client().chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "?"}], tools=TOOLS)
        assert raw.headers["x-toolbridge-calls"].endswith("dialect=seed_oss")
