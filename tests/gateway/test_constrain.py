"""Constrained decoding in the gateway, end to end: the official SDKs -> toolbridge -> a scripted
upstream over HTTP on loopback. The upstream keeps every body it received: the tests read there
which field, in which shape, carried the grammar for each upstream kind, and that the answer is
still parsed by recovery (the scripted model writes its calls as text)."""

from __future__ import annotations

import json
import logging
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.constrain.engines import Xgrammar
from tests.gateway.test_e2e import CALLS, TOOLS
from tests.gateway.test_fallback import model_dir, stack
from toolbridge.cli.main import build_parser
from toolbridge.errors import ConfigError
from toolbridge.gateway.config import GatewayConfig, env_defaults
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

USER = [{"role": "user", "content": "Weather in Paris?"}]
WEATHER_CALL = [("get_weather", {"city": "Paris", "days": 3})]
LLAMA_JSON = '{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}'
GRAMMAR_FIELDS = ("structured_outputs", "grammar", "grammar_lazy", "grammar_triggers", "preserved_tokens")
TEMPLATES = Path(__file__).resolve().parents[3] / "shared" / "templates"
LISTINGS: dict[str, tuple[dict[str, Any], list[tuple[bytes, bytes]]]] = {
    "vllm": ({"object": "list", "data": [{"id": "Qwen/Qwen3-8B", "object": "model", "owned_by": "vllm",
                                          "root": "Qwen/Qwen3-8B", "max_model_len": 32768}]}, []),
    "sglang": ({"object": "list", "data": [{"id": "qwen", "object": "model", "owned_by": "sglang",
                                            "root": "qwen", "max_model_len": 32768}]}, []),
    "llamacpp": ({"object": "list", "models": [{"name": "m.gguf", "model": "m.gguf"}],
                  "data": [{"id": "m.gguf", "object": "model", "owned_by": "llamacpp",
                            "meta": {"n_ctx_train": 4096}}]}, []),
    "llama-cpp-python": ({"object": "list", "data": [{"id": "m.gguf", "object": "model", "owned_by": "me",
                                                      "permissions": []}]}, []),
    "ollama": ({"object": "list", "data": [{"id": "llama3.2:latest", "object": "model", "created": 1,
                                            "owned_by": "library"}]}, []),
    "openai": ({"object": "list", "data": [{"id": "gpt-4o", "object": "model", "owned_by": "system"}]}, []),
}


def model(call: str = CALLS["hermes"], reject: tuple[str, ...] = (), status: int = 400,
          error: str = "") -> Any:
    """An upstream that writes ``call`` as text (after a line of prose, but for a bare JSON
    call); with ``reject``, it answers ``status`` to a body carrying any of those fields (as a
    server that does not take the grammar)."""
    prose = "" if call.startswith("{") else "Let me check.\n"

    def script(body: dict[str, Any]) -> Reply:
        if any(field in body for field in reject):
            return Reply(status=status, error=error or f"unknown field: {reject[0]}")
        return Reply(content=prose + call, chunk=5)
    return script


def raw(s: Stack, stream: bool = False, **kw: Any) -> tuple[Any, dict[str, Any]]:
    """One chat completion through the gateway: the SDK's raw response and what it parsed to."""
    kw.setdefault("tool_choice", "required")
    client = s.client()
    if stream:
        response = client.chat.completions.with_raw_response.create(model="m", messages=USER, tools=TOOLS,
                                                                     stream=True, **kw)
        calls: dict[int, dict[str, str]] = {}
        for chunk in response.parse():
            for part in (chunk.choices[0].delta.tool_calls or ()) if chunk.choices else ():
                entry = calls.setdefault(part.index, {"name": "", "arguments": ""})
                entry["name"] += part.function.name or ""
                entry["arguments"] += part.function.arguments or ""
        got = [(c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())]
        return response, {"tool_calls": got}
    response = client.chat.completions.with_raw_response.create(model="m", messages=USER, tools=TOOLS, **kw)
    message = response.parse().choices[0].message
    got = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or ()]
    return response, {"tool_calls": got}


