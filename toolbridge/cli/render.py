"""``toolbridge render``: messages (and tools) in, the prompt a model's chat template makes out.

The messages are given to the template as serving engines give them (text parts as text, call
arguments as objects: ``toolbridge.render.template``). The prompt is written to stdout exactly as
rendered (no newline added), so it can be compared byte for byte. ``--probe`` prints what the
template renders of the tool protocol, and the shape it takes call arguments in, instead.
Exit codes as the rest of the command line: 0 done, 2 a bad flag, file or template.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

from .exits import EXIT_OK, EXIT_USAGE
from ..errors import ToolBridgeError


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "render",
        help="messages and tools in, prompt out (a model's chat template)",
        description="Render OpenAI messages through a chat template as transformers' "
                    "apply_chat_template does.",
        epilog="exit status: 0 done; 2 bad flag, file, messages or template",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--chat-template", metavar="FILE", help="a Jinja chat template file")
    source.add_argument("--model-dir", metavar="DIR",
                        help="a model folder (chat_template.jinja or tokenizer_config.json)")
    p.add_argument("messages", nargs="?", metavar="MESSAGES.json",
                   help="a JSON array of messages, or a request object with 'messages' (and "
                        "'tools', 'tool_choice'); '-' for stdin")
    p.add_argument("--tools", metavar="FILE",
                   help="JSON file with the OpenAI tools list (or an object with a 'tools' key)")
    p.add_argument("--var", action="append", default=[], metavar="KEY=VALUE",
                   help="a template variable (VALUE read as JSON when it parses, else a string): "
                        "--var enable_thinking=false, --var bos_token='<s>'")
    p.add_argument("--no-generation-prompt", dest="generation_prompt", action="store_false",
                   help="do not end with the assistant header")
    p.add_argument("--tool-fallback", action="store_true",
                   help="write tools, calls and results as ordinary turns when the template "
                        "cannot render them (the prompt-injected protocol)")
    p.add_argument("--fallback-dialect", default="hermes", metavar="NAME",
                   help="the call format the injected protocol asks for (default hermes)")
    p.add_argument("--probe", action="store_true",
                   help="print which parts of the tool protocol the template renders (and "
                        "whether it takes call arguments as objects or strings), as JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run ``toolbridge render``; return the exit code."""
    from ..render import build_prompt, capabilities, load_model_dir, load_template

    try:
        template = (load_model_dir(args.model_dir) if args.model_dir
                    else load_template(args.chat_template))
        if args.probe:
            print(json.dumps(asdict(capabilities(template))))
            return EXIT_OK
        if args.messages is None:
            raise ToolBridgeError("MESSAGES.json is required (unless --probe)")
        request = _request(read_json(args.messages, "messages"))
        tools = tools_file(args.tools) if args.tools else request.get("tools")
        prompt = build_prompt(
            template, request["messages"], tools,
            tool_fallback=args.tool_fallback, dialect=args.fallback_dialect,
            tool_choice=request.get("tool_choice"),
            parallel=request.get("parallel_tool_calls", True) is not False,
            add_generation_prompt=args.generation_prompt, variables=_variables(args.var),
        )
    except ToolBridgeError as exc:
        print(f"toolbridge: {exc}", file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.write(prompt.text)
    sys.stdout.flush()
    return EXIT_OK


def _request(value: Any) -> dict[str, Any]:
    if isinstance(value, list):
        return {"messages": value}
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return value
    raise ToolBridgeError("MESSAGES.json must hold an array of messages or an object with "
                          "a 'messages' array")


def tools_file(path: str) -> Any:
    """The OpenAI tools list a JSON file holds (or its object's 'tools'); '-' is stdin."""
    value = read_json(path, "tools")
    if isinstance(value, dict) and "tools" in value:
        value = value["tools"]
    if not isinstance(value, list):
        raise ToolBridgeError(f"{path}: the tools file must hold a JSON array (or 'tools')")
    return value


def _variables(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.isidentifier():
            raise ToolBridgeError(f"--var {pair!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(raw)
        except ValueError:
            out[key] = raw
    return out


def read_json(path: str, what: str) -> Any:
    """A JSON file's value ('-': stdin); ToolBridgeError naming ``what`` when it cannot be read."""
    try:
        if path == "-":
            return json.loads(sys.stdin.read())
        with open(path, encoding="utf-8") as file:
            return json.loads(file.read())
    except OSError as exc:
        raise ToolBridgeError(f"cannot read the {what} file {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise ToolBridgeError(f"the {what} file {path} is not JSON: {exc}") from None
