"""CanIToolCall over toolbridge: the suite's fixtures through the library, and the project's row.

CanIToolCall (``pip install canitoolcall``) replays recorded raw model outputs, 469 fixtures in 9
model families, through each engine's own parser and judges every parse against the expected one
(``canitoolcall.checks``). This module is toolbridge's side of it, shared by
``tests/test_canitoolcall.py`` and ``make canitoolcall``:

- ``PINNED``: each fixture's family (and reference model) to the toolbridge dialect that reads it;
  ``auto`` reads the same fixture with only the model's name as a hint, as the gateway does;
- a fixture is parsed whole (``parse``) and streamed (``StreamParser``, its events through the
  ``ChunkEncoder`` and the deltas folded the way an OpenAI client folds them). No tokenizer can be
  fetched here, so streams are split over characters, finer than any token split: one character
  a delta (``char:0``) and seeded groups of 1 to 8 characters (``char:1`` ... ``char:5``,
  the suite's own ``canitoolcall.chunking`` ids);
- a case's status is the worst over every check of every parse. The suite does not count its
  ``char`` splits toward an engine's status (an engine never splits a token); here they count,
  since they are the only streams there are.

    python -m tests.canitoolcall_run [--family SLUG ...] [--list] [--full]
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from collections import Counter
from collections.abc import Iterable
from typing import Any

try:
    import canitoolcall  # noqa: F401
except ImportError as exc:  # a test dependency (the `test` extra), not the library's
    raise ImportError("CanIToolCall is not installed: pip install 'canitoolcall>=0.1.1' "
                      "(make canitoolcall installs it with the test extra)") from exc
from canitoolcall.adapters.base import ReplayInput
from canitoolcall.checks import run_checks
from canitoolcall.chunking import ChunkStrategy, split_text
from canitoolcall.fixtures import Fixture, load_fixtures
from canitoolcall.pytest_plugin import family_for
from canitoolcall.results import Observation, ParsedToolCall, ParseResult, Status, StreamAccumulator, worst_status

from toolbridge import ChunkEncoder, ConfigError, StreamParser, parse
from toolbridge.dialects import get_dialect

# The suite's families to toolbridge's dialects: (reference model, as a glob on its lower-cased
# name; dialect), the first match wins. The model decides within a family: DeepSeek's and
# Kimi's generations write different formats, GLM 4.5 puts newlines where 4.7 does not, Llama 4
# writes pythonic calls where Llama 3 writes JSON.
PINNED: dict[str, tuple[tuple[str, str], ...]] = {
    "qwen3-hermes": (("*", "hermes"),),
    "qwen3-xml": (("*", "qwen3_coder"),),
    "gpt-oss": (("*", "gpt_oss"),),
    "deepseek": (("*v3.1*", "deepseek_v31"), ("*v3.2*", "deepseek_v32"), ("*v4.1*", "deepseek_v41"),
                 ("*v4*", "deepseek_v4"), ("*", "deepseek_v3")),
    "kimi": (("*kimi-k3*", "kimi_k3"), ("*", "kimi_k2")),
    "glm": (("*glm-4.5*", "glm45"), ("*", "glm47")),
    "llama": (("*llama-4*", "llama4_pythonic"), ("*", "llama3_json")),
    "mistral": (("*", "mistral"),),
    "gemma4": (("*", "gemma4"),),
}

ENGINES = ("pinned", "auto")
SHORT_SPLITS = ("char:0", "char:1")  # one character a delta, and one seeded grouping of 1-8
FULL_SPLITS = ("char:0", "char:1", "char:2", "char:3", "char:4", "char:5")

# What CanIToolCall published for the engines (its README, snapshot 2026-09-25: pass, soft
# pass, fail over the fixtures each supports). The wheel ships the fixtures, not these numbers.
PUBLISHED: tuple[tuple[str, int, int, int], ...] = (
    ("vLLM 0.30.0", 268, 86, 115),
    ("SGLang 0.5.20", 189, 62, 197),
    ("llama.cpp a25c9865", 278, 46, 114),
    ("Ollama 7af39318", 224, 10, 27),
    ("HF transformers 5.17.0", 33, 7, 8),
)


def pinned_dialect(fixture: Fixture) -> str:
    """The toolbridge dialect of the fixture's family and reference model (``PINNED``)."""
    model = fixture.reference_model.lower()
    return next(d for glob, d in PINNED[fixture.family] if fnmatch.fnmatchcase(model, glob))


def generation_prompt(fixture: Fixture) -> str:
    """What the chat template wrote of the assistant turn before the output (the fixture's own,
    else its family's default for the model)."""
    return ReplayInput.from_fixture(fixture, family_for(fixture)).generation_prompt or ""


def options(fixture: Fixture, engine: str) -> dict[str, Any]:
    """The parser's options: reasoning split out, starting inside it where the prompt opened it
    (the pinned dialect's opener ends the prompt); ``auto`` gets the model's name as a hint."""
    opener = (get_dialect(pinned_dialect(fixture)).reasoning or ("",))[0]
    in_reasoning = bool(opener) and generation_prompt(fixture).rstrip().endswith(opener.rstrip())
    opts: dict[str, Any] = {"reasoning": True, "in_reasoning": in_reasoning}
    if engine == "auto":
        opts["model"] = fixture.reference_model
    return opts


def _tools(fixture: Fixture) -> list[dict[str, Any]] | None:
    return [dict(t) for t in fixture.tools] or None