def metrics(s: Stack) -> str:
    return urllib.request.urlopen(s.url.removesuffix("/v1") + "/metrics").read().decode()


def xgrammar() -> Any:
    return pytest.importorskip("xgrammar", reason="xgrammar is not set up (`make engines` or `make check` installs it)")


# ---------------------------------------------------------------- per upstream kind


@pytest.mark.parametrize("stream", [False, True])
def test_vllm_gets_a_structural_tag_in_structured_outputs(stream: bool) -> None:
    with Stack(model(), tool_call_parser="hermes", constrain="required", upstream_kind="vllm") as s:
        response, got = raw(s, stream)
        body = s.upstream.requests[-1]
        text = metrics(s)
    assert got["tool_calls"] == WEATHER_CALL  # parsed from the text, as without a grammar
    assert response.headers["x-toolbridge-constraint"].startswith("applied (vllm structured_outputs")
    tag = body["structured_outputs"]["structural_tag"]
    assert isinstance(tag, str) and json.loads(tag)["type"] == "structural_tag"
    xgrammar().Grammar.from_structural_tag(tag)  # what vLLM's xgrammar backend compiles
    # vLLM would add its own JSON constraint for "required" and refuse two: the gateway asks
    # for none there and enforces the required call itself.
    assert body["tool_choice"] == "none" and body["tools"] == TOOLS
    assert "response_format" not in body
    assert 'toolbridge_constraint_total{kind="vllm",outcome="applied"} 1' in text


def test_sglang_gets_the_structural_tag_as_response_format() -> None:
    with Stack(model(), tool_call_parser="hermes", constrain="required", upstream_kind="sglang") as s:
        response, got = raw(s, tool_choice={"type": "function", "function": {"name": "get_weather"}})
        body = s.upstream.requests[-1]
    assert got["tool_calls"] == WEATHER_CALL
    assert response.headers["x-toolbridge-constraint"].startswith("applied (sglang response_format")
    tag = body["response_format"]
    assert tag["type"] == "structural_tag" and isinstance(tag["format"], dict)
    xgrammar().Grammar.from_structural_tag(json.dumps(tag))
    assert "get_weather" in json.dumps(tag) and "read_file" not in json.dumps(tag)  # the named tool only
    assert body["tool_choice"] == "auto" and not any(f in body for f in GRAMMAR_FIELDS)


@pytest.mark.parametrize("choice", ["required", "auto"])
def test_llamacpp_chat_gets_a_whole_gbnf_grammar_and_tool_choice_none(choice: str) -> None:
    """Its chat endpoint refuses a grammar beside tools unless tool_choice is none, and sets
    grammar_lazy from the template: the whole grammar goes, prose free under auto."""
    with Stack(model(), tool_call_parser="hermes", constrain="always", upstream_kind="llamacpp") as s:
        _, got = raw(s, tool_choice=choice)
        body = s.upstream.requests[-1]
    assert got["tool_calls"] == WEATHER_CALL
    assert body["tool_choice"] == "none" and "grammar_lazy" not in body and "grammar_triggers" not in body
    xgrammar().Grammar.from_ebnf(body["grammar"])
    assert body["grammar"].startswith("root ::=")
    if choice == "auto":
        assert _accepts(body["grammar"], "Let me check.\n" + CALLS["hermes"])  # prose, then the call
    else:
        assert not _accepts(body["grammar"], "Let me check.\n" + CALLS["hermes"])
        assert _accepts(body["grammar"], CALLS["hermes"])


