"""The sandbox chat templates run in, configured as ``transformers``' ``apply_chat_template``.

A chat template is untrusted code from a model repository, so it runs in Jinja2's immutable
sandbox. What a template can see must match what it sees under ``transformers`` byte for byte,
since templates are written and tested there: ``trim_blocks`` and ``lstrip_blocks``, the
``loopcontrols`` extension, a ``{% generation %}`` block that renders its body unchanged, a
``tojson`` that does not HTML-escape (``json.dumps`` with ``ensure_ascii=False`` and the
``indent``/``separators``/``sort_keys`` options), and the globals ``raise_exception``,
``strftime_now`` (local time), ``dict`` (a constructor only) and ``namespace`` (refusing
underscore-prefixed attributes). Compiled templates are cached by source text.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import Any

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment


class TemplateRaised(jinja2.TemplateError):
    """What ``raise_exception(message)`` in a template raises."""


class _GenerationBlock(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}``: marks assistant text for training masks;
    rendering only needs the body as it is."""

    tags = frozenset({"generation"})  # type: ignore[assignment]

    def parse(self, parser: jinja2.parser.Parser) -> jinja2.nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        call = self.call_method("_body")
        return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _body(self, caller: Any) -> str:
        return str(caller())


def _raise_exception(message: Any) -> None:
    raise TemplateRaised(str(message))


def _tojson(value: Any, ensure_ascii: bool = False, indent: Any = None,
            separators: Any = None, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent,
                      separators=separators, sort_keys=sort_keys)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


class _DictConstructor:
    """``dict(...)`` and ``dict.fromkeys(...)`` for templates, without the type itself (whose
    attributes would reach Python internals)."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


class _Namespace(jinja2.utils.Namespace):
    """``namespace(...)`` refusing underscore-prefixed attribute names."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # ``namespace(self=...)`` must work
        self, rest = args[0], args[1:]
        attrs = dict(*rest, **kwargs)
        for name in attrs:
            _check_name(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)


def _check_name(name: Any) -> None:
    if isinstance(name, str) and name.startswith("_"):
        raise jinja2.exceptions.SecurityError(
            f"a namespace cannot hold the underscore-prefixed attribute {name!r}")


@lru_cache(maxsize=1)
def environment() -> ImmutableSandboxedEnvironment:
    """The one shared environment (its globals and filters are stateless)."""
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True,
        extensions=[_GenerationBlock, jinja2.ext.loopcontrols],
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _DictConstructor()
    env.globals["namespace"] = _Namespace
    return env


@lru_cache(maxsize=64)
def compile_source(source: str) -> jinja2.Template:
    """Compile a template's source (raises jinja2.TemplateSyntaxError)."""
    return environment().from_string(source)
