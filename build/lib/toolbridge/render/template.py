"""Chat templates: loading them from a file or a model folder, rendering messages through them.

Rendering follows ``transformers``' ``apply_chat_template`` (the reference every template is
written against) step by step, so prompts are byte-identical to it:

1. message keys whose value is None are dropped (APIs send ``content: null``, templates test
   for a missing key);
2. everything the template sees is a fresh copy made of plain JSON types;
3. a message's reasoning, under ``reasoning_content``, ``thinking`` or ``reasoning``, is given
   under both ``thinking`` and ``reasoning_content``;
4. the template's variables are the model's special tokens (``bos_token``, ``eos_token``, ...),
   then the caller's extra variables (``enable_thinking``, ...), then ``messages``, ``tools``,
   ``documents`` and ``add_generation_prompt``.

Assistant ``tool_calls`` are passed as given: OpenAI clients send ``arguments`` as a JSON string,
and that string is what the template sees (``decode_arguments=True`` gives it the object instead,
as serving engines do before rendering).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from ..errors import RenderError
from ._env import TemplateRaised, compile_source

SPECIAL_TOKEN_NAMES = (
    "bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token",
)
_REASONING_KEYS = ("reasoning_content", "thinking", "reasoning")
_RESERVED = frozenset({"messages", "tools", "documents", "add_generation_prompt"})
# A template is untrusted code: besides Jinja's own errors it fails with whatever Python raises
# on the values it handles (json.dumps of a generator, a missing key, a bad index ...).
_TEMPLATE_FAILURES = (jinja2.TemplateError, TypeError, ValueError, LookupError, AttributeError,
                      ArithmeticError, RecursionError)


@dataclass(frozen=True)
class ChatTemplate:
    """A model's chat template(s) and the special tokens its templates may refer to.

    Attributes:
        name: where the template came from (a path), used in error messages.
        sources: template name -> Jinja source; a single template is ``{"default": source}``.
        variables: special tokens (``bos_token``, ``eos_token``, ...) given to every render.
    """

    name: str
    sources: Mapping[str, str]
    variables: Mapping[str, str] = field(default_factory=dict)

    def select(self, tools: object = None) -> tuple[str, str]:
        """The (label, source) used for a render: a single template, else ``tool_use`` when
        tools are given and there is one, else ``default``. Raises RenderError otherwise."""
        if len(self.sources) == 1 and "default" in self.sources:
            return self.name, self.sources["default"]
        if tools is not None and "tool_use" in self.sources:
            return f"{self.name} [tool_use]", self.sources["tool_use"]
        if "default" in self.sources:
            return f"{self.name} [default]", self.sources["default"]
        names = ", ".join(sorted(self.sources))
        raise RenderError(f"chat template {self.name}: several named templates ({names}) and "
                          "none is called 'default'")

    def render(
        self,
        messages: Sequence[Mapping[str, Any]],
        /,
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        add_generation_prompt: bool = False,
        documents: Sequence[Mapping[str, Any]] | None = None,
        decode_arguments: bool = False,
        **variables: Any,
    ) -> str:
        """Render a conversation to prompt text, as ``apply_chat_template(tokenize=False)``.

        Args:
            messages: OpenAI-shaped messages (``tool_calls``, ``role: "tool"``, reasoning).
            tools: the OpenAI tools list, or None (the template sees ``tools`` undefined-like None).
            add_generation_prompt: end with the header that opens the assistant's answer.
            documents: retrieval documents, for the templates that read them.
            decode_arguments: give templates each call's ``arguments`` as an object, not the JSON
                string a client sends.
            variables: extra template variables (``enable_thinking=False``, ...); they override
                the special tokens of the same name.

        Raises:
            RenderError: bad messages, or the template failed (its name and the cause are given).
        """
        label, source = self.select(tools)
        reserved = _RESERVED.intersection(variables)
        if reserved:
            raise RenderError(f"template variables {sorted(reserved)} are set by the renderer")
        chat = prepare_messages(messages, decode_arguments=decode_arguments)
        context = {**self.variables, **_plain(variables)}
        return render_source(label, source, context, messages=chat, tools=_plain(tools),
                             documents=_plain(documents),
                             add_generation_prompt=add_generation_prompt)


def render_source(label: str, source: str, context: dict[str, Any], **reserved: Any) -> str:
    """Compile (cached) and render one template source; failures become RenderError."""
    try:
        template = compile_source(source)
    except jinja2.TemplateSyntaxError as exc:
        raise RenderError(f"chat template {label} does not compile: {exc.message} "
                          f"(line {exc.lineno})") from exc
    try:
        return template.render(**reserved, **context)
    except TemplateRaised as exc:
        raise RenderError(f"chat template {label} refused the conversation: {exc.message}"
                          f"{_where(exc)}") from exc
    except _TEMPLATE_FAILURES as exc:
        cause = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        raise RenderError(f"chat template {label} failed: {cause}{_where(exc)}") from exc


def _where(exc: BaseException) -> str:
    """The template line the error came from, when Jinja's traceback rewriting recorded it."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return f" (template line {line})" if line else ""


