"""``GET /v1/models`` answering each client as it reads it (gateway/upstream/catalog.py), over
HTTP: the ``openai`` and ``anthropic`` SDKs' ``models.list()``, the request Claude Code's
gateway discovery sends (and the filter it applies), and Codex's ``models`` catalog, against
upstreams that list models as vLLM does (with ``max_model_len``), list none, or answer an error."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

VLLM = [{"id": "qwen3-coder", "object": "model", "created": 1765000000, "owned_by": "vllm",
         "root": "Qwen/Qwen3-Coder-30B-A3B-Instruct", "parent": None, "max_model_len": 65536}]
ALIASES = "claude-qwen3-coder=qwen3-coder,claude-*haiku*=qwen3-coder,gpt-5.5=qwen3-coder"
# What Codex 0.171 requires of an entry (a model_catalog_json missing one is refused at start).
CODEX_REQUIRED = ("slug", "display_name", "shell_type", "visibility", "supported_in_api", "priority",
                  "supported_reasoning_levels", "support_verbosity", "truncation_policy",
                  "experimental_supported_tools", "base_instructions")


def hello(body: dict[str, Any]) -> Reply:
    return Reply(content="Hello.")


def listing(s: Stack, query: str = "", **headers: str) -> tuple[int, Any]:
    request = urllib.request.Request(s.url + "/models" + query, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=20) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def vllm_stack(**config: Any) -> Stack:
    s = Stack(hello, models=("qwen3-coder",), model_alias=ALIASES, **config)
    assert s.upstream.models is not None
    s.upstream.models["data"] = VLLM
    return s


def test_the_openai_sdk_lists_the_upstreams_models_and_the_plain_aliases() -> None:
    with vllm_stack() as s:
        models = list(s.client().models.list())
    assert [m.id for m in models] == ["qwen3-coder", "claude-qwen3-coder", "gpt-5.5"]
    first = models[0]
    assert first.object == "model" and first.created == 1765000000 and first.owned_by == "vllm"
    assert first.model_extra is not None and first.model_extra["root"] == "Qwen/Qwen3-Coder-30B-A3B-Instruct"
    assert models[1].owned_by == "toolbridge"


def test_the_anthropic_sdk_lists_them_as_its_model_infos() -> None:
    with vllm_stack() as s, anthropic.Anthropic(base_url=s.url.removesuffix("/v1"), api_key="k",
                                                max_retries=0, timeout=20) as c:
        page = c.models.list()
        models = list(page)
    assert [m.id for m in models] == ["qwen3-coder", "claude-qwen3-coder", "gpt-5.5"]
    assert all(m.type == "model" for m in models)
    assert models[0].display_name == "qwen3-coder" and models[1].display_name == "qwen3-coder"
    assert models[0].created_at.year == 2025 and models[1].created_at.year == 1970
    assert models[0].max_input_tokens == 65536 and models[1].max_input_tokens == 65536
    assert page.has_more is False and page.first_id == "qwen3-coder" and page.last_id == "gpt-5.5"


def test_claude_codes_gateway_discovery_keeps_the_claude_named_alias() -> None:
    """What Claude Code 2.1.197 sends (``?limit=1000``, ``anthropic-version``, ``x-api-key``) and
    reads (``data[].id`` and ``display_name``, ids beginning with claude or anthropic)."""
    with vllm_stack(api_key="secret") as s:
        status, body = listing(s, "?limit=1000", **{"anthropic-version": "2023-06-01", "x-api-key": "secret",
                                                    "User-Agent": "claude-cli/2.1.197 (external, cli)"})
        refused, _ = listing(s, "?limit=1000", **{"anthropic-version": "2023-06-01"})
    assert status == 200 and refused == 401
    kept = [(m["id"], m.get("display_name")) for m in body["data"] if re.match(r"(?i)^(claude|anthropic)", m["id"])]
    assert kept == [("claude-qwen3-coder", "qwen3-coder")]


def test_codex_reads_a_models_catalog_with_the_window_and_freeform_apply_patch() -> None:
    with vllm_stack() as s:
        status, body = listing(s, "?client_version=0.171.0", originator="codex_exec", version="0.171.0")
    assert status == 200
    models = {m["slug"]: m for m in body["models"]}
    assert list(models) == ["qwen3-coder", "claude-qwen3-coder", "gpt-5.5"]
    for entry in models.values():
        assert all(key in entry for key in CODEX_REQUIRED), entry
        assert entry["apply_patch_tool_type"] == "freeform" and entry["context_window"] == 65536
        assert entry["visibility"] == "list" and entry["supported_in_api"] is True


def test_the_window_comes_from_the_model_dir_when_the_upstream_gives_none(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{{ messages }}"}))
    (folder / "config.json").write_text(json.dumps({"max_position_embeddings": 40960}))
    with Stack(hello, models=("qwen3-coder",), model_dir=str(folder)) as s:
        _, body = listing(s)
    assert body["data"][0]["max_input_tokens"] == 40960 and body["models"][0]["context_window"] == 40960
    with Stack(hello, models=("qwen3-coder",)) as s:
        _, body = listing(s)
    assert "max_input_tokens" not in body["data"][0] and "context_window" not in body["models"][0]


def test_an_upstream_without_a_listing_gives_the_aliases_and_its_errors_pass_on() -> None:
    with Stack(hello, models=None, model_alias="claude-local=local,claude-*=local") as s:
        status, body = listing(s)
        assert status == 200 and [m["id"] for m in body["data"]] == ["claude-local"]
        assert [m.id for m in s.client().models.list()] == ["claude-local"]
    with Stack(hello, models=None) as s:
        status, body = listing(s)
        assert status == 200 and body["data"] == [] and body["models"] == [] and body["first_id"] is None
    with Stack(hello) as s:
        s.upstream.models_status = 503
        status, body = listing(s)
    assert status == 503 and body["error"]["message"] == "listing failed"
