"""A seeded mutation fuzzer for every dialect's parser and ``auto``.

Seeds are each dialect's own sample and its renderer's calls (one call; two calls with awkward
values), alone, after prose and after reasoning. Each input applies one to three mutations to a
seed: a truncation, a span deleted or repeated, a marker inserted (the dialect's own or any
dialect's) or repeated hundreds of times, structural characters, an integer of thousands of
digits, brackets nested deeper than the limit, lone surrogates, NULs and control characters, a
tool name nobody offered.

Every input is parsed whole and streamed in a random chunking, by the dialect and by ``auto``, and
must keep four promises:

- no exception escapes the parser (every failure is an outcome in the report);
- no call names a tool that was not offered;
- no parse takes longer than ``time_bound`` (a sanity bound for a noisy machine: linear work is
  checked by ``tests/test_bounds.py`` without clocks);
- the streamed message and ``finish_reason`` equal the whole ones, the streamed events are
  consistent (``harness.check_events``: fragments join into the final arguments, indices in
  order), the chunk deltas of the streamed events, encoded feed by feed, assemble into exactly
  the whole message (each call sent whole), and an answer with a call that broke after it began
  ends with ``length``.

``python -m tests.fuzz --per-dialect 20000`` is the long run (``make fuzz``); ``tests/test_fuzz.py``
runs a quick profile in ``make test`` and replays every minimised failure kept in
``tests/fuzz_regressions.py``.
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import random
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from toolbridge.bench.dense import all_markers, markers
from toolbridge.openai import finish_reason
from toolbridge.dialects import dialect_names, get_dialect
from toolbridge.syntax.dialect import Dialect

from .harness import Case, check_events, run

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"]}}},
    {"type": "function", "function": {"name": "search", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "array"},
                                         "deep": {"type": "object"}}}}},
]
OFFERED = {"get_weather", "search"}
CALLS = [
    [("get_weather", {"city": "Paris", "days": 3})],
    [("get_weather", {"city": "Rome"}),
     ("search", {"q": 'a "quoted" <b>tag</b> \\ back', "n": [1, 2.5, None, True], "deep": {"k": {"v": []}}})],
]
PROSE = "Let me look that up for you. "
STRUCTURAL = list('{}[]":,<>=/\\`\n\'') + ["{{", "}}", '"}', "]}", "</", "\\\"", "```", "```json\n", ",}", " True", "None"]
WORDS = ("x", "done", " and more", "\nok", "d}", "a]")
FOREIGN = ("rm_rf", "delete_all", "getweather", "get_weather2", "")


ALL_MARKERS = all_markers()


# Forms a dialect reads besides its sample and its renderer's: Mistral's older JSON list and
# the lone call object models write in its place (held whole until it ends: a call that broke
# in it, at the end of a stream, once lost the text after it under auto).
FORMS = {
    "mistral": ['[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]',
                '[TOOL_CALLS]{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}'],
}


def seeds(d: Dialect) -> list[str]:
    """The texts a dialect's inputs are made from."""
    texts = [d.sample, *FORMS.get(d.name, ())] if d.sample else list(FORMS.get(d.name, ()))
    if d.render is not None:
        for calls in CALLS:
            try:
                texts.append(d.render(calls))
            except Exception:  # a renderer that cannot write these values: not under test here
                pass
    out = list(texts)
    for t in texts:
        out.append(PROSE + t)
        if d.reasoning:
            out.append(d.reasoning[0] + "Thinking about " + t[:20] + d.reasoning[1] + t)
    return out or [PROSE]


# ---------------------------------------------------------------------------------- mutations

def _at(rng: random.Random, text: str) -> int:
    return rng.randint(0, len(text))


def truncate(rng: random.Random, text: str, d: Dialect) -> str:
    return text[: _at(rng, text)]


def delete_span(rng: random.Random, text: str, d: Dialect) -> str:
    a = _at(rng, text)
    return text[:a] + text[a + rng.randint(1, 12):]


def repeat_span(rng: random.Random, text: str, d: Dialect) -> str:
    a = _at(rng, text)
    b = min(len(text), a + rng.randint(1, 30))
    return text[:b] + text[a:b] * rng.choice((1, 2, 5, 50)) + text[b:]


def insert_marker(rng: random.Random, text: str, d: Dialect) -> str:
    pool = markers(d) if rng.random() < 0.6 else ALL_MARKERS
    a = _at(rng, text)
    return text[:a] + rng.choice(pool) + text[a:]


def marker_storm(rng: random.Random, text: str, d: Dialect) -> str:
    pool = markers(d) + rng.sample(ALL_MARKERS, 3)
    piece = "".join(rng.choice(pool) for _ in range(rng.randint(1, 3)))
    a = _at(rng, text)
    return text[:a] + piece * rng.choice((100, 300, 1000)) + text[a:]


def structural(rng: random.Random, text: str, d: Dialect) -> str:
    a = _at(rng, text)
    return text[:a] + rng.choice(STRUCTURAL) + text[a:]


