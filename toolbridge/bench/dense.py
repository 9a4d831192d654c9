"""``toolbridge bench --dense``: parse time on marker-dense output grows linearly, for every dialect.

Strategy: for each dialect, units of marker-dense output (each call-start marker; every marker
the dialect declares, interleaved in a seeded random order with a few of other dialects'; the
dialect's sample cut after a structural character; inside one argument value, the format's own
tags where its layout does not place them, each looked ahead from as far as the reader looks) are
repeated ``n`` and ``4n`` times and parsed whole, by the dialect and by ``auto``. A pair of runs
(n, then 4n) is timed back to back; the growth is the median over pairs of the 4n time over the n
time, so 4.0 is linear and 16 quadratic. The row of a dialect is its worst unit.
``tests/test_bounds.py`` checks the same inputs by counting function calls (no clocks).
"""

from __future__ import annotations

import gc
import random
import re
import statistics
import time

from ..dialects import dialect_names, get_dialect
from ..parsing.parser import parse
from ..syntax.dialect import Dialect

GROWTH_LIMIT = 5.0  # the 4n time over the n time


def markers(d: Dialect) -> list[str]:
    """Every marker a dialect declares (call starts, bare openers, reasoning, end and stray tokens)."""
    found = {*d.call_start, *d.bare_start, *d.end_tokens, *d.stray_tokens, *(d.reasoning or ())}
    return sorted(m for m in found if m)


def all_markers() -> list[str]:
    """Every marker of every registered dialect."""
    return sorted({m for name in dialect_names() for m in markers(get_dialect(name))})


def dense_units(d: Dialect) -> dict[str, str]:
    """One unit of each marker-dense input for a dialect, by label; repeat a unit to use it."""
    own = markers(d)
    rng = random.Random(d.name)
    units = {f"repeat {m!r}": m for m in d.call_start}
    units["interleaved"] = "".join(rng.sample(own + rng.sample(all_markers(), 4), len(own) + 4))
    if d.sample:
        cuts = [m.end() for m in re.finditer(r"[:=>,\[{(]", d.sample)]
        for cut in cuts[:: max(1, len(cuts) // 3)][:3]:
            units[f"sample cut at {cut}"] = d.sample[:cut]
    return units


# Value text that mentions the format's own tags where the layout does not place them: each tag's
# verdict looks as far ahead as the reader allows (the XML close tag's white space, the GLM close
# tag's LOOKAHEAD), by the reader of each layout.
_XML_IN_VALUE = "</parameter>" + " " * 15 + "x <parameter=k> y </function> z\n"
_GLM_IN_VALUE = "x</tool_call>" + " " * 20
IN_VALUE = {"qwen3_coder": _XML_IN_VALUE, "nemotron_v3": _XML_IN_VALUE, "step3p5": _XML_IN_VALUE,
            "seed_oss": _XML_IN_VALUE, "glm45": _GLM_IN_VALUE, "glm47": _GLM_IN_VALUE}


def dense_inputs(d: Dialect) -> dict[str, tuple[str, str, str]]:
    """``dense_units`` as (head, unit, tail): the input is the head, the unit repeated, the tail;
    with the units of a value full of tags (``IN_VALUE``) between a call's text before and after
    the value."""
    inputs = {label: ("", unit, "") for label, unit in dense_units(d).items()}
    unit = IN_VALUE.get(d.name)
    if unit is not None and d.render is not None:
        head, tail = d.render([("f", {"a": "\x00"})]).split("\x00")
        inputs["tags inside a value"] = (head, unit, tail)
    return inputs


def _seconds(dialect: str, text: str) -> float:
    start = time.perf_counter()
    parse(text, dialect)
    return time.perf_counter() - start


def growth(dialect: str, framed: tuple[str, str, str], n: int, repeat: int) -> tuple[float, float]:
    """(median 4n/n time ratio over paired runs, median seconds at 4n)."""
    head, unit, tail = framed
    small, large = head + unit * n + tail, head + unit * 4 * n + tail
    ratios, times = [], []
    gc.disable()
    try:
        for _ in range(repeat):
            a = _seconds(dialect, small)
            b = _seconds(dialect, large)
            ratios.append(b / max(a, 1e-9))
            times.append(b)
    finally:
        gc.enable()
    return statistics.median(ratios), statistics.median(times)


def report(names: list[str] | None = None, n: int = 500, repeat: int = 3) -> tuple[list[str], bool]:
    """The table's lines, and whether every growth stayed within GROWTH_LIMIT."""
    dialects = sorted({get_dialect(x).name for x in (names or dialect_names())})
    lines = [
        f"marker-dense output: each unit repeated {n} and {4 * n} times, parsed whole; growth = time at "
        f"{4 * n} / time at {n} (median of {repeat} paired runs; 4.0 is linear, 16 quadratic)",
        f"{'dialect':18} {'worst unit (pinned)':34} {'growth':>7} {'ms':>8}   "
        f"{'worst unit (auto)':34} {'growth':>7} {'ms':>8}",
    ]
    ok = True
    for name in dialects:
        cells = []
        for parser in (name, "auto"):
            worst = max(((growth(parser, u, n, repeat), label) for label, u in dense_inputs(get_dialect(name)).items()),
                        key=lambda x: x[0][0])
            (ratio, seconds), label = worst
            ok = ok and ratio <= GROWTH_LIMIT
            cells.append(f"{label[:34]:34} {ratio:7.2f} {seconds * 1000:8.1f}")
        lines.append(f"{name:18} " + "   ".join(cells))
    lines.append(f"growth limit {GROWTH_LIMIT}: {'ok' if ok else 'EXCEEDED'}")
    return lines, ok


# ---------------------------------------------------------------- the cost of schema and syntax repair

_REPAIR_TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"},
                                     "mode": {"type": "integer"}, "values": {"type": "array", "items": {"type": "integer"}}},
}}}]


def _timed(text: str, dialect: str, repeat: int, **options: object) -> float:
    """Median seconds of ``parse`` over ``repeat`` runs (GC off)."""
    times = []
    gc.disable()
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            parse(text, dialect, tools=_REPAIR_TOOLS, **options)  # type: ignore[arg-type]
            times.append(time.perf_counter() - start)
    finally:
        gc.enable()
    return statistics.median(times)


def repair_report(repeat: int = 7) -> list[str]:
    """What schema repair (on by default) and syntax repair (opt-in) cost: nothing to repair in a
    33k-character argument, and many values to type at n and 4n."""
    import json

    long = '<tool_call>{"name": "write_file", "arguments": ' + json.dumps(
        {"path": "a.py", "content": "x = 1\n" * 5500, "mode": 420}) + "}</tool_call>"
    lines = ["schema and syntax repair: medians of paired runs, the same text, repair off as the baseline"]
    base = _timed(long, "hermes", repeat, coerce=False)
    for label, options in (("schema repair (default)", {}), ("schema + syntax repair", {"repair": True})):
        t = _timed(long, "hermes", repeat, **options)
        lines.append(f"  nothing to repair, one 33k-char call, {label}: {t * 1e3:.2f} ms vs {base * 1e3:.2f} ms "
                     f"off = {t / base:.2f}x")
    for n in (250, 1000):
        args = {"values": [str(i) for i in range(n)]}  # every value a string where integers are wanted
        text = '<tool_call>{"name": "write_file", "arguments": ' + json.dumps(args) + "}</tool_call>"
        lines.append(f"  {n} values to type: {_timed(text, 'hermes', repeat) * 1e3:.2f} ms "
                     f"(off: {_timed(text, 'hermes', repeat, coerce=False) * 1e3:.2f} ms)")
    return lines
