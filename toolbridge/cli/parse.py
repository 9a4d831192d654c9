"""``toolbridge parse``: one text, or a JSON-lines file of texts, through a StreamParser.

Every run goes through ``run_text``: feed the text (whole, or ``--chunk`` characters at a time),
close, fold the events into a message and a report, and with ``--stream`` also into chunk
deltas whose assembly is the message reported. Flags, the tools file and the input file are
checked before anything is parsed; a problem with any of them stops the run with exit code 2.
In ``--jsonl`` mode lines are read, parsed and written one at a time (memory stays flat however
long the file); a bad line yields an error object in its place and a message on stderr, and the
run goes on (exit code 1 at the end).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, nullcontext
from dataclasses import dataclass
from typing import IO, Any, TextIO

from .progress import Progress
from .exits import EXIT_LINES_FAILED, EXIT_OK, EXIT_USAGE
from ..syntax.dialect import Dialect
from ..dialects import get_dialect
from ..errors import ConfigError, ToolBridgeError
from ..openai import ChunkEncoder, Delta, MessageBuilder, assemble
from ..parsing.parser import StreamParser
from ..parsing.stream import random_call_id
from ..tools import Toolset

_FLUSH_EVERY = 1000  # output lines between flushes in --jsonl mode
_TOOLS_CACHE_SIZE = 64


class RunError(Exception):
    """The run cannot go on (exit code 2); the message names the flag or file at fault."""


class BadLine(ValueError):
    """One --jsonl input line cannot be parsed."""


def index_call_id(index: int) -> str:
    return f"call_{index}"


@dataclass(frozen=True)
class Settings:
    """The parse options shared by every text of a run."""

    dialect: Dialect | str  # a Dialect, or "auto"
    tools: Toolset | None
    stream: bool
    chunk: int | None
    options: dict[str, Any]  # StreamParser keyword options
    stream_arguments: bool = False  # deltas: each call's arguments as written (default: each call whole)


@dataclass(frozen=True)
class Outcome:
    """One parsed text: the message (assembled from ``deltas`` when streaming) and the report."""

    message: dict[str, Any]
    report: dict[str, Any]
    finish_reason: str
    deltas: list[Delta]

    def as_dict(self) -> dict[str, Any]:
        return {"message": self.message, "report": self.report, "finish_reason": self.finish_reason}


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    p.add_argument("--repair", action="store_true",
                   help="read JSON arguments leniently: trailing commas, single quotes, True/None, "
                        "unquoted keys, brackets left open at a clean end (each reported)")
    p.add_argument("--no-coerce", dest="coerce", action="store_false",
                   help="do not type arguments by the tools' schemas (\"2\" -> 2 for an integer ...)")
    p.add_argument("--call-ids", choices=("random", "index"), default="random",
                   help="random call_... ids (default) or call_0, call_1, ... for diffable runs")
    p.add_argument("--stream", action="store_true",
                   help="print OpenAI chunk deltas, one JSON object a line, then the finish "
                        "reason; with --jsonl, each message is assembled from the deltas")
    p.add_argument("--stream-arguments", action="store_true",
                   help="with --stream: a call's opening as soon as its name is known, then its "
                        "arguments piece by piece (default: each call in one delta once it ended)")
    p.add_argument("--chunk", type=positive_int, metavar="N",
                   help="feed the parser N characters at a time")
    p.add_argument("--jsonl", action="store_true",
                   help='input is JSON lines {"id", "text", "dialect"?, "tools"?}; '
                        'output one {"id", "message", "report", "finish_reason"} line each')
    p.add_argument("--output", "-o", metavar="FILE", default="-",
                   help="write here instead of stdout")
    p.set_defaults(handler=run)


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return number


def run(args: argparse.Namespace) -> int:
    """Run ``toolbridge parse`` with parsed arguments; return the exit code."""
    try:
        with ExitStack() as files:
            settings = settings_from(args)
            source = files.enter_context(_open_input(args.input))
            out = files.enter_context(_open_output(args.output))
            if args.jsonl:
                return run_jsonl(source, out, settings, Progress.for_stderr())
            return _run_single(source, args.input, out, settings)
    except RunError as exc:
        print(f"toolbridge parse: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        raise  # the reader went away; the command line ends quietly
    except OSError as exc:  # reading or writing failed midway; what was written is flushed
        print(f"toolbridge parse: {exc}", file=sys.stderr)
        return EXIT_USAGE


def settings_from(args: argparse.Namespace) -> Settings:
    """Check the dialect and tools flags once, before any input is read."""
    try:
        dialect = _dialect(args.dialect)
    except ConfigError as exc:
        raise RunError(f"--dialect: {exc}") from None
    tools = load_tools_file(args.tools) if args.tools else None
    options = {
        "reasoning": args.reasoning or args.in_reasoning,
        "in_reasoning": args.in_reasoning,
        "validate": args.validate,
        "reject_invalid": args.reject_invalid,
        "coerce": args.coerce,
        "repair": args.repair,
        "call_id": index_call_id if args.call_ids == "index" else random_call_id,
    }
    if args.model:
        options["model"] = args.model  # auto's hint; a named dialect needs none
    return Settings(dialect, tools, args.stream, args.chunk, options, args.stream_arguments)


def _dialect(name: str) -> Dialect | str:
    return name if name == "auto" else get_dialect(name)


def load_tools_file(path: str) -> Toolset:
    try:
        with open(path, "rb") as f:
            value = json.load(f)
    except OSError as exc:
        raise RunError(f"--tools {path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise RunError(f"--tools {path}: invalid JSON: {exc}") from None
    try:
        return make_toolset(value)
    except ConfigError as exc:
        raise RunError(f"--tools {path}: {exc}") from None


def make_toolset(value: Any) -> Toolset:
    """A Toolset from a tools list or ``{"tools": [...]}``."""
    if isinstance(value, dict) and "tools" in value:
        value = value["tools"]
    return Toolset(value)


def run_text(text: str, dialect: Dialect | str, tools: Toolset | None, settings: Settings) -> Outcome:
    """Parse one text as configured (see the module docstring)."""
    auto = dialect == "auto"
    options = settings.options if auto else {k: v for k, v in settings.options.items() if k != "model"}
    parser = StreamParser(dialect, tools, **options)
    builder = MessageBuilder("auto" if auto else dialect.name)  # type: ignore[union-attr]
    encoder = ChunkEncoder(stream_arguments=settings.stream_arguments) if settings.stream else None
    deltas: list[Delta] = []
    for piece in _pieces(text, settings.chunk):
        events = parser.feed(piece)
        builder.add(events)
        if encoder is not None:
            deltas += encoder.encode(events)
    events = parser.close()
    builder.add(events)
    if auto:
        builder.report.detected = parser.detected
    if encoder is not None:
        deltas += encoder.encode(events) + encoder.finish()
    message = assemble(deltas) if encoder is not None else builder.message
    return Outcome(message, builder.report.to_dict(), builder.finish_reason, deltas)


def _pieces(text: str, chunk: int | None) -> Iterator[str]:
    if chunk is None or chunk >= len(text):
        yield text
        return
    for start in range(0, len(text), chunk):
        yield text[start : start + chunk]


# ---------------------------------------------------------------- one text


def _run_single(source: IO[bytes], name: str, out: TextIO, settings: Settings) -> int:
    try:
        text = source.read().decode("utf-8")
    except (OSError, ValueError) as exc:
        raise RunError(f"cannot read {'stdin' if name == '-' else name}: {exc}") from None
    try:
        outcome = run_text(text, settings.dialect, settings.tools, settings)
    except ToolBridgeError as exc:
        raise RunError(str(exc)) from None
    if settings.stream:
        out.writelines(json.dumps(delta) + "\n" for delta in outcome.deltas)
        out.write(json.dumps({"finish_reason": outcome.finish_reason}) + "\n")
    else:
        out.write(json.dumps(outcome.as_dict(), indent=2) + "\n")
    return EXIT_OK


# ---------------------------------------------------------------- JSON lines


class ToolsCache:
    """Toolsets by their JSON text, so lines that repeat a tools list share one (and its
    compiled validators). The common case, the same list as the line before, is found by
    comparing values, which costs a fraction of serialising them for the key."""

    def __init__(self) -> None:
        self._cache: dict[str, Toolset] = {}
        self._last: tuple[Any, Toolset] | None = None

    def get(self, value: Any) -> Toolset:
        if self._last is not None and self._last[0] == value:
            return self._last[1]
        key = json.dumps(value, sort_keys=True)
        toolset = self._cache.get(key)
        if toolset is None:
            toolset = make_toolset(value)
            if len(self._cache) >= _TOOLS_CACHE_SIZE:
                del self._cache[next(iter(self._cache))]
            self._cache[key] = toolset
        self._last = (value, toolset)
        return toolset


def run_jsonl(source: IO[bytes], out: TextIO, settings: Settings, progress: Progress) -> int:
    """Parse each line of ``source`` into one line of ``out``; 1 when any line failed."""
    cache = ToolsCache()
    done = failed = current = 0
    try:
        for number, raw in enumerate(source, 1):
            if not raw.strip():
                continue
            current = number
            result = _process_line(raw, number, settings, cache)
            current = 0
            out.write(json.dumps(result, separators=(",", ":")) + "\n")
            done += 1
            if "error" in result:
                failed += 1
                progress.note(f"line {number}: {result['error']}")
            if done % _FLUSH_EVERY == 0:
                out.flush()
            progress.tick(done, failed)
    finally:  # also when interrupted or stopped by a bug: keep every result written so far
        out.flush()
        if current:
            progress.note(f"line {current}: the run stopped here")
        progress.close()
    return EXIT_LINES_FAILED if failed else EXIT_OK


def _process_line(raw: bytes, number: int, settings: Settings, cache: ToolsCache) -> dict[str, Any]:
    ident: Any = None
    try:
        record = _decode_line(raw)
        ident = record.get("id")
        text, dialect, tools = _line_fields(record, settings, cache)
        outcome = run_text(text, dialect, tools, settings)
    except (BadLine, ToolBridgeError) as exc:
        return {"id": ident, "line": number, "error": str(exc)}
    return {"id": ident, **outcome.as_dict()}


def _decode_line(raw: bytes) -> dict[str, Any]:
    try:
        record = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BadLine(f"invalid JSON at column {exc.colno}: {exc.msg}") from None
    except UnicodeDecodeError as exc:
        raise BadLine(f"not UTF-8 at byte {exc.start}") from None
    except RecursionError:
        raise BadLine("JSON nested too deeply") from None
    if not isinstance(record, dict):
        raise BadLine("not a JSON object")
    return record


def _line_fields(
    record: dict[str, Any], settings: Settings, cache: ToolsCache
) -> tuple[str, Dialect | str, Toolset | None]:
    text = record.get("text")
    if not isinstance(text, str):
        raise BadLine('"text" is missing or not a string')
    name = record.get("dialect")
    if name is None:
        dialect = settings.dialect
    elif isinstance(name, str):
        dialect = _dialect(name)
    else:
        raise BadLine('"dialect" is not a string')
    tools = record.get("tools")
    if tools is None:
        return text, dialect, settings.tools
    try:
        return text, dialect, cache.get(tools)
    except ConfigError as exc:
        raise BadLine(f"tools: {exc}") from None


# ---------------------------------------------------------------- files


def _open_input(path: str) -> AbstractContextManager[IO[bytes]]:
    if path == "-":
        return nullcontext(sys.stdin.buffer)
    try:
        return open(path, "rb")
    except OSError as exc:
        raise RunError(f"cannot read {path}: {exc.strerror or exc}") from None


def _open_output(path: str) -> AbstractContextManager[TextIO]:
    if path == "-":
        return nullcontext(sys.stdout)
    try:
        return open(path, "w", encoding="utf-8", newline="\n")
    except OSError as exc:
        raise RunError(f"--output {path}: cannot write: {exc.strerror or exc}") from None
