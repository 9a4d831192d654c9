"""The ``toolbridge`` command line: argument parsing and dispatch only.

Each subcommand's logic lives in its own module (``_cli_parse`` for ``parse``, ``demo``,
``bench``); this module builds the argparse tree and turns expected failures into exit codes:
0 success, 1 some input lines failed, 2 the run could not start (bad flag, file or dialect).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .dialect import dialect_names, get_dialect

EXIT_OK = 0
EXIT_LINES_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


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
    _add_parse(commands)
    from ._cli_render import add_parser as add_render

    add_render(commands)
    listing = commands.add_parser("dialects", help="list the registered dialects and aliases")
    listing.set_defaults(handler=_dialects)
    demo = commands.add_parser("demo", help="the gateway in front of a replaying upstream, with the openai SDK")
    demo.add_argument("--parser-only", action="store_true",
                      help="only parse bundled sample outputs, whole and streamed (no HTTP)")
    demo.set_defaults(handler=_demo)
    commands.add_parser("bench", help="run the benchmarks (flags: toolbridge bench --help)")
    _add_serve(commands)
    return parser


def _add_serve(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from .gateway.config import GatewayConfig, env_defaults

    p = commands.add_parser(
        "serve",
        help="run the OpenAI-compatible gateway in front of an upstream",
        description="Every flag has a TOOLBRIDGE_<FLAG> variable (TOOLBRIDGE_UPSTREAM, ...).",
    )
    d = GatewayConfig()
    p.add_argument("--upstream", default=d.upstream, help="upstream base URL, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--host", default=d.host, help="listen address (default loopback)")
    p.add_argument("--port", type=int, default=d.port)
    p.add_argument("--tool-call-parser", default=d.tool_call_parser, help="dialect of the model's output (default auto: recognised from the output, "
                        "hinted by the request's model name)")
    p.add_argument("--api-key", default=d.api_key, help="key clients must send")
    p.add_argument("--upstream-api-key", default=d.upstream_api_key,
                   help="key sent upstream (default: the client's Authorization passes through)")
    p.add_argument("--recover-from-reasoning", action="store_true", default=d.recover_from_reasoning,
                   help="also take calls from reasoning_content/reasoning (off by default)")
    p.add_argument("--keep-special-tokens", choices=("auto", "always", "never"), default=d.keep_special_tokens,
                   help="ask the upstream for skip_special_tokens=false (auto: when the markers are special)")
    p.add_argument("--max-body", type=int, default=d.max_body, help="largest request body in bytes (413 above)")
    p.add_argument("--timeout", type=float, default=d.timeout, help="seconds of upstream silence before 504")
    p.add_argument("--connect-timeout", type=float, default=d.connect_timeout)
    p.add_argument("--workers", type=int, default=d.workers, help="processes sharing the port")
    p.add_argument("--log-level", default=d.log_level)
    from .gateway.fallback import add_serve_flags

    add_serve_flags(p, d)
    p.set_defaults(handler=_serve, **_env_or_exit(env_defaults))


def _env_or_exit(read: object) -> dict[str, object]:
    from .errors import ConfigError

    try:
        return read()  # type: ignore[operator,no-any-return]
    except ConfigError as exc:
        print(f"toolbridge: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None


def _serve(args: argparse.Namespace) -> int:
    from dataclasses import fields

    from .errors import ConfigError
    from .gateway.config import GatewayConfig
    from .gateway.run import run

    config = GatewayConfig(**{f.name: getattr(args, f.name) for f in fields(GatewayConfig)})
    if config.api_key == "" and config.host not in ("127.0.0.1", "localhost", "::1"):
        print("toolbridge: warning: listening beyond loopback without --api-key", file=sys.stderr)
    try:
        return run(config)
    except ConfigError as exc:
        print(f"toolbridge: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _add_parse(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "parse",
        help="model output in, OpenAI message JSON out",
        description="Parse model output text into an OpenAI assistant message and a report.",
        epilog="exit status: 0 done; 1 some --jsonl lines failed (each has an error line); "
               "2 bad flag, dialect, tools file, or unreadable input",
    )
    p.add_argument("input", nargs="?", default="-", metavar="FILE",
                   help="model output text (or JSON lines with --jsonl); '-' or omitted: stdin")
    p.add_argument("--dialect", metavar="NAME", default="auto",
                   help="tool-call dialect (see `toolbridge dialects`); default auto: recognised "
                        "from the output (the report's 'detected' names it)")
    p.add_argument("--model", metavar="ID",
                   help="the model's id, a hint for auto (e.g. Qwen/Qwen3.6-35B-A3B -> qwen3_coder)")
    p.add_argument("--tools", metavar="FILE",
                   help="JSON file with the OpenAI tools list (or an object with a 'tools' key)")
    p.add_argument("--reasoning", action="store_true",
                   help="split <think>...</think> out as reasoning_content")
    p.add_argument("--in-reasoning", action="store_true",
                   help="the output starts inside reasoning (the prompt ended with <think>); "
                        "implies --reasoning")
    p.add_argument("--reject-invalid", action="store_true",
                   help="with --tools, turn calls whose arguments fail the schema into content")
    p.add_argument("--no-validate", dest="validate", action="store_false",
                   help="do not check arguments against the tools' schemas")
    p.add_argument("--call-ids", choices=("random", "index"), default="random",
                   help="random call_... ids (default) or call_0, call_1, ... for diffable runs")
    p.add_argument("--stream", action="store_true",
                   help="print OpenAI chunk deltas, one JSON object a line, then the finish "
                        "reason; with --jsonl, each message is assembled from the deltas")
    p.add_argument("--chunk", type=_positive_int, metavar="N",
                   help="feed the parser N characters at a time")
    p.add_argument("--jsonl", action="store_true",
                   help='input is JSON lines {"id", "text", "dialect"?, "tools"?}; '
                        'output one {"id", "message", "report", "finish_reason"} line each')
    p.add_argument("--output", "-o", metavar="FILE", default="-",
                   help="write here instead of stdout")
    p.set_defaults(handler=_parse)


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return number


def _parse(args: argparse.Namespace) -> int:
    from ._cli_parse import run

    return run(args)


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
        from .demo import main as parser_demo

        return parser_demo()
    try:
        import openai  # noqa: F401  (the demo's client)
    except ImportError:
        print("toolbridge: the gateway demo drives it with the openai SDK: pip install 'toolbridge[demo]' "
              "(or run `toolbridge demo --parser-only`)", file=sys.stderr)
        return EXIT_USAGE
    from .demo_gateway import main as gateway_demo

    return gateway_demo()


def _bench(argv: list[str]) -> int:
    from .bench import main as bench_main  # written separately; imported only when asked for

    return int(bench_main(argv) or 0)


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout has no file descriptor (captured in tests)
        pass
    finally:
        os.close(devnull)
