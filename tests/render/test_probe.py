"""Capability probing over known templates (INDEX.md of the shared templates says which render
tools), and over small templates written to fool a search of the source."""

from __future__ import annotations

import pytest

from toolbridge.render import Capabilities, ChatTemplate, load_template, probe

from .conversations import SPECIAL, TEMPLATES

KNOWN = {
    # file: (tools, tool_calls, tool_role, system_role)
    "Qwen-Qwen2.5-7B-Instruct.jinja": (True, True, True, True),
    "microsoft-Phi-3.5-mini-instruct.jinja": (False, False, False, True),
    "google-gemma-2-2b-it.jinja": (False, False, False, False),
    "HuggingFaceTB-SmolLM3-3B.jinja": (False, False, True, True),
    "deepseek-ai-DeepSeek-V3.1.jinja": (False, True, True, True),
    "LFM2-8B-A1B.jinja": (True, False, True, True),
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja": (True, True, True, False),
    "Mistral-Small-3.2-24B-Instruct-2506.jinja": (True, True, True, True),
    "llama-cpp-rwkv-world.jinja": (False, False, False, True),
    # Declares tools only inside a system turn.
    "vllm-examples/tool_chat_template_functiongemma.jinja": (True, True, True, False),
    # Given arguments as the JSON text: one concatenates it, one prints it.
    "meetkai-functionary-medium-v3.2.jinja": (True, True, True, True, "string"),
    "vllm-examples/tool_chat_template_phi4_mini.jinja": (True, True, True, True, "string"),
    "ByteDance-Seed-OSS.jinja": (True, True, True, True, "object"),
}


@pytest.mark.parametrize("file", sorted(KNOWN))
def test_known_templates(file: str) -> None:
    path = TEMPLATES / file
    if not path.is_file():
        pytest.skip("shared templates not present")
    template = ChatTemplate(str(path), load_template(path).sources, SPECIAL)
    assert probe(template) == Capabilities(*KNOWN[file])


LOOP = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
SYNTHETIC = {
    # Reads ``tools`` but never writes it: not tool support.
    "tools_read_not_written": ("{% if tools %}{% set n = tools | length %}{% endif %}" + LOOP,
                               (False, False, True, True)),
    "everything": (("{{ tools | tojson }}{% for m in messages %}{{ m.content }}"
                    "{{ (m.tool_calls or []) | tojson }}{% endfor %}"), (True, True, True, True)),
    "refuses_system_and_tool": (
        ("{% for m in messages %}{% if m.role in ['system', 'tool'] %}"
         "{{ raise_exception(m.role + ' not supported') }}{% endif %}{{ m.content }}{% endfor %}"),
        (False, False, False, False)),
    # Calls only when arguments are a string (as functionary v3.2 wants them).
    "string_arguments_only": (("{% for m in messages %}{{ m.content }}"
                               "{% for c in m.tool_calls or [] %}{{ c.function.arguments + '' }}"
                               "{% endfor %}{% endfor %}"),
                              (False, True, True, True, "string")),
    # Prints arguments as they come: an object would be written as a Python dict.
    "prints_arguments": (("{% for m in messages %}{{ m.content }}"
                          "{% for c in m.tool_calls or [] %}{{ c.function.arguments }}"
                          "{% endfor %}{% endfor %}"), (False, True, True, True, "string")),
    # Iterates the arguments: objects only.
    "object_arguments_only": (("{% for m in messages %}{{ m.content }}"
                               "{% for c in m.tool_calls or [] %}{% for k, v in "
                               "c.function.arguments.items() %}{{ k }}={{ v }}{% endfor %}"
                               "{% endfor %}{% endfor %}"), (False, True, True, True, "object")),
    # Declares tools only inside a system turn (as FunctionGemma).
    "tools_in_system_turn": (("{% for m in messages %}{{ m.content }}{% if m.role == 'system' %}"
                              "{{ tools | tojson }}{% endif %}{% endfor %}"),
                             (True, False, True, True)),
}


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_probes_render_rather_than_read_the_source(name: str) -> None:
    source, expected = SYNTHETIC[name]
    assert probe(ChatTemplate(name, {"default": source})) == Capabilities(*expected)


def test_native_tools_needs_all_three() -> None:
    assert Capabilities(True, True, True, False).native_tools
    assert not Capabilities(True, False, True, True).native_tools
