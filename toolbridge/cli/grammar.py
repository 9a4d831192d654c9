"""``toolbridge grammar``: a dialect and the offered tools as the grammar an engine samples from.

For users who configure their engine themselves: the output is the structural tag JSON (vLLM,
SGLang), GBNF (llama.cpp; ``--lazy`` prints the calls' grammar and the triggers to pass as
``grammar_triggers``), Lark (llguidance) or a JSON schema (Ollama's ``format``, for dialects whose
call is one JSON object). Exit codes as the rest of the command line: 0 done, 2 a bad flag, file,
dialect or a constraint the format cannot say.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import ToolBridgeError
from .exits import EXIT_OK, EXIT_USAGE
from .render import read_json, tools_file


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from ..constrain import FORMATS

    p = commands.add_parser(
        "grammar",
        help="a dialect and tools compiled to an engine's grammar (structural tag, GBNF, Lark, JSON schema)",
        description="Compile the offered tools, in a dialect's own call format, to the grammar a "
                    "serving engine constrains sampling with.",
        epilog="exit status: 0 done; 2 bad flag, file, dialect or a constraint the format cannot say",
    )
    p.add_argument("--dialect", required=True, help="the model's tool-call dialect (toolbridge dialects)")
    p.add_argument("--tools", required=True, metavar="FILE",
                   help="JSON file with the OpenAI tools list (or an object with a 'tools' key); '-' for stdin")
    p.add_argument("--format", choices=FORMATS, default="structural-tag", dest="fmt")
    p.add_argument("--tool-choice", default="auto", metavar="CHOICE",
                   help="auto, required, none, or a tool's name (that tool, exactly one call)")
    p.add_argument("--no-parallel", dest="parallel", action="store_false",
                   help="at most one call (parallel_tool_calls: false)")
    p.add_argument("--strict", choices=("tools", "on", "off"), default="tools",
                   help="objects allow only their declared properties: as each tool says "
                        "(default; true unless it says strict: false), on, or off")
    p.add_argument("--reasoning", choices=("auto", "open", "off"), default="auto",
                   help="a reasoning block first: optional (auto), already opened by the prompt "
                        "(open), or none (off)")
    p.add_argument("--response-format", metavar="FILE",
                   help="a JSON file with the request's response_format: the answer is then a "
                        "call or that JSON")
    p.add_argument("--special-tokens", action="store_true",
                   help="Lark: write markers that are special tokens as token references (<|...|>)")
    p.add_argument("--lazy", action="store_true",
                   help="GBNF: the calls' grammar alone, and its triggers on stderr (grammar_lazy)")
    p.set_defaults(handler=run)


def _choice(text: str) -> Any:
    if text in ("auto", "required", "none"):
        return text
    return {"type": "function", "function": {"name": text}}


def run(args: argparse.Namespace) -> int:
    """Run ``toolbridge grammar``; return the exit code."""
    from ..constrain import compile_tools, gbnf, write

    strict = {"tools": None, "on": True, "off": False}[args.strict]
    try:
        tools = tools_file(args.tools)
        response_format = read_json(args.response_format, "response format") if args.response_format else None
        constraint = compile_tools(args.dialect, tools, tool_choice=_choice(args.tool_choice),
                                   parallel_tool_calls=args.parallel, strict=strict,
                                   reasoning=args.reasoning, response_format=response_format)
        if args.lazy and args.fmt == "gbnf":
            sys.stdout.write(gbnf(constraint, lazy=True))
            print("triggers: " + json.dumps(list(constraint.triggers), ensure_ascii=False), file=sys.stderr)
        else:
            sys.stdout.write(write(constraint, args.fmt, args.special_tokens))
    except ToolBridgeError as exc:
        print(f"toolbridge: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK
