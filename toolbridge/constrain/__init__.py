"""Constrained decoding: a dialect's call format and the offered tools as the upstream's grammar.

``compile_tools(dialect, tools, ...)`` builds a ``Constraint``; ``gbnf``, ``lark``,
``structural_tag`` and ``json_schema`` write it for llama.cpp, llguidance, xgrammar (vLLM and
SGLang) and Ollama; ``grammar_for`` does both through a cache keyed by the tool set. A dialect is
covered when it declares a ``Shape``.
"""

from __future__ import annotations

from .cache import grammar_for
from .compiler import Constraint, Tool, compile_tools, tools_of
from .writers import FORMATS, gbnf, json_schema, lark, special_tokens, write
from .tag import structural_tag

__all__ = ["FORMATS", "Constraint", "Tool", "compile_tools", "gbnf", "grammar_for", "json_schema", "lark",
           "special_tokens", "structural_tag", "tools_of", "write"]
