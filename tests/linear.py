"""Marker-dense texts, and how parse time grows on them: four times the text, at most five times the time.

A text is a prefix that may open a body (a JSON object or list cut inside a key, ``<function=f>``,
``<parameter=``, or any marker followed by one of those), then a unit repeated: one to three
markers of every dialect (``toolbridge.bench.dense.all_markers``; for a pinned dialect its own,
the body openers and a few of other dialects'), interleaved. ``growth`` times the parse of the
text at n and 4n repetitions, whole or streamed in small chunks: 4.0 is linear, 16 quadratic.

The clock is read on a shared, noisy machine, so a measurement is made robust rather than
trusted: it is the process's CPU time (``CLOCK``), which a preemption does not add to; each size is timed several times, alternating, and the minimum kept (noise only adds
time); n is chosen so that the text at n is ``SIZE`` characters and its parse takes at least
``FLOOR`` seconds (the text grows fourfold until it does); a growth over ``LIMIT`` is measured
again, with more repeats, before it counts. ``tests/test_linear.py`` draws texts with Hypothesis
(short in ``make test``); ``python -m tests.fuzz --linear`` draws many more (``make fuzz``).
``tests/test_bounds.py`` checks fixed units by counting function calls, which misses work done
in C (copying or searching the rest of a long buffer once per marker): these clocks do not.
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from toolbridge import StreamParser, parse
from toolbridge.bench.dense import all_markers, markers
from toolbridge.dialects import get_dialect

from .fuzz import TOOLS

# What opens a body, cut where it waits for more: a JSON key, a list of calls, a tag's value.
OPENERS = ('{"', '[{"', '[{"name": "get_weather", "argume', '{"name": "get_weather", "arguments": {"city": "',
           "<function=get_weather>", "<function=get_weather>\n<parameter=", "<parameter=")
ALL_MARKERS = all_markers()
# CPU time of this process, not wall time: on a loaded machine a parse is also preempted, for
# longer the longer it runs (wall time made linear parses look 5-9x on a 2-core machine at load 7).
CLOCK = time.process_time
LIMIT = 5.0  # the time at 4n over the time at n (linear is 4)
SIZE = 8000  # characters at n (32,000 at 4n)
FLOOR = 0.004  # seconds the parse at n takes at least, or the text is made longer
CHUNK = 7  # characters per feed, streamed
REPEATS = 3  # timings of each size; a growth over LIMIT is measured again, REPEATS + 2 each
TRIES = 3


@dataclass(frozen=True)
class Dense:
    """A marker-dense text: ``prefix`` then ``unit`` repeated, read by ``parser``."""

    parser: str  # "auto" or a dialect's name
    prefix: str
    unit: str

    def text(self, n: int) -> str:
        return self.prefix + self.unit * n


# Shapes found superlinear before, checked first by every long run: December's storms, and issue
# 31's (each marker's trials read all the rest of the text; a refused trial was closed, which read
# it again).
SHAPES = (
    Dense("auto", "", "<tool_call>"),
    Dense("auto", "", "<function=f>"),
    Dense("auto", '<tool_calls>[{"', "<tool_calls>"),
    Dense("auto", '[{"name": "get_weather", "argume', "<tool_call><|eot_id|><|eot_id|>"),
)


def pool(parser: str) -> list[str]:
    """The markers a unit is made of for ``parser``."""
    if parser == "auto":
        return [*ALL_MARKERS, *OPENERS]
    rng = random.Random(parser)
    return [*markers(get_dialect(parser)), *OPENERS, *rng.sample(ALL_MARKERS, 4)]


def prefixes() -> list[str]:
    """Every prefix a text may start with (beside the empty one, a marker and an opener)."""
    return ["", *OPENERS]


def random_dense(rng: random.Random, parser: str) -> Dense:
    """One text for ``parser``, drawn from ``rng``."""
    roll = rng.random()
    prefix = "" if roll < 0.2 else rng.choice(OPENERS) if roll < 0.6 else rng.choice(ALL_MARKERS) + rng.choice(OPENERS)
    found = pool(parser)
    unit = "".join(rng.choice(found) for _ in range(rng.randint(1, 3)))
    return Dense(parser, prefix, unit)


def seconds(parser: str, text: str, chunk: int) -> float:
    """One parse of ``text``: whole (``chunk`` 0, ``parse``) or fed in ``chunk``-character pieces."""
    if not chunk:
        start = CLOCK()
        parse(text, parser, TOOLS)
        return CLOCK() - start
    pieces = [text[i : i + chunk] for i in range(0, len(text), chunk)]
    start = CLOCK()
    p = StreamParser(parser, TOOLS)
    for piece in pieces:
        p.feed(piece)
    p.close()
    return CLOCK() - start


def growth(case: Dense, chunk: int, repeats: int = REPEATS) -> tuple[float, float, int]:
    """(time at 4n over time at n, seconds at n, characters at n), each time the minimum of
    ``repeats`` alternating runs (GC off)."""
    n = max(1, SIZE // len(case.unit))
    gc.disable()
    try:
        while True:
            small, large = case.text(n), case.text(4 * n)
            a = b = float("inf")
            for _ in range(repeats):
                a = min(a, seconds(case.parser, small, chunk))
                b = min(b, seconds(case.parser, large, chunk))
            if a >= FLOOR or len(small) >= 4 * SIZE:
                return b / a, a, len(small)
            n *= 4
    finally:
        gc.enable()


def check(case: Dense, chunk: int) -> str | None:
    """Why ``case`` grows faster than LIMIT allows (measured TRIES times), or None."""
    seen = []
    for attempt in range(TRIES):
        ratio, at_n, size = growth(case, chunk, REPEATS + 2 * attempt)
        if ratio <= LIMIT:
            return None
        seen.append(f"{ratio:.1f}x ({at_n * 1e3:.1f} ms at {size} characters)")
    how = "whole" if not chunk else f"streamed in {chunk}-character chunks"
    return f"{case.parser} {how}, prefix {case.prefix!r}, unit {case.unit!r}: 4n/n time " + ", ".join(seen)


def run(names: list[str], count: int, seed: int = 0, on_failure: Callable[[str], None] = print) -> tuple[int, int]:
    """The long form (``python -m tests.fuzz --linear COUNT``): SHAPES, then ``count`` drawn texts
    through auto and a quarter as many (at least one) through each of ``names``, whole and
    streamed. Returns (texts checked, failures)."""
    rng = random.Random(f"linear:{seed}")
    cases = list(SHAPES) + [random_dense(rng, "auto") for _ in range(count)]
    cases += [random_dense(rng, name) for name in names for _ in range(max(1, count // 4))]
    failed = 0
    for case in cases:
        for chunk in (0, CHUNK):
            why = check(case, chunk)
            if why:
                failed += 1
                on_failure(why)
    return len(cases), failed