def _dialect(fixture: Fixture, engine: str) -> str:
    return "auto" if engine == "auto" else pinned_dialect(fixture)


def _from_message(message: dict[str, Any]) -> ParseResult:
    calls = tuple(ParsedToolCall(c["function"]["name"], c["function"]["arguments"])
                  for c in message.get("tool_calls") or ())
    return ParseResult(content=message.get("content"), reasoning_content=message.get("reasoning_content"),
                       tool_calls=calls)


def parse_whole(fixture: Fixture, engine: str) -> ParseResult:
    """The whole answer, as ``toolbridge.parse`` gives it (cut when the fixture hit its limit)."""
    try:
        result = parse(fixture.raw_output, _dialect(fixture, engine), _tools(fixture), cut=fixture.truncated,
                       **options(fixture, engine))
    except ConfigError as exc:  # refused configuration (e.g. the fixture's tools): an outcome
        return ParseResult(exception=f"ConfigError: {exc}")
    return _from_message(result.message)


def parse_streamed(fixture: Fixture, engine: str, pieces: Iterable[str]) -> ParseResult:
    """The answer a client assembles from the stream: each piece fed, the events encoded as chunk
    deltas, the deltas folded as openai-python folds them."""
    try:
        parser = StreamParser(_dialect(fixture, engine), _tools(fixture), **options(fixture, engine))
    except ConfigError as exc:
        return ParseResult(exception=f"ConfigError: {exc}")
    encoder, client = ChunkEncoder(), StreamAccumulator()
    deltas: list[dict[str, Any]] = []
    for piece in pieces:
        deltas += encoder.encode(parser.feed(piece))
    deltas += encoder.encode(parser.close(cut=fixture.truncated)) + encoder.finish()
    for delta in deltas:
        client.add_openai_delta(delta)
    return client.result()


def pieces(fixture: Fixture, split: str) -> list[str]:
    """The output split by a ``char:<seed>`` strategy (seed 0: one character a delta)."""
    return split_text(fixture.raw_output, ChunkStrategy.parse(split))


def observe(fixture: Fixture, engine: str, splits: Iterable[str]) -> Observation:
    """Every parse of one fixture by one engine: whole, and streamed under each split."""
    return Observation(nonstream=parse_whole(fixture, engine),
                       streams={s: parse_streamed(fixture, engine, pieces(fixture, s)) for s in splits})


def status(fixture: Fixture, obs: Observation) -> tuple[Status, list[str]]:
    """The case's status (worst over every check of every parse, the char splits included) and
    the failing rows, described."""
    rows = run_checks(fixture, family_for(fixture), obs)
    bad = [f"{r.strategy} {r.check}: {r.detail or r.status.value}" for r in rows
           if r.status in (Status.FAIL, Status.ERROR)]
    return worst_status(r.status for r in rows), bad


def score(fixtures: list[Fixture], engine: str, splits: Iterable[str]) -> dict[str, tuple[Status, list[str]]]:
    splits = tuple(splits)
    return {f.id: status(f, observe(f, engine, splits)) for f in fixtures}


def _row(name: str, p: int, s: int, f: int, n: int | None = None) -> str:
    n = p + s + f if n is None else n
    return f"{name:28s} {n:9d} {p:5d} {s:5d} {f:5d}"


def _listed() -> Counter[str]:
    """How many fixtures the test module lists (``KNOWN``), by category (a defect's kind folded)."""
    from tests.test_canitoolcall import KNOWN  # (the one list; imported late: it imports this module)

    return Counter("deliberate" if k.category == "deliberate" else "defects" for k in KNOWN.values())


def report(fixtures: list[Fixture], splits: tuple[str, ...], listing: bool, out: Any = sys.stdout) -> None:
    print(f"CanIToolCall: {len(fixtures)} fixtures; toolbridge whole and streamed ({', '.join(splits)});"
          " engines as published (token splits)", file=out)
    print(f"{'':28s} {'fixtures':>9s} {'pass':>5s} {'soft':>5s} {'fail':>5s}", file=out)
    for engine in ENGINES:
        scored = score(fixtures, engine, splits)
        counts = Counter(st for st, _ in scored.values())
        failed = counts[Status.FAIL] + counts[Status.ERROR]
        print(_row(f"toolbridge ({engine})", counts[Status.PASS], counts[Status.SOFT_PASS], failed), file=out)
        if listing:
            for fid, (st, bad) in scored.items():
                if st in (Status.FAIL, Status.ERROR):
                    print(f"    {fid}\n        " + "\n        ".join(b[:300] for b in bad[:4]), file=out)
    if len(fixtures) < len(load_fixtures()):
        print("(the engines' rows cover every fixture: run without --family to set them side by side)", file=out)
        return
    for name, p, s, f in PUBLISHED:
        print(_row(name, p, s, f), file=out)
    listed = _listed()
    print(f"Listed in tests/test_canitoolcall.py (KNOWN): {listed['deliberate']} deliberate, "
          f"{listed['defects']} defects being fixed", file=out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", action="append", help="only this family (repeatable)")
    ap.add_argument("--list", action="store_true", help="list every failing fixture with its failing checks")
    ap.add_argument("--full", action="store_true", help="six character splits (default: per character and one seeded)")
    args = ap.parse_args(argv)
    fixtures = load_fixtures(families=args.family or None)
    report(fixtures, FULL_SPLITS if args.full else SHORT_SPLITS, args.list)
    return 0


if __name__ == "__main__":
    sys.exit(main())
