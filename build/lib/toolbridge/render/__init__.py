"""Messages and tools into prompt text: chat templates, probing, the injected tool protocol.

- ``template``: load a model's chat template (a file or a model folder) and render OpenAI
  messages through it exactly as ``transformers``' ``apply_chat_template`` does;
- ``probe``: which parts of the tool protocol a template renders;
- ``protocol``: the opt-in prompt-injected tool protocol for templates without tool support;
- ``prompt``: one request's prompt: native, injected (opted in), or a refusal naming the flag.

Pure functions over data; Jinja2 is this layer's only dependency.
"""

from __future__ import annotations

from .probe import Capabilities, probe
from .prompt import FallbackRequired, Prompt, build_prompt, capabilities, missing
from .protocol import fallback_dialect, inject, preamble
from .template import ChatTemplate, load_model_dir, load_template

__all__ = [
    "Capabilities",
    "ChatTemplate",
    "FallbackRequired",
    "Prompt",
    "build_prompt",
    "capabilities",
    "fallback_dialect",
    "inject",
    "load_model_dir",
    "load_template",
    "missing",
    "preamble",
    "probe",
]