def stray_word(rng: random.Random, text: str, d: Dialect) -> str:
    """A word where JSON or a tag goes on: a call that began breaks, and text follows it."""
    a = _at(rng, text)
    return text[:a] + rng.choice(WORDS) + text[a:]


def huge_number(rng: random.Random, text: str, d: Dialect) -> str:
    digits = "-" * rng.randint(0, 1) + "9" * rng.choice((4299, 4301, 6000))
    spots = [i for i, ch in enumerate(text) if ch.isdigit()]
    if spots and rng.random() < 0.7:
        a = rng.choice(spots)
        return text[:a] + digits + text[a + 1:]
    a = _at(rng, text)
    return text[:a] + digits + text[a:]


def deep_nesting(rng: random.Random, text: str, d: Dialect) -> str:
    k = rng.choice((100, 129, 1000, 3000))
    opener = rng.choice(("[", "{\"a\":", "[{\"b\":"))
    closer = {"[": "]", "{\"a\":": "}", "[{\"b\":": "}]"}[opener]
    inner = opener * k + "1" + (closer * k if rng.random() < 0.7 else "")
    spots = [i + 1 for i, ch in enumerate(text) if ch in ":=>"]
    a = rng.choice(spots) if spots else _at(rng, text)
    return text[:a] + inner + text[a:]


def odd_characters(rng: random.Random, text: str, d: Dialect) -> str:
    a = _at(rng, text)
    piece = rng.choice(("\ud800", "\udfff", "\\ud800", "\\udc00x", "\x00", "\x00\x01\x1f", "\u2028", "\ufeff",
                        "\U0001f600", "\\u00", "\\"))
    return text[:a] + piece + text[a:]


def foreign_tool(rng: random.Random, text: str, d: Dialect) -> str:
    name = rng.choice(("get_weather", "search"))
    return text.replace(name, rng.choice(FOREIGN), rng.randint(1, 2)) if name in text else text


MUTATIONS: list[Callable[[random.Random, str, Dialect], str]] = [
    truncate, delete_span, repeat_span, insert_marker, marker_storm, structural, huge_number,
    deep_nesting, odd_characters, foreign_tool, stray_word,
]
WEIGHTS = [3, 3, 2, 3, 1, 3, 1, 1, 2, 2, 2]


def inputs(d: Dialect, count: int, seed: int) -> Iterator[str]:
    """``count`` mutated inputs for a dialect, the same for the same seed."""
    rng = random.Random(f"{seed}:{d.name}")
    base = seeds(d)
    for _ in range(count):
        text = rng.choice(base)
        for op in rng.choices(MUTATIONS, WEIGHTS, k=rng.choice((1, 1, 2, 3))):
            text = op(rng, text, d)
        yield text


def chunking(rng: random.Random, text: str) -> list[str]:
    """A random chunking: mostly small pieces, sometimes large ones."""
    out, i = [], 0
    while i < len(text):
        n = rng.choice((1, 1, 2, 3, 4, 7, 16, 64, 1024))
        out.append(text[i : i + n])
        i += n
    return out


# ---------------------------------------------------------------------------------- checks

@dataclass
class Failure:
    dialect: str
    parser: str
    text: str
    chunks: list[str]
    options: dict[str, Any]
    what: str

    def __str__(self) -> str:
        return f"{self.parser} (inputs of {self.dialect}) {self.options}: {self.what}\n  text={self.text[:300]!r}"


def check(parser: str, text: str, chunks: list[str], options: dict[str, Any], time_bound: float) -> str | None:
    """Why ``text`` breaks a promise, or None."""
    case = Case("fuzz", text, tools=TOOLS, options=options)
    try:
        start = time.perf_counter()
        whole, whole_report, events = run(case, parser, [text])
        took = time.perf_counter() - start
        groups: list[list[Any]] = []
        streamed, stream_report, stream_events = run(case, parser, chunks, groups)
    except Exception:
        return "exception: " + traceback.format_exc(limit=-3)
    if took > time_bound:
        return f"whole parse took {took:.2f} s for {len(text)} characters"
    for call in whole.get("tool_calls") or ():
        if call["function"]["name"] not in OFFERED:
            return f"call to an unoffered tool {call['function']['name']!r}"
    if streamed != whole:
        return f"streamed != whole\n  whole={str(whole)[:400]}\n  streamed={str(streamed)[:400]}"
    if finish_reason(stream_report) != finish_reason(whole_report):
        return f"finish_reason {finish_reason(stream_report)} streamed, {finish_reason(whole_report)} whole"
    if whole_report.aborted and finish_reason(whole_report) != "length":
        return "a call broke after it began, yet the answer does not end with length"
    try:
        check_events(events, whole)
        check_events(stream_events, streamed, groups)
    except AssertionError as exc:
        return f"inconsistent events: {exc}"
    return None


OPTIONS = ({}, {"reasoning": True}, {"reasoning": True, "in_reasoning": True}, {"repair": True})