def test_llamacpp_completions_gets_a_lazy_grammar_with_word_triggers(tmp_path: Path) -> None:
    """Where the gateway renders the prompt (its completions endpoint reads grammar_lazy and
    grammar_triggers as sent), tool_choice auto gets the lazy grammar from the trigger on."""
    with stack(model(), upstream_api="completions", model_dir=model_dir(tmp_path), tool_fallback=True,
               constrain="always", upstream_kind="llamacpp") as s:
        _, got = raw(s, tool_choice="auto")
        body = s.upstream.requests[-1]
    assert got["tool_calls"] == WEATHER_CALL
    assert "prompt" in body and "tools" not in body
    assert body["grammar_lazy"] is True
    # COMMON_GRAMMAR_TRIGGER_TYPE_WORD; with the drifted openers recovery reads (--constrain-drift)
    assert body["grammar_triggers"] == [{"type": 1, "value": v} for v in ("<tool_call>", "```json", '{"name"')]
    assert body["preserved_tokens"] == ["<tool_call>"]
    assert _accepts(body["grammar"], CALLS["hermes"])  # the calls, from the trigger on
    assert _accepts(body["grammar"], '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```')


def test_llamacpp_completions_without_drift_triggers_on_the_marker_alone(tmp_path: Path) -> None:
    with stack(model(), upstream_api="completions", model_dir=model_dir(tmp_path), tool_fallback=True,
               constrain="always", upstream_kind="llamacpp", constrain_drift="off") as s:
        raw(s, tool_choice="auto")
        body = s.upstream.requests[-1]
    assert body["grammar_triggers"] == [{"type": 1, "value": "<tool_call>"}]


