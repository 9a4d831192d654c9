"""Chat templates: loading them from a file or a model folder, rendering messages through them.

Rendering follows ``transformers``' ``apply_chat_template`` (the reference every template is
written against) step by step, so prompts are byte-identical to it for messages in the shape it
takes; OpenAI-shaped messages are first brought into that shape as serving engines do:

1. ``content: null`` becomes ``""`` and other keys whose value is None are dropped (APIs send
   nulls, templates test for a missing key; where a template renders both, the prompt is the
   same, and many fail on a call turn without content);
2. a ``content`` list made only of ``{"type": "text"}`` parts becomes its texts joined by
   newlines, in every role (clients such as Qwen Code send every message so; templates concatenate
   strings); a list holding other parts (images) is given as it is;
3. assistant ``tool_calls[].function.arguments`` are given as objects: the JSON string a client
   sends is decoded (empty: ``{}``; not JSON: RenderError). ``arguments="string"`` gives the JSON
   text instead (objects encoded), for the few templates that print or concatenate it; the
   capability probe says which a template takes;
4. everything the template sees is a fresh copy made of plain JSON types;
5. a message's reasoning, under ``reasoning_content``, ``thinking`` or ``reasoning``, is given
   under both ``thinking`` and ``reasoning_content``;
6. the template's variables are the model's special tokens (``bos_token``, ``eos_token``, ...),
   then the caller's extra variables (``enable_thinking``, ...), then ``messages``, ``tools``,
   ``documents`` and ``add_generation_prompt``.

A failing template is reported by the name it was loaded under (a file or folder name, never a
path: the message may be answered to a client) and the template line, quoted.
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
ARGUMENT_SHAPES = ("object", "string")
_RESERVED = frozenset({"messages", "tools", "documents", "add_generation_prompt"})
# A template is untrusted code: besides Jinja's own errors it fails with whatever Python raises
# on the values it handles (json.dumps of a generator, a missing key, a bad index ...).
_TEMPLATE_FAILURES = (jinja2.TemplateError, TypeError, ValueError, LookupError, AttributeError,
                      ArithmeticError, RecursionError)


@dataclass(frozen=True)
class ChatTemplate:
    """A model's chat template(s) and the special tokens its templates may refer to.

    Attributes:
        name: what error messages call the template; the loaders give the file's or the
            folder's name, not its path (a render error may be answered to a client).
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
        arguments: str = "object",
        **variables: Any,
    ) -> str:
        """Render a conversation to prompt text, as ``apply_chat_template(tokenize=False)``
        renders it once the messages are in the shape servers give templates (module docstring).

        Args:
            messages: OpenAI-shaped messages (``tool_calls``, ``role: "tool"``, reasoning, text
                parts).
            tools: the OpenAI tools list, or None (the template sees ``tools`` undefined-like None).
            add_generation_prompt: end with the header that opens the assistant's answer.
            documents: retrieval documents, for the templates that read them.
            arguments: ``"object"`` (call arguments decoded) or ``"string"`` (the JSON text), as
                the template takes them (``Capabilities.arguments``).
            variables: extra template variables (``enable_thinking=False``, ...); they override
                the special tokens of the same name.

        Raises:
            RenderError: bad messages, or the template failed (its name, the cause and the
                template line are given).
        """
        label, source = self.select(tools)
        reserved = _RESERVED.intersection(variables)
        if reserved:
            raise RenderError(f"template variables {sorted(reserved)} are set by the renderer")
        chat = prepare_messages(messages, arguments=arguments)
        context = {**self.variables, **_plain(variables)}
        return render_source(label, source, context, messages=chat, tools=_plain(tools),
                             documents=_plain(documents),
                             add_generation_prompt=add_generation_prompt)


def render_source(label: str, source: str, context: dict[str, Any], **reserved: Any) -> str:
    """Compile (cached) and render one template source; failures become RenderError."""
    try:
        template = compile_source(source)
    except jinja2.TemplateSyntaxError as exc:
        raise RenderError(f"chat template {label} does not compile: {exc.message}"
                          f"{_line(source, exc.lineno)}") from exc
    try:
        return template.render(**reserved, **context)
    except TemplateRaised as exc:
        raise RenderError(f"chat template {label} refused the conversation: {exc.message}"
                          f"{_line(source, _lineno(exc))}") from exc
    except _TEMPLATE_FAILURES as exc:
        cause = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        raise RenderError(f"chat template {label} failed: {cause}"
                          f"{_line(source, _lineno(exc))}") from exc


def _lineno(exc: BaseException) -> int | None:
    """The template line the error came from, when Jinja's traceback rewriting recorded it."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _line(source: str, lineno: int | None) -> str:
    """`` (template line N: <its text>)``, or "" when the line is unknown."""
    lines = source.splitlines()
    if not lineno or lineno > len(lines):
        return ""
    text = " ".join(lines[lineno - 1].split())
    if len(text) > 120:
        text = text[:117] + "..."
    return f" (template line {lineno}: {text})" if text else f" (template line {lineno})"


def prepare_messages(messages: Sequence[Mapping[str, Any]], *,
                     arguments: str = "object") -> list[dict[str, Any]]:
    """Messages as a template sees them (steps 1-5 of the module docstring)."""
    if arguments not in ARGUMENT_SHAPES:
        raise RenderError(f"arguments must be one of {ARGUMENT_SHAPES}, not {arguments!r}")
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise RenderError("messages must be a list of message objects")
    if not messages:
        raise RenderError("cannot render an empty conversation")
    chat = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise RenderError(f"message {i} is not an object: {message!r:.80}")
        plain = _plain({k: v for k, v in message.items() if v is not None or k == "content"})
        if "content" in plain:
            plain["content"] = flatten_content(plain["content"])
        _shape_arguments(plain, i, arguments)
        chat.append(_alias_reasoning(plain))
    return chat


def flatten_content(content: Any) -> Any:
    """A message's content as templates take it: None as ``""``, a list of text parts as their
    texts joined by newlines; anything else (a string, a list with other parts) as it is."""
    if content is None:
        return ""
    if isinstance(content, list) and all(
        isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        for part in content
    ):
        return "\n".join(part["text"] for part in content)
    return content


def _alias_reasoning(message: dict[str, Any]) -> dict[str, Any]:
    reasoning = next((message[k] for k in _REASONING_KEYS if message.get(k) is not None), None)
    if reasoning is None:
        return message
    return {"thinking": reasoning, **message, "reasoning_content": reasoning}


def _shape_arguments(message: dict[str, Any], i: int, shape: str) -> None:
    """Each call's ``arguments`` in ``shape``, in place (``message`` is already a copy)."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        value = function.get("arguments")
        if shape == "string":
            if value is None:
                function["arguments"] = "{}"
            elif not isinstance(value, str):
                function["arguments"] = json.dumps(value, ensure_ascii=False)
        elif value is None or (isinstance(value, str) and not value.strip()):
            function["arguments"] = {}
        elif isinstance(value, str):
            try:
                function["arguments"] = json.loads(value)
            except ValueError as exc:
                name = function.get("name")
                raise RenderError(f"message {i}: arguments of tool call {name!r} are not JSON: "
                                  f"{exc}") from None


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
    """A chat template from a Jinja file, named by the file's name. Raises RenderError when it
    cannot be read."""
    p = Path(path)
    return ChatTemplate(name=p.name, sources={"default": _read_text(p)})


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
    return ChatTemplate(name=root.resolve().name or "model", sources=sources, variables=variables)


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
