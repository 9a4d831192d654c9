"""``toolbridge bench``: how fast StreamParser streams each registered dialect.

Strategy: for every dialect (primary names only) build model outputs in the dialect's own syntax
(a per-body-kind renderer writes the call), pre-split each into 4-character deltas, and time only
the loop that feeds the deltas and closes the parser, with every feature on: tools with JSON
schemas, ``reasoning=True`` (the output opens with a short ``<think>`` block when the dialect has
one) and ``validate=True``. The same deltas are fed to a do-nothing parser as a floor.

Invariants:
- nothing but ``feed``/``close`` is timed: splitting, parser construction and checking are not;
- every output is parsed once, untimed, and must give exactly the expected call, content and
  reasoning before it is timed, so a failing parse cannot pass for a fast one;
- each figure is the median of several runs with the garbage collector disabled; a run feeds at
  least ``Sizes.sample`` characters (several responses for short outputs).

Exit status: 0, or 1 when an output did not parse as expected or a dialect has no renderer.
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
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any, Protocol

from ._body_argkey import ArgKeyBody, ArgKeyTags
from ._body_json import JsonEnvelopeBody
from ._body_xml import XmlBody, XmlTags
from .dialect import Dialect, dialect_names, get_dialect
from .errors import ConfigError
from .events import CallAborted, CallRejected, Invalid, Reasoning, Text, ToolCallBegin, ToolCallEnd
from .stream import StreamParser
from .tools import Toolset

DELTA = 4  # characters per streamed delta, about one token
SLOW_NS = 1_000_000_000  # a run slower than this is repeated at most SLOW_REPEAT times
SLOW_REPEAT = 3
PROSE_GOAL_US = 1.5
GOALS_US = {"hermes": 2.0, "glm45": 2.0, "glm47": 2.0, "qwen3_coder": 4.0}
LINEARITY_LIMIT = 1.5
# Total ms for an ~8k-token single-argument call, as quoted in issue 2.
REFERENCES_MS = {
    "hermes": {"vLLM": 720.0, "SGLang": 35000.0, "simple incremental": 12.5},
    "qwen3_coder": {"vLLM": 316.0, "SGLang": 165.0, "simple incremental": 31.0},
}


@dataclass(frozen=True)
class Sizes:
    prose: int  # characters of plain prose
    args: tuple[int, ...]  # lengths of the single string argument
    compare: int  # argument length of the ~8k-token call compared with REFERENCES_MS
    sample: int  # each timed run feeds at least this many characters


FULL = Sizes(prose=65536, args=(4096, 16384, 65536, 262144), compare=33000, sample=65536)
QUICK = Sizes(prose=2048, args=(512, 2048), compare=2048, sample=2048)

# ---------------------------------------------------------------- the outputs

THOUGHT = "The user wants the forecast; get_weather takes a city, a unit and a number of days."
LEAD = "Let me check the weather in Paris for the next three days.\n\n"
WEATHER_ARGS: dict[str, Any] = {"city": "Paris", "unit": "celsius", "days": 3, "hourly": False}
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "required": ["city"], "additionalProperties": False, "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "hourly": {"type": "boolean"}}}}},
    {"type": "function", "function": {"name": "write_file", "parameters": {
        "type": "object", "required": ["content"],
        "properties": {"content": {"type": "string"}}}}},
]
PROSE = (
    "The parser keeps a cursor and never scans consumed text again, so x < y holds at each step. ",
    "In HTML a <b>bold</b> word and a <br> break are just content. ",
    "When a < b and b < c, then a < c; a <toolbox> element is not a marker.\n",
    "Streaming four characters per delta is about one token, and 3 < 4 < 5 is true. ",
    "Arrows like <- and <= appear in code reviews all the time.\n\n",
)
CODE = (
    "def total(values: list[int], n: int) -> int:\n",
    '    """Sum the first n values; "n" may exceed len(values)."""\n',
    "    return sum(v for i, v in enumerate(values) if i < n)  # keeps i < n\n",
    '<div class="row"><span>{item}</span></div>\n',
    '\tpath = "C:\\\\tmp\\\\out.txt"  # a Windows path, backslashes escaped\n',
)


@dataclass(frozen=True)
class Output:
    """One model output and what it must parse into."""

    case: str
    text: str
    calls: list[tuple[str, dict[str, Any]]]
    content: str
    reasoning: str


def _cycle(pieces: Sequence[str], length: int) -> str:
    text, i = [], 0
    while sum(map(len, text)) < length:
        text.append(pieces[i % len(pieces)])
        i += 1
    return "".join(text)[:length].rstrip() + "."


def _raw(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _body(dialect: Dialect) -> Any:
    """The body the dialect builds for its first call-start marker.

    A dialect's body factory may be a function choosing among body kinds by marker, so the kind
    (and its tag spellings) is read from the body it builds, not from the factory.
    """
    return dialect.body(StreamParser(dialect), dialect.call_start[0])


def _render_json(d: Dialect, body: Any, name: str, args: dict[str, Any]) -> str:
    envelope = json.dumps({body._name_keys[0]: name, body._args_keys[0]: args}, ensure_ascii=False)
    return f"{d.call_start[0]}\n{envelope}\n{body._close}"


def _render_xml(d: Dialect, body: Any, name: str, args: dict[str, Any]) -> str:
    tags: XmlTags = body._tags
    wrapper = [m for m in d.call_start[:1] if m != tags.function[0]]
    nl = "\n" if tags.trim_newline else ""
    params = [
        f"{tags.parameter[0]}{k}{tags.parameter[1]}{nl}{_raw(v)}{nl}{tags.parameter_close}"
        for k, v in args.items()
    ]
    function = [f"{tags.function[0]}{name}{tags.function[1]}", *params, tags.function_close]
    return "\n".join(wrapper + function + [tags.block_close] * len(wrapper))


def _render_argkey(d: Dialect, body: Any, name: str, args: dict[str, Any]) -> str:
    tags: ArgKeyTags = body._tags
    nl = "\n" if "\n" in d.sample else ""  # glm45 writes a newline between elements, glm47 not
    pairs = "".join(
        f"{tags.key[0]}{k}{tags.key[1]}{nl}{tags.value[0]}{_raw(v)}{tags.value[1]}{nl}"
        for k, v in args.items()
    )
    return f"{d.call_start[0]}{name}{nl}{pairs}{tags.block_close}"


Renderer = Callable[[Dialect, Any, str, dict[str, Any]], str]
RENDERERS: dict[Any, Renderer] = {
    JsonEnvelopeBody: _render_json,
    XmlBody: _render_xml,
    ArgKeyBody: _render_argkey,
}


def _output(d: Dialect, case: str, content: str, call: tuple[str, dict[str, Any]] | None) -> Output:
    """An output: a short reasoning block (when the dialect has one), content, then the call."""
    think = f"{d.reasoning[0]}\n{THOUGHT}\n{d.reasoning[1]}\n\n" if d.reasoning else ""
    body = _body(d)
    text = think + content + (RENDERERS[type(body)](d, body, *call) if call else "")
    return Output(case, text, [call] if call else [], content, THOUGHT if think else "")


def _outputs(d: Dialect, sizes: Sizes) -> list[Output]:
    outputs = [
        _output(d, "call", LEAD, ("get_weather", WEATHER_ARGS)),
        _output(d, "prose", _cycle(PROSE, sizes.prose), None),
    ]
    for n in sizes.args:
        outputs.append(_output(d, f"arg {_size(n)}", "", ("write_file", {"content": _cycle(CODE, n)})))
    return outputs


def _size(n: int) -> str:
    return f"{n // 1024}k" if n % 1024 == 0 else str(n)


def _check(events: list[Any], output: Output) -> str | None:
    """Why the events are not exactly the expected parse (None when they are)."""
    names = {e.index: e.name for e in events if isinstance(e, ToolCallBegin)}
    calls = [(names.get(e.index), json.loads(e.arguments)) for e in events if isinstance(e, ToolCallEnd)]
    if calls != output.calls:
        got = [(n, sorted(a)) for n, a in calls]
        return f"parsed calls {got}, expected {[(n, sorted(a)) for n, a in output.calls]}"
    bad = [e for e in events if isinstance(e, (Invalid, CallAborted, CallRejected))]
    if bad:
        return f"unexpected {bad[0]!r:.200}"
    if "".join(e.text for e in events if isinstance(e, Text)).strip() != output.content.strip():
        return "content differs from the expected content"
    if "".join(e.text for e in events if isinstance(e, Reasoning)).strip() != output.reasoning:
        return "reasoning differs from the expected reasoning"
    return None


# ---------------------------------------------------------------- timing


class Feeder(Protocol):
    def feed(self, text: str) -> list[Any]: ...

    def close(self) -> list[Any]: ...


class Floor:
    """A parser that does nothing: the cost of the feeding loop itself."""

    def feed(self, text: str) -> list[Any]:
        return [text]

    def close(self) -> list[Any]:
        return []


def _split(text: str) -> list[str]:
    return [text[i : i + DELTA] for i in range(0, len(text), DELTA)]


def _run(make: Callable[[], Feeder], deltas: list[str]) -> list[Any]:
    parser = make()
    events = [e for delta in deltas for e in parser.feed(delta)]
    return events + parser.close()


def _timed_run(make: Callable[[], Feeder], deltas: list[str], copies: int) -> int:
    """Feed ``deltas`` to ``copies`` fresh parsers with the GC off; ns per response."""
    parsers = [make() for _ in range(copies)]
    sink: list[Any] = []
    extend = sink.extend
    gc.collect()
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


def _median_ns(make: Callable[[], Feeder], deltas: list[str], copies: int, repeat: int) -> int:
    return int(statistics.median(_timed_run(make, deltas, copies) for _ in range(repeat)))


@dataclass
class Row:
    """The figures of one output in one dialect (ns are per response, medians)."""

    case: str
    chars: int
    deltas: int
    goal_us: float | None
    ns: int = 0
    floor_ns: int = 0
    repeat: int = 0
    problem: str | None = None

    def figures(self) -> dict[str, Any]:
        ns = max(self.ns, 1)
        us = self.ns / self.deltas / 1000
        return {
            "total_ms": self.ns / 1e6,
            "us_per_delta": us,
            "floor_us_per_delta": self.floor_ns / self.deltas / 1000,
            "mb_per_s": self.chars * 1000 / ns,
            "ns_per_char": self.ns / self.chars,
            "goal_met": None if self.goal_us is None else us <= self.goal_us,
        }


def _measure(make: Callable[[], Feeder], output: Output, goal: float | None, repeat: int, sizes: Sizes) -> Row:
    """Check one output's parse, then time it and the floor on the same deltas."""
    deltas = _split(output.text)
    row = Row(output.case, len(output.text.encode()), len(deltas), goal)
    start = time.perf_counter_ns()
    events = _run(make, deltas)
    slow = time.perf_counter_ns() - start > SLOW_NS
    row.problem = _check(events, output)
    if row.problem is None:
        row.repeat = min(repeat, SLOW_REPEAT) if slow else repeat
        copies = max(1, sizes.sample // len(output.text))
        row.ns = _median_ns(make, deltas, copies, row.repeat)
        row.floor_ns = _median_ns(Floor, deltas, copies, row.repeat)
    return row


def _setup_us(d: Dialect, repeat: int) -> float:
    """Per-response cost outside the feed loop: a Toolset, a parser, the first schema check."""
    def once() -> int:
        start = time.perf_counter_ns()
        tools = Toolset(TOOLS)
        StreamParser(d, tools, reasoning=True, validate=True)
        tools.validate("get_weather", WEATHER_ARGS)
        return time.perf_counter_ns() - start

    return statistics.median(once() for _ in range(repeat)) / 1000


# ---------------------------------------------------------------- one dialect


@dataclass
class DialectResult:
    name: str
    rows: list[Row] = field(default_factory=list)
    setup_us: float = 0.0
    linearity: float | None = None  # ns/char at the longest argument over the shortest
    compare: Row | None = None  # the ~8k-token call, for dialects in REFERENCES_MS
    problem: str | None = None


def bench_dialect(d: Dialect, repeat: int, sizes: Sizes) -> DialectResult:
    """Every measurement of one dialect."""
    result = DialectResult(d.name)
    kind = type(_body(d))
    if kind not in RENDERERS:
        result.problem = f"no renderer for body kind {kind.__name__}"
        return result
    tools = Toolset(TOOLS)  # shared by the runs, so its schema validator is built once
    make = partial(StreamParser, d, tools, reasoning=True, validate=True)
    goal = GOALS_US.get(d.name)
    for output in _outputs(d, sizes):
        row_goal = PROSE_GOAL_US if output.case == "prose" else goal
        result.rows.append(_measure(make, output, row_goal, repeat, sizes))
    longs = [r for r in result.rows if r.case.startswith("arg ") and r.problem is None]
    if len(longs) >= 2:
        result.linearity = (longs[-1].ns / longs[-1].chars) / (longs[0].ns / longs[0].chars)
    if d.name in REFERENCES_MS:
        args = {"content": _cycle(CODE, sizes.compare)}
        output = _output(d, f"arg {_size(sizes.compare)}", "", ("write_file", args))
        result.compare = _measure(make, output, goal, repeat, sizes)
    result.setup_us = _setup_us(d, repeat)
    return result


def _problems(result: DialectResult) -> list[str]:
    rows = result.rows + ([result.compare] if result.compare else [])
    found = [f"{result.name}: {result.problem}"] if result.problem else []
    return found + [f"{result.name} {r.case}: {r.problem}" for r in rows if r.problem]


# ---------------------------------------------------------------- reporting


def _header(repeat: int, sizes: Sizes) -> dict[str, Any]:
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "uname": " ".join(platform.uname()[:3]),
        "delta_chars": DELTA,
        "repeat": repeat,
        "quick": sizes is QUICK,
        "gc": "disabled during timed runs",
    }


