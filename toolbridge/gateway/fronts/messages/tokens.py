"""``POST /v1/messages/count_tokens``: a Messages request's input tokens, and how they were counted.

The request is checked and translated as ``/v1/messages`` checks it (``Pipeline.check``: its
nesting, ``messages_turn``, the tool fields), then:

- ``tokenizer``: with ``--model-dir`` holding a ``tokenizer.json`` and the ``tokenizers`` package
  installed, the turn is rendered through the model's chat template as the completions mode
  renders it (the injected protocol where the template has no tool support) and the prompt is
  tokenized: the count the model itself would see (images not counted);
- ``estimate``: otherwise, about 4 characters a token over the rendered prompt (with a template)
  or over the request's texts, tool calls and tool schemas (without one), plus 4 tokens a message
  and 1,000 an image; never 0.

The answer says which in the ``x-toolbridge-token-count`` header. A request that ``/v1/messages``
would refuse is the same 400. ``POST /v1/responses/input_tokens`` counts a Responses request's
turn with the same ``TokenCounter`` (``app``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import orjson

from ....errors import ConfigError, RenderError
from ...config import GatewayConfig
from ...turn import Turn

log = logging.getLogger("toolbridge.gateway")

CHARS_PER_TOKEN = 4
MESSAGE_TOKENS = 4
IMAGE_TOKENS = 1000


class TokenCounter:
    """Counts turns for one gateway; the template and tokenizer are loaded at the first count."""

    def __init__(self, config: GatewayConfig) -> None:
        self._config = config
        self._loaded = False
        self._template: Any = None
        self._tokenizer: Any = None

    @property
    def renders(self) -> bool:
        """Whether counting renders a template (worth a worker thread for a large request)."""
        return bool(self._config.model_dir or self._config.chat_template)

    def answer(self, turn: Turn) -> tuple[bytes, str]:
        """The response body for a count_tokens request's checked turn and how it was counted."""
        count, how = self.count(turn)
        return orjson.dumps({"input_tokens": count}), how

    def count(self, turn: Turn) -> tuple[int, str]:
        """``(tokens, "tokenizer" | "estimate")`` for a translated turn."""
        self._load()
        prompt = self._prompt(turn) if self._template is not None else None
        if prompt is not None and self._tokenizer is not None:
            return max(1, len(self._tokenizer.encode(prompt, add_special_tokens=False).ids)), "tokenizer"
        if prompt is not None:
            return max(1, -(-len(prompt) // CHARS_PER_TOKEN)), "estimate"
        return estimate(turn), "estimate"

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        try:
            self._template = self._config.template()
        except ConfigError as exc:
            log.warning("count_tokens: the chat template cannot be loaded (%s); estimating", exc)
        if self._config.model_dir:
            self._tokenizer = load_tokenizer(Path(self._config.model_dir))

    def _prompt(self, turn: Turn) -> str | None:
        from ....render import build_prompt  # the render extra: present with a template

        variables = turn.options.get("chat_template_kwargs") or {}
        try:
            return build_prompt(self._template, turn.messages, turn.tools, tool_fallback=True,
                                dialect=self._config.fallback_dialect, tool_choice=turn.tool_choice,
                                parallel=turn.parallel is not False, variables=variables).text
        except RenderError as exc:
            log.info("count_tokens: the template cannot render this request (%s); estimating", exc)
            return None


def load_tokenizer(model_dir: Path) -> Any:
    """The ``tokenizers`` tokenizer of ``model_dir/tokenizer.json``, or None (no file, or the
    package is not installed)."""
    path = model_dir / "tokenizer.json"
    if not path.is_file():
        return None
    try:
        from tokenizers import Tokenizer
    except ImportError:
        log.info("count_tokens: %s is there but the tokenizers package is not; estimating", path)
        return None
    try:
        return Tokenizer.from_file(str(path))
    except Exception as exc:  # noqa: BLE001  # a foreign library's failure: counted as absent
        log.warning("count_tokens: %s cannot be read (%s); estimating", path, exc)
        return None


def estimate(turn: Turn) -> int:
    """About 4 characters a token over the turn's texts, calls and tool schemas; never 0."""
    chars, images = 0, 0
    for message in turn.messages:
        content = message.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            for part in content:
                chars += len(part.get("text", ""))
                images += part.get("type") == "image_url"
        chars += len(message.get("reasoning_content") or "")
        for call in message.get("tool_calls") or ():
            chars += len(call["function"]["name"]) + len(call["function"]["arguments"])
    if turn.tools:
        chars += len(orjson.dumps(turn.tools))
    tokens = -(-chars // CHARS_PER_TOKEN) + MESSAGE_TOKENS * len(turn.messages) + IMAGE_TOKENS * images
    return max(1, tokens)