def minimise(failure: Failure, time_bound: float = 5.0) -> str:
    """A shorter text that still fails (any chunking from 1 to 8 characters): spans of
    decreasing size are deleted while the failure persists."""
    def fails(text: str) -> bool:
        return any(check(failure.parser, text, [text[i : i + n] for i in range(0, len(text), n)],
                         failure.options, time_bound) for n in (len(text) or 1, 1, 2, 3, 5, 8))

    text = failure.text
    if not fails(text):
        return text
    size = max(1, len(text) // 2)
    while size >= 1:
        i = 0
        while i < len(text):
            shorter = text[:i] + text[i + size:]
            if fails(shorter):
                text = shorter
            else:
                i += size
        size //= 2
    return text


# Failures found and not fixed yet, each with its reason, by (dialect of the inputs, parser, seed,
# input number): printed as known, not counted as failures. Each one is also a strict xfail in
# tests/test_fuzz.py (minimised), which fails the day the fix lands, so the entry goes with it.
KNOWN: dict[tuple[str, str, int, int], str] = {}


def fuzz(names: list[str], per_dialect: int, seed: int = 0, with_auto: bool = True,
         time_bound: float = 5.0, on_failure: Callable[[Failure], None] | None = None) -> tuple[Counter, list[Failure]]:
    """Run the fuzzer; returns inputs per dialect and the failures."""
    counts: Counter = Counter()
    failures: list[Failure] = []
    for name in names:
        d = get_dialect(name)
        rng = random.Random(f"chunks:{seed}:{name}")
        for i, text in enumerate(inputs(d, per_dialect, seed)):
            options = OPTIONS[i % len(OPTIONS)]
            chunks = chunking(rng, text)
            for parser in (name, "auto") if with_auto and i % 2 == 0 else (name,):
                why = check(parser, text, chunks, options, time_bound)
                counts[parser] += 1
                known = KNOWN.get((name, parser, seed, i))
                if why and known:
                    counts["known"] += 1
                    print(f"KNOWN {parser} (inputs of {name}, input {i}): {known}", flush=True)
                elif why:
                    failure = Failure(name, parser, text, chunks, options, why)
                    failures.append(failure)
                    if on_failure:
                        on_failure(failure)
    return counts, failures


def _one_dialect(name: str, per_dialect: int, seed: int, time_bound: float) -> tuple[str, Counter, list[Failure]]:
    counts, failures = fuzz([name], per_dialect, seed, time_bound=time_bound)
    return name, counts, failures


class _Serial:
    """A pool of one: the dialects in this process, one after another."""

    def __enter__(self) -> _Serial:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def imap(self, fn: Callable[[str], Any], items: list[str]) -> Iterator[Any]:
        return map(fn, items)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-dialect", type=int, default=20000, help="inputs per dialect")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dialect", action="append", help="only these dialects (repeatable)")
    ap.add_argument("--time-bound", type=float, default=5.0, help="seconds one whole parse may take")
    ap.add_argument("--max-failures", type=int, default=50, help="stop printing after this many")
    ap.add_argument("--minimise", action="store_true", help="print a minimised text for each failure")
    ap.add_argument("--jobs", type=int, default=1, help="dialects fuzzed at once, one process each")
    ap.add_argument("--linear", type=int, default=0, metavar="COUNT",
                    help="also time COUNT marker-dense texts through auto (a quarter as many per dialect) "
                         "at n and 4n (tests/linear.py)")
    args = ap.parse_args(argv)
    names = args.dialect or sorted({get_dialect(n).name for n in dialect_names()})
    failed = _linear(names, args.linear, args.seed) if args.linear else 0
    shown = [0]

    def show(f: Failure) -> None:
        shown[0] += 1
        if shown[0] <= args.max_failures:
            print("FAIL", f, flush=True)
            if args.minimise and len(f.text) < 20000:
                print(f"  minimised: {minimise(f, args.time_bound)!r}", flush=True)

    start = time.perf_counter()
    total = Counter()
    run = functools.partial(_one_dialect, per_dialect=args.per_dialect, seed=args.seed, time_bound=args.time_bound)
    with multiprocessing.get_context("spawn").Pool(args.jobs) if args.jobs > 1 else _Serial() as pool:
        for name, counts, failures in pool.imap(run, names):
            for f in failures:
                show(f)
            total.update(counts)
            failed += len(failures)
            print(f"{name:20} {counts[name]:7} inputs, {counts['auto']:6} through auto, {len(failures)} failures",
                  flush=True)
    print(f"total: {sum(total.values()) - total['known']} parses ({total['auto']} through auto), {failed} failures, "
          f"{total['known']} known (tests/fuzz.py KNOWN), "
          f"{time.perf_counter() - start:.0f} s")
    return 1 if failed else 0


def _linear(names: list[str], count: int, seed: int) -> int:
    """The marker-dense growth check (``tests/linear.py``); its failures."""
    from . import linear  # (it imports this module's tools)

    start = time.perf_counter()
    checked, failed = linear.run(names, count, seed, on_failure=lambda why: print("FAIL linear", why, flush=True))
    print(f"linear: {checked} marker-dense texts, whole and streamed, {failed} over {linear.LIMIT}x at 4n, "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(main())