def _verdict(ok: bool | None) -> str:
    return "" if ok is None else ("PASS" if ok else "FAIL")


def _format_row(row: Row) -> str:
    head = f"  {row.case:<10}{row.chars:>8}{row.deltas:>8}"
    if row.problem:
        return f"{head}  PARSE FAILED: {row.problem}"
    f = row.figures()
    goal = f"{row.goal_us:>5.1f} {_verdict(f['goal_met'])}" if row.goal_us is not None else "    -"
    return (
        f"{head}{f['total_ms']:>10.3f}{f['us_per_delta']:>9.2f}{f['floor_us_per_delta']:>8.2f}"
        f"{f['mb_per_s']:>8.2f}{f['ns_per_char']:>9.1f}   {goal}"
    )


def _format_dialect(result: DialectResult) -> list[str]:
    lines = [f"== {result.name} =="]
    if result.problem:
        return lines + [f"  SKIPPED: {result.problem}", ""]
    lines.append(f"  {'case':<10}{'chars':>8}{'deltas':>8}{'total ms':>10}{'us/delta':>9}"
                 f"{'floor':>8}{'MB/s':>8}{'ns/char':>9}   goal us/delta")
    lines += [_format_row(row) for row in result.rows]
    if result.linearity is not None:
        longs = [r.case[4:] for r in result.rows if r.case.startswith("arg ")]
        ok = result.linearity <= LINEARITY_LIMIT
        lines.append(f"  linearity: ns/char at {longs[-1]} / at {longs[0]} = {result.linearity:.2f}"
                     f" (limit {LINEARITY_LIMIT}) {_verdict(ok)}")
    lines.append(f"  per-response setup outside the loop (Toolset, StreamParser, first schema"
                 f" check): {result.setup_us:.0f} us")
    return lines + [""]


