"""The chat template as auto's hint: the dialect a template writes calls in, read back from a probe."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import tool
from toolbridge import parse
from toolbridge.render.hint import template_dialect
from toolbridge.render.template import ChatTemplate

TEMPLATES = Path(__file__).resolve().parents[3] / "shared" / "templates"
TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}


def _template(name: str) -> ChatTemplate:
    path = TEMPLATES / f"{name}.jinja"
    if not path.exists():
        pytest.skip("shared templates not present")
    return ChatTemplate(path.name, {"default": path.read_text(encoding="utf-8")}, TOKENS)


@pytest.mark.parametrize("name, dialect", [
    ("Qwen3-Coder", "qwen3_coder"), ("Qwen3.5-4B", "qwen3_coder"), ("Qwen-Qwen2.5-7B-Instruct", "hermes"),
    ("Qwen-Qwen3-0.6B", "hermes"), ("GLM-4.7-Flash", "glm47"), ("moonshotai-Kimi-K2", "kimi_k2"),
    ("deepseek-ai-DeepSeek-V3.1", "deepseek_v31"), ("deepseek-ai-DeepSeek-V3.2", "deepseek_v32"),
    ("openai-gpt-oss-120b", "gpt_oss"), ("meta-llama-Llama-3.1-8B-Instruct", "llama3_json"),
    ("Mistral-Small-3.2-24B-Instruct-2506", "mistral"), ("MiniMax-M2", "minimax_m2"),
    ("ByteDance-Seed-OSS", "seed_oss"), ("openbmb-MiniCPM5-1B", "minicpm5"),
    ("google-gemma-2-2b-it", None),  # no tool support: no dialect
])
def test_template_names_its_dialect(name: str, dialect: str | None) -> None:
    assert template_dialect(_template(name)) == dialect


def test_template_hint_goes_first() -> None:
    """GLM 4.5 and 4.7 write calls alike; without a hint auto reports the first in its trial
    order (glm47), with the GLM-4.5 template's hint the template's own dialect."""
    text, tools = "<tool_call>lookup</tool_call>", [tool("lookup")]
    assert parse(text, "auto", tools).report.detected == "glm47"
    hint = template_dialect(_template("GLM-4.6"))
    assert hint in ("glm45", "glm47")
    assert parse(text, "auto", tools, hint="glm45").report.detected == "glm45"
