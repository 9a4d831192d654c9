"""``toolbridge bench``: how fast StreamParser streams each registered dialect.

Strategy: for every dialect (primary names only) build model outputs in the dialect's own syntax
(a renderer per body kind writes the call), pre-split each into 4-character deltas, and time only
the loop that feeds the deltas and closes the parser, with every feature on: tools with JSON
schemas, ``reasoning=True`` (outputs open with a short ``<think>`` block when the dialect has
one) and ``validate=True``. The same deltas go through a do-nothing parser as a floor. With
``--auto`` every dialect's outputs are also read by ``dialect="auto"`` (rows ``auto:<name>``),
which must recognise the dialect and give the same events, as linearly.

Invariants:
- nothing but ``feed``/``close`` is timed: splitting, parser construction and checking are not;
- every output is parsed once, untimed, and must give exactly the expected call, content and
  reasoning before it is timed, so a failing parse (or a wrong rendering) cannot pass for a
  fast one;
- a figure is the median of several runs with the garbage collector disabled; one run feeds at
  least ``Sizes.sample`` characters (several responses when the output is short).
- linearity is the median ratio over pairs of runs (the shortest and the longest argument) timed
  back to back, not a ratio of two medians taken seconds apart.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from ..syntax.dialect import Dialect

from ..dialects import dialect_names, get_dialect
from ..errors import ConfigError
from ..events import CallAborted, CallRejected, Invalid, Reasoning, Text, ToolCallBegin, ToolCallEnd
from ..parsing.parser import StreamParser
from ..tools import Toolset

DELTA = 4  # characters per streamed delta, about one token
SLOW_NS = 1_000_000_000  # a run slower than this is repeated at most SLOW_REPEAT times
SLOW_REPEAT = 3
PROSE_GOAL_US = 1.5
GOALS_US = {"hermes": 2.0, "glm45": 2.0, "glm47": 2.0, "qwen3_coder": 4.0}
LINEARITY_LIMIT = 1.5
# Total ms for one call with an ~8k-token argument, as quoted in issue 2.
REFERENCES_MS = {
    "hermes": {"vLLM": 720.0, "SGLang": 35000.0, "simple incremental": 12.5},
    "qwen3_coder": {"vLLM": 316.0, "SGLang": 165.0, "simple incremental": 31.0},
}


@dataclass(frozen=True)
class Sizes:
    prose: int  # characters of plain prose
    args: tuple[int, ...]  # lengths of the single string argument, shortest first
    compare: int  # the argument length compared with REFERENCES_MS (one of ``args``)
    sample: int  # one timed run feeds at least this many characters


FULL = Sizes(65536, (4096, 16384, 33000, 65536, 262144), compare=33000, sample=65536)
QUICK = Sizes(2048, (512, 2048), compare=2048, sample=2048)

# ---------------------------------------------------------------- the outputs

THOUGHT = "The user wants the forecast; get_weather takes a city, a unit and a number of days."
LEAD = "Let me check the weather in Paris for the next three days.\n\n"
WEATHER_ARGS: dict[str, Any] = {"city": "Paris", "unit": "celsius", "days": 3, "hourly": False}
WEATHER_SCHEMA = {
    "type": "object", "required": ["city"], "additionalProperties": False, "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "hourly": {"type": "boolean"},
    },
}
FILE_SCHEMA = {
    "type": "object", "required": ["content"], "properties": {"content": {"type": "string"}},
}
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER_SCHEMA}},
    {"type": "function", "function": {"name": "write_file", "parameters": FILE_SCHEMA}},
]
PROSE = (
    "The parser keeps a cursor and never scans consumed text again, so x < y holds at each step. "
    "In HTML a <b>bold</b> word and a <br> break are just content. "
    "When a < b and b < c, then a < c; a <toolbox> element is not a marker.\n"
    "Streaming four characters per delta is about one token, and 3 < 4 < 5 is true. "
    "Arrows like <- and <= appear in code reviews all the time.\n\n"
)
CODE = (
    "def total(values: list[int], n: int) -> int:\n"
    '    """Sum the first n values; "n" may exceed len(values)."""\n'
    "    return sum(v for i, v in enumerate(values) if i < n)  # keeps i < n\n"
    '<div class="row"><span>{item}</span></div>\n'
    '\tpath = "C:\\\\tmp\\\\out.txt"  # a Windows path, backslashes escaped\n'
)


@dataclass(frozen=True)
class Output:
    """One model output and what it must parse into."""

    case: str
    text: str
    calls: list[tuple[str, dict[str, Any]]]
    content: str
    reasoning: str


def _cycle(text: str, length: int) -> str:
    """``text`` repeated up to ``length`` characters, ending with a full stop."""
    return (text * (length // len(text) + 1))[: length - 1].rstrip() + "."


def _output(d: Dialect, case: str, content: str, call: tuple[str, dict[str, Any]] | None) -> Output:
    """A short reasoning block (when the dialect has one), the content, then the call."""
    think = f"{d.reasoning[0]}\n{THOUGHT}\n{d.reasoning[1]}\n\n" if d.reasoning else ""
    assert d.render is not None
    text = think + content + (d.render([call]) if call else "")
    return Output(case, text, [call] if call else [], content, THOUGHT if think else "")


def _outputs(d: Dialect, sizes: Sizes) -> list[Output]:
    # Where calls open only at the answer's start (bare JSON, pythonic lists), content cannot lead.
    lead = "" if d.bare_start else LEAD
    outputs = [
        _output(d, "call", lead, ("get_weather", WEATHER_ARGS)),
        _output(d, "prose", _cycle(PROSE, sizes.prose), None),
    ]
    for n in sizes.args:
        call = ("write_file", {"content": _cycle(CODE, n)})
        outputs.append(_output(d, _arg_case(n), "", call))
    return outputs


def _arg_case(n: int) -> str:
    return f"arg {n // 1024}k" if n % 1024 == 0 else f"arg {n}"


def _check(events: list[Any], output: Output) -> str | None:
    """Why the events are not exactly the expected parse (None when they are)."""
    names = {e.index: e.name for e in events if isinstance(e, ToolCallBegin)}
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    calls = [(names.get(e.index), json.loads(e.arguments)) for e in ends]
    if calls != output.calls:
        got = [(n, sorted(a)) for n, a in calls]
        return f"parsed calls {got}, expected {[(n, sorted(a)) for n, a in output.calls]}"
    # A block declined as "not a call" in prose is fine (the text stays content, checked below).
    bad = [e for e in events if isinstance(e, (Invalid, CallAborted, CallRejected))
           and not (isinstance(e, CallRejected) and not output.calls)]
    if bad:
        return f"unexpected {bad[0]!r:.200}"
    if "".join(e.text for e in events if isinstance(e, Text)).strip() != output.content.strip():
        return "content differs from the expected content"
    if "".join(e.text for e in events if isinstance(e, Reasoning)).strip() != output.reasoning:
        return "reasoning differs from the expected reasoning"
    return None


# ---------------------------------------------------------------- timing


class Floor:
    """A parser that does nothing: the cost of the feeding loop itself."""

    def feed(self, text: str) -> list[Any]:
        return [text]

    def close(self) -> list[Any]:
        return []


Maker = Callable[[], Any]  # a fresh StreamParser or Floor


def _timed_run(make: Maker, deltas: list[str], copies: int) -> int:
    """Feed ``deltas`` to ``copies`` fresh parsers with the GC off; ns per response."""
    parsers = [make() for _ in range(copies)]
    sink: list[Any] = []
    extend = sink.extend
    gc.collect(1)  # what earlier runs left; a full collection walks the whole heap (seconds in a test process)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter_ns()
        for parser in parsers:
            feed = parser.feed
            for delta in deltas:
                extend(feed(delta))
            extend(parser.close())
        elapsed = time.perf_counter_ns() - start
    finally:
        if was_enabled:
            gc.enable()
    return elapsed // copies


@dataclass
class Row:
    """The figures of one output in one dialect (ns per response, medians)."""

    case: str
    chars: int
    deltas: int
    goal_us: float | None
    ns: int = 0
    floor_ns: int = 0
    runs: int = 0
    problem: str | None = None

    def figures(self) -> dict[str, Any]:
        us = self.ns / self.deltas / 1000
        return {
            "total_ms": self.ns / 1e6,
            "us_per_delta": us,
            "floor_us_per_delta": self.floor_ns / self.deltas / 1000,
            "mb_per_s": self.chars * 1000 / max(self.ns, 1),
            "ns_per_char": self.ns / self.chars,
            "goal_met": None if self.goal_us is None else us <= self.goal_us,
        }


def _measure(make: Maker, output: Output, goal: float | None, repeat: int, sizes: Sizes) -> Row:
    """Check one output's parse, then time it and the floor on the same deltas."""
    deltas = [output.text[i : i + DELTA] for i in range(0, len(output.text), DELTA)]
    row = Row(output.case, len(output.text.encode()), len(deltas), goal)
    start = time.perf_counter_ns()
    parser = make()
    events = [e for delta in deltas for e in parser.feed(delta)] + parser.close()
    row.problem = _check(events, output)
    if row.problem is None:
        slow = time.perf_counter_ns() - start > SLOW_NS
        row.runs = min(repeat, SLOW_REPEAT) if slow else repeat
        copies = max(1, sizes.sample // len(output.text))
        row.ns = int(statistics.median(_timed_run(make, deltas, copies) for _ in range(row.runs)))
        floor = (_timed_run(Floor, deltas, copies) for _ in range(row.runs))
        row.floor_ns = int(statistics.median(floor))
    return row


def _setup_us(d: Dialect | str, repeat: int) -> float:
    """Per-response cost outside the loop: a Toolset, a parser, the first schema check."""

    def once() -> int:
        start = time.perf_counter_ns()
        tools = Toolset(TOOLS)
        StreamParser(d, tools, reasoning=True, in_reasoning=False, validate=True)
        tools.validate("get_weather", WEATHER_ARGS)
        return time.perf_counter_ns() - start

    return statistics.median(once() for _ in range(repeat)) / 1000


def _paired_linearity(make: Maker, short: Output, long: Output, repeat: int, sizes: Sizes) -> float:
    """ns/char of the longest argument over the shortest: the median ratio of pairs timed back to
    back, so that a slow spell of a shared machine falls on both sides of a ratio."""
    runs = []
    for output in (short, long):
        deltas = [output.text[i : i + DELTA] for i in range(0, len(output.text), DELTA)]
        runs.append((deltas, max(1, sizes.sample // len(output.text)), len(output.text)))
    ratios = []
    for _ in range(max(repeat, 3)):
        short_ns, long_ns = (_timed_run(make, deltas, copies) / chars for deltas, copies, chars in runs)
        ratios.append(long_ns / short_ns)
    return statistics.median(ratios)


@dataclass
class DialectResult:
    name: str
    rows: list[Row] = field(default_factory=list)
    setup_us: float = 0.0
    linearity: float | None = None  # ns/char at the longest argument over the shortest
    problem: str | None = None


def bench_dialect(d: Dialect, repeat: int, sizes: Sizes, auto: bool = False) -> DialectResult:
    """Every measurement of one dialect (read by ``auto`` instead, when asked)."""
    result = DialectResult(f"auto:{d.name}" if auto else d.name)
    if d.render is None:
        result.problem = "the dialect declares no renderer"
        return result
    tools = Toolset(TOOLS)  # shared by the runs, so its schema validator is built once
    make = partial(StreamParser, d, tools, reasoning=True, in_reasoning=False, validate=True)
    if auto:
        from ..parsing.auto import model_for, needs_hint

        hint = {"model": model_for(d.name)} if needs_hint(d) else {}
        make = partial(StreamParser, "auto", tools, reasoning=True, in_reasoning=False, validate=True, **hint)
    outputs = _outputs(d, sizes)
    for output in outputs:
        goal = None if auto else PROSE_GOAL_US if output.case == "prose" else GOALS_US.get(d.name)
        result.rows.append(_measure(make, output, goal, repeat, sizes))
    longs = [o for o, r in zip(outputs, result.rows) if r.case.startswith("arg ") and r.problem is None]
    if len(longs) >= 2:
        result.linearity = _paired_linearity(make, longs[0], longs[-1], repeat, sizes)
    result.setup_us = _setup_us("auto" if auto else d, repeat)
    return result


# ---------------------------------------------------------------- reporting


def _header(repeat: int, sizes: Sizes) -> dict[str, Any]:
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "uname": " ".join(platform.uname()[:3]),
        "repeat": repeat,
        "quick": sizes is QUICK,
        "gc": "disabled during timed runs",
    }


def _verdict(ok: bool | None) -> str:
    return "" if ok is None else ("PASS" if ok else "FAIL")


COLUMNS = (("chars", 8), ("deltas", 7), ("total ms", 10), ("us/delta", 9), ("floor", 7),
           ("MB/s", 7), ("ns/char", 9))


def _format_row(row: Row) -> str:
    head = f"  {row.case:<10}{row.chars:>8}{row.deltas:>7}"
    if row.problem:
        return f"{head}  PARSE FAILED: {row.problem}"
    f = row.figures()
    goal = f"{row.goal_us:>4.1f} {_verdict(f['goal_met'])}" if row.goal_us is not None else "   -"
    return (
        f"{head}{f['total_ms']:>10.3f}{f['us_per_delta']:>9.2f}{f['floor_us_per_delta']:>7.2f}"
        f"{f['mb_per_s']:>7.2f}{f['ns_per_char']:>9.1f}   {goal}"
    )


def _format_dialect(result: DialectResult) -> list[str]:
    if result.problem:
        return [f"== {result.name} ==", f"  SKIPPED: {result.problem}", ""]
    titles = "case".ljust(10) + "".join(t.rjust(w) for t, w in COLUMNS)
    lines = [f"== {result.name} ==", f"  {titles}   goal us/delta", *map(_format_row, result.rows)]
    if result.linearity is not None:
        longs = [r.case[4:] for r in result.rows if r.case.startswith("arg ")]
        ok = _verdict(result.linearity <= LINEARITY_LIMIT)
        lines.append(
            f"  linearity: ns/char at {longs[-1]} / at {longs[0]} (paired runs) = {result.linearity:.2f}"
            f" (limit {LINEARITY_LIMIT}) {ok}"
        )
    setup = "per-response setup outside the loop (Toolset, StreamParser, first schema check)"
    return lines + [f"  {setup}: {result.setup_us:.0f} us", ""]


def _format_compare(results: list[DialectResult], sizes: Sizes) -> list[str]:
    case = _arg_case(sizes.compare)
    title = (
        f"== one call, a {sizes.compare}-char string argument ({DELTA}-char deltas, about as many"
        " tokens): total ms against the figures quoted in issue 2 =="
    )
    lines = [title]
    for res in results:
        for row in (r for r in res.rows if r.case == case and res.name in REFERENCES_MS):
            if row.problem:
                lines.append(f"  {res.name:<12} PARSE FAILED: {row.problem}")
                continue
            f = row.figures()
            refs = "  ".join(f"{k} {ms:g} ms" for k, ms in REFERENCES_MS[res.name].items())
            lines.append(
                f"  {res.name:<12} toolbridge {f['total_ms']:.1f} ms, {row.deltas} deltas,"
                f" {f['us_per_delta']:.2f} us/delta (goal {row.goal_us}"
                f" {_verdict(f['goal_met'])})  |  {refs}"
            )
    return lines if len(lines) > 1 else []


def _report_text(header: dict[str, Any], results: list[DialectResult], sizes: Sizes) -> str:
    quick = "  QUICK SIZES: not comparable figures" if header["quick"] else ""
    machine = f"{header['python']}  {header['machine']}  ({header['uname']})"
    method = (
        f"method: {DELTA}-char deltas split before timing; only feed()/close() timed"
        f" (perf_counter_ns); GC disabled during timed runs; median of {header['repeat']} runs"
        f" (at most {SLOW_REPEAT} when one run exceeds {SLOW_NS // 10**9} s)"
    )
    features = (
        "features: tools with JSON schemas, reasoning=True (a <think> block first), validate=True."
        " floor: a do-nothing parser on the same deltas; MB/s and ns/char: output characters"
    )
    lines = [f"toolbridge bench  {header['date']}  {machine}{quick}", method, features, ""]
    for result in results:
        lines += _format_dialect(result)
    return "\n".join(lines + _format_compare(results, sizes))


def _report_json(header: dict[str, Any], results: list[DialectResult]) -> str:
    dialects = [
        {
            **asdict(res),
            "references_ms": REFERENCES_MS.get(res.name),
            "rows": [{**asdict(r), **({} if r.problem else r.figures())} for r in res.rows],
        }
        for res in results
    ]
    return json.dumps({"header": header, "dialects": dialects}, indent=2)


# ---------------------------------------------------------------- command line


def _dialects(names: list[str] | None) -> list[Dialect]:
    """The distinct dialects, by primary name; ``names`` (names or aliases) narrows them."""
    found = {d.name: d for d in map(get_dialect, names or dialect_names())}
    return [found[n] for n in sorted(found)]


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    about = "Time StreamParser on every registered dialect and print the figures."
    parser = argparse.ArgumentParser(prog="toolbridge bench", description=about)
    add = parser.add_argument
    add("--dialect", action="append", metavar="NAME", help="only this dialect (repeatable)")
    add("--repeat", type=int, default=7, metavar="N", help="runs per figure; the median is shown")
    add("--quick", action="store_true", help="small sizes, for a smoke test")
    add("--auto", action="store_true", help='also time dialect "auto" on every dialect\'s outputs')
    add("--dense", action="store_true",
        help="also show how parse time grows on marker-dense output (every dialect and auto)")
    add("--json", action="store_true", help="print machine-readable results")
    add("--gateway", action="store_true",
        help="then run the gateway benchmark once for each dialect its script is written in "
             "(hermes, qwen3_coder), with --quick and --json passed on")
    add("--gateway-only", action="store_true",
        help="only the gateway benchmark; the other flags are its own "
             "(toolbridge bench --gateway-only --help)")
    add("--speed", action="store_true",
        help="only toolbridge against reference parsers (whole answers, auto, short answers); "
             "its flags: --quick, --json")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    try:
        args.dialects = _dialects(args.dialect)
    except ConfigError as exc:
        parser.error(str(exc))
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures.

    Returns 0, or 1 when an output did not parse as expected or a body kind has no renderer
    (or, with ``--gateway``, when a gateway stream or answer was not the expected one).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--gateway-only" in argv:
        from .gateway import main as gateway_main

        return gateway_main([a for a in argv if a != "--gateway-only"])
    args = _arguments(argv)
    sizes = QUICK if args.quick else FULL
    header = _header(args.repeat, sizes)
    results = [bench_dialect(d, args.repeat, sizes) for d in args.dialects]
    if args.auto:
        results += [bench_dialect(d, args.repeat, sizes, auto=True) for d in args.dialects]
    print(_report_json(header, results) if args.json else _report_text(header, results, sizes))
    problems = [f"{res.name}: {res.problem}" for res in results if res.problem]
    if args.dense:
        from .dense import GROWTH_LIMIT, report

        lines, ok = report([d.name for d in args.dialects], n=100 if args.quick else 500,
                           repeat=3)
        print("\n" + "\n".join(lines), flush=True)
        if not ok:
            problems.append(f"parse time grew more than {GROWTH_LIMIT}x on 4x the marker-dense output")
        from .dense import repair_report

        print("\n" + "\n".join(repair_report()), flush=True)
    problems += [f"{res.name} {r.case}: {r.problem}" for res in results for r in res.rows
                 if r.problem]
    for problem in problems:
        print(f"toolbridge bench: {problem}", file=sys.stderr)
    if args.gateway:
        from .gateway import main as gateway_main
        from .script import DIALECTS as SCRIPTED

        flags = [f"--{f}" for f in ("quick", "json") if getattr(args, f)]
        failed = 0
        for dialect in SCRIPTED:  # the model answers in each scripted dialect in turn
            print(flush=True)
            failed += gateway_main([*flags, "--dialect", dialect]) != 0
        return 1 if problems or failed else 0
    return 1 if problems else 0