def prepare_messages(messages: Sequence[Mapping[str, Any]], *,
                     decode_arguments: bool = False) -> list[dict[str, Any]]:
    """Messages as a template sees them (steps 1-3 of the module docstring)."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise RenderError("messages must be a list of message objects")
    if not messages:
        raise RenderError("cannot render an empty conversation")
    chat = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise RenderError(f"message {i} is not an object: {message!r:.80}")
        plain = _plain({k: v for k, v in message.items() if v is not None})
        if decode_arguments:
            plain = _decode_arguments(plain, i)
        chat.append(_alias_reasoning(plain))
    return chat


def _alias_reasoning(message: dict[str, Any]) -> dict[str, Any]:
    reasoning = next((message[k] for k in _REASONING_KEYS if message.get(k) is not None), None)
    if reasoning is None:
        return message
    return {"thinking": reasoning, **message, "reasoning_content": reasoning}


def _decode_arguments(message: dict[str, Any], i: int) -> dict[str, Any]:
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return message
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("arguments"), str):
            try:
                function["arguments"] = json.loads(function["arguments"])
            except ValueError as exc:
                raise RenderError(f"message {i}: tool call arguments are not JSON: {exc}") from None
    return message


def _plain(value: Any) -> Any:
    """A fresh copy made of plain JSON types (subclasses reduced to their base type)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return f"<{type(value).__name__}>"


def load_template(path: str | Path) -> ChatTemplate:
    """A chat template from a Jinja file. Raises RenderError when it cannot be read."""
    p = Path(path)
    return ChatTemplate(name=str(p), sources={"default": _read_text(p)})


def load_model_dir(path: str | Path) -> ChatTemplate:
    """The chat template(s) and special tokens of a local model folder.

    As ``transformers`` loads them: ``chat_template.jinja`` (as ``default``) and
    ``additional_chat_templates/*.jinja`` (by file name) take priority over ``chat_template`` in
    ``tokenizer_config.json``, which is a string or a list of ``{"name", "template"}``. Special
    tokens come from ``tokenizer_config.json`` (a string, or an object with ``content``); a legacy
    ``special_tokens_map.json`` overrides them when the config has no ``added_tokens_decoder``.

    Raises:
        RenderError: the folder is missing, a file is unreadable, or no template is found.
    """
    root = Path(path)
    if not root.is_dir():
        raise RenderError(f"model folder not found: {root}")
    config = _read_json(root / "tokenizer_config.json")
    sources = _template_files(root)
    if not sources:
        sources = _config_templates(config, root)
    if not sources:
        raise RenderError(f"no chat template in {root} (looked for chat_template.jinja, "
                          "additional_chat_templates/, and chat_template in tokenizer_config.json)")
    variables = _special_tokens(config)
    if "added_tokens_decoder" not in config:
        variables.update(_special_tokens(_read_json(root / "special_tokens_map.json")))
    return ChatTemplate(name=str(root), sources=sources, variables=variables)


def _template_files(root: Path) -> dict[str, str]:
    sources = {}
    if (root / "chat_template.jinja").is_file():
        sources["default"] = _read_text(root / "chat_template.jinja")
    extra = root / "additional_chat_templates"
    if extra.is_dir():
        for file in sorted(extra.glob("*.jinja")):
            sources[file.name.removesuffix(".jinja")] = _read_text(file)
    return sources


def _config_templates(config: dict[str, Any], root: Path) -> dict[str, str]:
    value = config.get("chat_template")
    if value is None:
        return {}
    if isinstance(value, str):
        return {"default": value}
    if isinstance(value, list) and all(
        isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("template"), str)
        for t in value
    ):
        return {t["name"]: t["template"] for t in value}
    raise RenderError(f"{root / 'tokenizer_config.json'}: chat_template is neither a string nor "
                      "a list of {name, template} objects")


def _special_tokens(config: dict[str, Any]) -> dict[str, str]:
    tokens = {}
    for key in SPECIAL_TOKEN_NAMES:
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            tokens[key] = value
    return tokens


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RenderError(f"cannot read chat template {path}: {exc}") from None


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RenderError(f"cannot read {path}: {exc}") from None
    if not isinstance(value, dict):
        raise RenderError(f"{path} is not a JSON object")
    return value