def _format_compare(results: list[DialectResult]) -> list[str]:
    rows = [r for r in results if r.compare is not None]
    if not rows:
        return []
    first = rows[0].compare
    assert first is not None
    lines = [f"== one call with a {first.case[4:]}-char string argument (4-char deltas, about as"
             " many tokens): total ms against the figures quoted in issue 2 =="]
    for result in rows:
        row = result.compare
        assert row is not None
        if row.problem:
            lines.append(f"  {result.name:<12} PARSE FAILED: {row.problem}")
            continue
        f = row.figures()
        refs = "  ".join(f"{who} {ms:g} ms" for who, ms in REFERENCES_MS[result.name].items())
        goal = f"goal {row.goal_us:g} us/delta {_verdict(f['goal_met'])}" if row.goal_us else ""
        lines.append(f"  {result.name:<12} toolbridge {f['total_ms']:.1f} ms for {row.deltas} deltas"
                     f" ({f['us_per_delta']:.2f} us/delta, {goal})  |  {refs}")
    return lines


def _report_text(header: dict[str, Any], results: list[DialectResult]) -> str:
    quick = "  QUICK SIZES: figures are not comparable" if header["quick"] else ""
    lines = [
        f"toolbridge bench  {header['date']}  {header['python']}  {header['machine']}"
        f"  ({header['uname']}){quick}",
        f"method: {DELTA}-char deltas split before timing; only feed()/close() timed"
        f" (perf_counter_ns); GC disabled during timed runs; median of {header['repeat']} runs"
        f" ({SLOW_REPEAT} when a run exceeds {SLOW_NS // 10**9} s); floor = do-nothing parser"
        " us/delta on the same deltas",
        "features: tools with JSON schemas, reasoning=True (outputs open with a <think> block),"
        " validate=True; ns/char and MB/s count every character of the output",
        "",
    ]
    for result in results:
        lines += _format_dialect(result)
    return "\n".join(lines + _format_compare(results))


