"""The completions mode renders what agents send as the serving engines do, over real HTTP: the
official openai SDK -> toolbridge gateway -> a replaying upstream whose prompt is checked byte for
byte.

Qwen Code sends every message's content as a list of text parts and call arguments as the JSON
string; the template (ours, in the style of the Qwen3-Coder templates) concatenates contents as
strings and iterates the arguments as an object.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from tests.gateway.test_fallback import EOS, TOOLS, model_dir, stack
from toolbridge.gateway.replay.upstream import Reply

QWEN_STYLE = (
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' and m.tool_calls %}{{ '<|im_start|>assistant\\n' + m.content }}"
    "{%- for c in m.tool_calls %}{{ '<tool_call>\\n<function=' + c.function.name + '>\\n' }}"
    "{%- for k, v in c.function.arguments.items() %}"
    "{{ '<parameter=' + k + '>\\n' + v + '\\n</parameter>\\n' }}"
    "{%- endfor %}{{ '</function>\\n</tool_call>' }}{% endfor %}{{ '<|im_end|>\\n' }}"
    "{%- elif m.role == 'tool' %}"
    "{{ '<|im_start|>user\\n<tool_response>\\n' + m.content + '\\n</tool_response><|im_end|>\\n' }}"
    "{%- else %}{{ '<|im_start|>' + m.role + '\\n' + m.content }}"
    "{%- if m.role == 'system' and tools %}{{ '\\nTools:' }}"
    "{%- for t in tools %}{{ ' ' + t.function.name }}{% endfor %}{% endif %}{{ '<|im_end|>\\n' }}"
    "{%- endif %}{% endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


QWEN_CODE_TURN: list[Any] = [
    {"role": "system", "content": text("You are Qwen Code.")},
    {"role": "user", "content": text("Read notes.txt")},
    {"role": "assistant", "content": None, "tool_calls": [{
        "id": "call_1", "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "notes.txt"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": text("line1")},
]
PROMPT = (
    "<|im_start|>system\nYou are Qwen Code.\nTools: read_file get_weather<|im_end|>\n"
    "<|im_start|>user\nRead notes.txt<|im_end|>\n"
    "<|im_start|>assistant\n<tool_call>\n<function=read_file>\n<parameter=path>\nnotes.txt\n"
    "</parameter>\n</function>\n</tool_call><|im_end|>\n"
    "<|im_start|>user\n<tool_response>\nline1\n</tool_response><|im_end|>\n"
    "<|im_start|>assistant\n"
)


@pytest.mark.parametrize("stream", [False, True])
def test_a_qwen_code_turn_renders_as_servers_render_it(tmp_path: Path, stream: bool) -> None:
    with stack(lambda body: Reply(content="notes.txt says line1." + EOS, chunk=4),
               upstream_api="completions", model_dir=model_dir(tmp_path, QWEN_STYLE)) as s:
        answer = s.client().chat.completions.create(model="m", messages=QWEN_CODE_TURN,
                                                    tools=TOOLS, stream=stream)
        if stream:
            content = "".join(c.choices[0].delta.content or "" for c in answer if c.choices)
        else:
            content = answer.choices[0].message.content or ""
        (body,) = s.upstream.requests
    assert body["prompt"] == PROMPT
    assert content == "notes.txt says line1."


FAILING = "{% for m in messages %}\n{{ m.content }}\n{{ m.missing.deeper }}\n{% endfor %}"


def test_a_template_error_names_the_line_not_the_servers_path(tmp_path: Path) -> None:
    with stack(lambda body: Reply(content="never" + EOS), upstream_api="completions",
               model_dir=model_dir(tmp_path, FAILING)) as s, \
            pytest.raises(openai.BadRequestError) as caught:
        s.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}])
    message = str(caught.value)
    assert "chat template model failed: " in message
    assert "(template line 3: {{ m.missing.deeper }})" in message
    assert str(tmp_path) not in message
    assert s.upstream.requests == []