def test_ollama_gets_a_json_schema_format_for_a_json_envelope_dialect() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    with Stack(model(LLAMA_JSON), tool_call_parser="llama3_json", constrain="required",
               upstream_kind="ollama") as s:
        response, got = raw(s)
        body = s.upstream.requests[-1]
    assert got["tool_calls"] == WEATHER_CALL
    assert response.headers["x-toolbridge-constraint"].startswith("applied (ollama")
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"  # Ollama passes json_schema.schema on as its format
    jsonschema.validate(json.loads(LLAMA_JSON), fmt["json_schema"]["schema"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": "get_weather", "parameters": {"city": 3}}, fmt["json_schema"]["schema"])


def test_ollama_with_a_markup_dialect_is_not_constrained_and_says_why_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="toolbridge.gateway")
    with Stack(model(), tool_call_parser="hermes", constrain="required", upstream_kind="ollama") as s:
        first, got = raw(s)
        raw(s)
        bodies = s.upstream.requests
        text = metrics(s)
    assert got["tool_calls"] == WEATHER_CALL
    assert first.headers["x-toolbridge-constraint"].startswith("skipped (dialect 'hermes'")
    assert all("response_format" not in b and b["tool_choice"] == "required" for b in bodies)
    assert sum("not constrained" in r.getMessage() for r in caplog.records) == 1
    assert 'toolbridge_constraint_total{kind="ollama",outcome="skipped"} 2' in text


def test_openai_upstream_is_sent_nothing() -> None:
    with Stack(model(), tool_call_parser="hermes", constrain="always", upstream_kind="openai") as s:
        response, _ = raw(s)
        body = s.upstream.requests[-1]
    assert response.headers["x-toolbridge-constraint"].startswith("skipped (an OpenAI upstream")
    assert body["tool_choice"] == "required" and not any(f in body for f in (*GRAMMAR_FIELDS, "response_format"))


# ---------------------------------------------------------------- which requests


def test_off_sends_nothing_and_adds_no_header() -> None:
    with Stack(model(), tool_call_parser="hermes", upstream_kind="vllm") as s:  # --constrain off (default)
        response, got = raw(s)
        body = s.upstream.requests[-1]
        probes = s.upstream.models_probes
    assert got["tool_calls"] == WEATHER_CALL
    assert "x-toolbridge-constraint" not in response.headers
    assert body["tool_choice"] == "required" and not any(f in body for f in (*GRAMMAR_FIELDS, "response_format"))
    assert probes == 1  # the model list at start (gateway/upstream/models.py), no probe of its own


@pytest.mark.parametrize("mode, choice, strict, constrained", [
    ("required", "required", False, True),
    ("required", {"type": "function", "function": {"name": "get_weather"}}, False, True),
    ("required", "auto", True, False),
    ("strict", "auto", True, True),
    ("strict", "auto", False, False),
    ("always", "auto", False, True),
    ("always", None, False, True),
])
def test_which_requests_each_mode_constrains(mode: str, choice: Any, strict: bool, constrained: bool) -> None:
    tools = [{**t, "function": {**t["function"], "strict": True}} for t in TOOLS] if strict else TOOLS
    kw: dict[str, Any] = {"tools": tools} if choice is None else {"tools": tools, "tool_choice": choice}
    with Stack(model(), tool_call_parser="hermes", constrain=mode, upstream_kind="vllm") as s:
        c = s.client()
        response = c.chat.completions.with_raw_response.create(model="m", messages=USER, **kw)
        calls = response.parse().choices[0].message.tool_calls
        body = s.upstream.requests[-1]
    assert [(t.function.name, json.loads(t.function.arguments)) for t in calls] == WEATHER_CALL
    header = response.headers["x-toolbridge-constraint"]
    assert header.startswith("applied") is constrained, header
    assert ("structured_outputs" in body) is constrained
    if choice in ("auto", None):
        assert body.get("tool_choice") == choice  # auto is sent as the client sent it
    if not constrained:
        assert "not constrained under --constrain" in header


def test_no_tools_no_header() -> None:
    with Stack(lambda body: Reply(content="Hello."), tool_call_parser="hermes", constrain="always",
               upstream_kind="vllm") as s:
        response = s.client().chat.completions.with_raw_response.create(model="m", messages=USER)
        body = s.upstream.requests[-1]
    assert "x-toolbridge-constraint" not in response.headers and "structured_outputs" not in body


def test_auto_parser_without_a_template_is_not_constrained_and_says_why() -> None:
    with Stack(model(), constrain="required", upstream_kind="vllm") as s:  # --tool-call-parser auto
        response, got = raw(s)
        body = s.upstream.requests[-1]
    assert got["tool_calls"] == WEATHER_CALL
    assert response.headers["x-toolbridge-constraint"].startswith("skipped (the dialect is not known")
    assert "structured_outputs" not in body


def test_auto_parser_takes_the_dialect_of_the_chat_template() -> None:
    template = TEMPLATES / "Qwen-Qwen2.5-7B-Instruct.jinja"
    if not template.exists():
        pytest.skip("shared templates not present")
    with Stack(model(), chat_template=str(template), constrain="required", upstream_kind="vllm") as s:
        response, got = raw(s)
        body = s.upstream.requests[-1]
    assert got["tool_calls"] == WEATHER_CALL
    assert response.headers["x-toolbridge-constraint"] == "applied (vllm structured_outputs.structural_tag; hermes)"
    assert "<tool_call>" in body["structured_outputs"]["structural_tag"]


def test_a_json_response_format_is_compiled_with_the_tools() -> None:
    """The answer may be a call or the requested JSON: the request's own response_format is
    replaced by the combined constraint, so calls stay possible."""
    fmt = {"type": "json_schema", "json_schema": {"name": "weather", "schema": {
        "type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}}}
    with Stack(model(), tool_call_parser="hermes", constrain="always", upstream_kind="vllm") as s:
        _, got = raw(s, tool_choice="auto", response_format=fmt)
        body = s.upstream.requests[-1]
    assert got["tool_calls"] == WEATHER_CALL
    assert "response_format" not in body
    tag = body["structured_outputs"]["structural_tag"]
    assert '"summary"' in tag and "<tool_call>" in tag
    xgrammar().Grammar.from_structural_tag(tag)


def test_a_prompt_that_opened_the_reasoning_block_starts_the_grammar_inside_it(tmp_path: Path) -> None:
    """Where the gateway rendered the prompt and it ends inside the think block, the grammar
    starts there: reasoning text up to its end marker, then the call."""
    template = ("{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}\n{% endfor %}"
                "{% if add_generation_prompt %}<|assistant|>\n<think>\n{% endif %}")
    with stack(model(), upstream_api="completions", model_dir=model_dir(tmp_path, template),
               tool_fallback=True, constrain="required", upstream_kind="llamacpp") as s:
        raw(s)
        body = s.upstream.requests[-1]
    assert body["prompt"].endswith("<think>\n") and "grammar_lazy" not in body
    assert _accepts(body["grammar"], "The weather tool fits.</think>\n" + CALLS["hermes"])
    assert not _accepts(body["grammar"], CALLS["hermes"])  # the block is open: it must close first


def test_flags_and_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (GatewayConfig().constrain, GatewayConfig().upstream_kind) == ("off", "auto")
    args = build_parser().parse_args(["serve", "--constrain", "strict", "--upstream-kind", "llamacpp"])
    assert (args.constrain, args.upstream_kind) == ("strict", "llamacpp")
    monkeypatch.setenv("TOOLBRIDGE_CONSTRAIN", "always")
    assert build_parser().parse_args(["serve"]).constrain == "always"
    assert env_defaults({"TOOLBRIDGE_CONSTRAIN": "required", "TOOLBRIDGE_UPSTREAM_KIND": "sglang"}) == {
        "constrain": "required", "upstream_kind": "sglang"}
    for bad in ({"constrain": "on"}, {"upstream_kind": "tgi"}):
        with pytest.raises(ConfigError):
            GatewayConfig(upstream="http://127.0.0.1:1/v1", **bad).check()  # type: ignore[arg-type]


# ---------------------------------------------------------------- rejection and fallback


@pytest.mark.parametrize("stream", [False, True])
def test_a_rejected_grammar_falls_back_once_and_is_not_sent_again(stream: bool,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="toolbridge.gateway")
    script = model(reject=("structured_outputs",), error="structured_outputs: xgrammar could not compile "
                                                          "the structural tag")
    with Stack(script, tool_call_parser="hermes", constrain="required", upstream_kind="vllm") as s:
        first, got = raw(s, stream)
        second, again = raw(s, stream)
        bodies = s.upstream.requests
        text = metrics(s)
    assert got["tool_calls"] == again["tool_calls"] == WEATHER_CALL  # recovery read both
    assert first.headers["x-toolbridge-constraint"].startswith("fallback (upstream answered 400: structured_outputs")
    assert second.headers["x-toolbridge-constraint"].startswith("skipped (the upstream refused a grammar before")
    assert ["structured_outputs" in b for b in bodies] == [True, False, False]
    assert bodies[1]["tool_choice"] == "required" == bodies[2]["tool_choice"]  # the request as the client sent it
    assert 'toolbridge_constraint_total{kind="vllm",outcome="fallback"} 1' in text
    assert sum("falling back to recovery" in r.getMessage() for r in caplog.records) == 1


def test_any_4xx_to_the_first_constrained_request_falls_back() -> None:
    """llama.cpp's own words for a grammar beside tools name the grammar; a terse 422 does not,
    and is still read as a refusal when it is the first constrained request and the request
    goes through without the grammar."""
    with Stack(model(reject=("grammar",), status=422, error="invalid request"), tool_call_parser="hermes",
               constrain="required", upstream_kind="llamacpp") as s:
        first, got = raw(s)
        raw(s)
        bodies = s.upstream.requests
        refused = s.gateway.pipeline.constrainer.refused
    assert got["tool_calls"] == WEATHER_CALL
    assert first.headers["x-toolbridge-constraint"].startswith("fallback (upstream answered 422")
    assert ["grammar" in b for b in bodies] == [True, False, False] and refused


def test_a_4xx_that_is_not_the_grammars_does_not_switch_it_off() -> None:
    """The first request fails the same way without the grammar: the constraint was not the
    cause, the client gets the upstream's error, and the next request is constrained again."""
    def script(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["content"] == "bad":
            return Reply(status=400, error="messages: bad request")
        return Reply(content=CALLS["hermes"])
    import openai

    with Stack(script, tool_call_parser="hermes", constrain="required", upstream_kind="vllm") as s:
        with pytest.raises(openai.BadRequestError):
            s.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "bad"}],
                                               tools=TOOLS, tool_choice="required")
        response, got = raw(s)
        bodies = s.upstream.requests
    assert len(bodies) == 3 and "structured_outputs" in bodies[2]
    assert response.headers["x-toolbridge-constraint"].startswith("applied")


# ---------------------------------------------------------------- detection


@pytest.mark.parametrize("kind", sorted(LISTINGS))
def test_the_upstream_kind_is_detected_once_from_v1_models(kind: str) -> None:
    listing, headers = LISTINGS[kind]
    call = LLAMA_JSON if kind == "ollama" else CALLS["hermes"]
    s = Stack(model(call), tool_call_parser="llama3_json" if kind == "ollama" else "hermes",
              constrain="required")
    s.upstream.models, s.upstream.models_headers = listing, headers
    with s:  # the model list fetched at start (gateway/upstream/models.py) tells the kind too
        _, got = raw(s)
        raw(s)
        probes = s.upstream.models_probes
        found = s.gateway.pipeline.constrainer.kind
    assert found == kind and probes == 1
    assert got["tool_calls"] == WEATHER_CALL


def test_llamacpp_is_detected_by_its_server_header() -> None:
    s = Stack(model(), tool_call_parser="hermes", constrain="required")
    s.upstream.models_headers = [(b"server", b"llama.cpp")]
    with s:
        raw(s)
        body = s.upstream.requests[-1]
    assert s.gateway is not None and "grammar" in body


def test_an_unknown_upstream_is_not_constrained() -> None:
    with Stack(model(), tool_call_parser="hermes", constrain="required") as s:  # the replay's own listing
        response, got = raw(s)
        body = s.upstream.requests[-1]
    assert got["tool_calls"] == WEATHER_CALL
    assert response.headers["x-toolbridge-constraint"].startswith("skipped (the upstream kind is unknown")
    assert not any(f in body for f in GRAMMAR_FIELDS)


# ---------------------------------------------------------------- the other fronts


def test_messages_front_is_constrained_the_same_way() -> None:
    anthropic = pytest.importorskip("anthropic")
    tools = [{"name": "get_weather", "input_schema": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}]
    with Stack(model(), tool_call_parser="hermes", constrain="required", upstream_kind="vllm") as s:
        with anthropic.Anthropic(base_url=s.url.removesuffix("/v1"), api_key="sk-test", max_retries=0) as c:
            response = c.messages.with_raw_response.create(model="m", max_tokens=100, messages=USER,
                                                           tools=tools, tool_choice={"type": "any"})
        message = response.parse()
        body = s.upstream.requests[-1]
    assert [(b.name, b.input) for b in message.content if b.type == "tool_use"] == WEATHER_CALL
    assert response.headers["x-toolbridge-constraint"].startswith("applied (vllm")
    assert body["tool_choice"] == "none" and "get_weather" in body["structured_outputs"]["structural_tag"]


def test_responses_front_is_constrained_the_same_way() -> None:
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}]
    with Stack(model(), tool_call_parser="hermes", constrain="required", upstream_kind="sglang") as s:
        response = s.client().responses.with_raw_response.create(model="m", input="Weather in Paris?",
                                                                 tools=tools, tool_choice="required")
        parsed = response.parse()
        body = s.upstream.requests[-1]
    calls = [(item.name, json.loads(item.arguments)) for item in parsed.output if item.type == "function_call"]
    assert calls == WEATHER_CALL
    assert response.headers["x-toolbridge-constraint"].startswith("applied (sglang")
    assert body["response_format"]["type"] == "structural_tag" and body["tool_choice"] == "auto"


# ---------------------------------------------------------------- helpers


def _accepts(gbnf: str, text: str) -> bool:
    """Whether xgrammar, reading the GBNF as EBNF over a byte vocabulary, accepts ``text`` whole."""
    engine = Xgrammar()
    return engine.accepts(engine.ebnf(gbnf), text)