def _report_json(header: dict[str, Any], results: list[DialectResult]) -> str:
    def row(r: Row | None) -> dict[str, Any] | None:
        return None if r is None else {**asdict(r), **({} if r.problem else r.figures())}

    dialects = [{**asdict(res), "rows": [row(r) for r in res.rows], "compare": row(res.compare),
                 "references_ms": REFERENCES_MS.get(res.name)} for res in results]
    return json.dumps({"header": header, "dialects": dialects}, indent=2)


# ---------------------------------------------------------------- command line


def _dialects(names: list[str] | None) -> list[Dialect]:
    """The distinct dialects, by primary name; ``names`` (names or aliases) narrows them."""
    found: dict[str, Dialect] = {}
    for name in names or dialect_names():
        d = get_dialect(name)
        found[d.name] = d
    return [found[n] for n in sorted(found)]


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="toolbridge bench", description=__doc__.splitlines()[0])
    parser.add_argument("--dialect", action="append", metavar="NAME", help="only this dialect (repeatable)")
    parser.add_argument("--repeat", type=int, default=7, metavar="N", help="runs per figure (median)")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--json", action="store_true", help="print machine-readable results")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    try:
        args.dialects = _dialects(args.dialect)
    except ConfigError as exc:
        parser.error(str(exc))
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures; 1 when an output did not parse as expected."""
    args = _arguments(argv)
    sizes = QUICK if args.quick else FULL
    header = _header(args.repeat, sizes)
    results = [bench_dialect(d, args.repeat, sizes) for d in args.dialects]
    print(_report_json(header, results) if args.json else _report_text(header, results))
    problems = [p for result in results for p in _problems(result)]
    for problem in problems:
        print(f"toolbridge bench: {problem}", file=sys.stderr)
    return 1 if problems else 0
