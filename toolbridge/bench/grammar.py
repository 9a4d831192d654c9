"""``toolbridge bench --grammar``: what compiling a request's constraint costs, per tool count.

For 1, 16 and 128 tools (each with five parameters: a string, an integer, an enum, an array of
numbers and a nested object; agents offer between a handful and a hundred), in the dialects that
declare a shape: the time to compile the constraint and write each format from nothing, and the
time of a request that offers a tool set seen before (``grammar_for``'s cache, keyed by the tool
set: the key is the tools' canonical JSON, so the figure includes serialising them). Where
xgrammar is installed, the time its own compiler takes for our structural tag and EBNF is shown
beside ours: what an upstream pays once per new tool set. Medians of repeated runs.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from ..constrain import cache
from ..dialects import get_dialect

COUNTS = (1, 16, 128)
DIALECTS = ("hermes", "qwen3_coder", "glm45", "kimi_k2", "llama3_json", "pythonic")
FORMATS = ("structural-tag", "gbnf", "lark")


def tools(n: int) -> list[dict[str, Any]]:
    """``n`` distinct tools of five parameters each."""
    return [{"type": "function", "function": {
        "name": f"tool_{i}", "description": f"Tool number {i}.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "count": {"type": "integer"},
            "mode": {"enum": ["fast", "slow", f"m{i}"]},
            "weights": {"type": "array", "items": {"type": "number"}, "maxItems": 8},
            "options": {"type": "object", "properties": {"deep": {"type": "boolean"},
                                                         "label": {"type": "string"}},
                        "required": ["deep"]}},
            "required": ["path", "count"]}}} for i in range(n)]


def _median_us(run: Callable[[], Any], repeats: int, per: int = 1) -> float:
    """Median over ``repeats`` of the mean time of ``per`` runs back to back."""
    times = []
    for _ in range(repeats):
        gc.collect(1)  # what earlier runs left; a full collection walks the whole heap (seconds in a test process)
        start = time.perf_counter_ns()
        for _ in range(per):
            run()
        times.append((time.perf_counter_ns() - start) / per)
    return statistics.median(times) / 1000


def _xgrammar() -> Any:
    try:
        import xgrammar
    except ImportError:
        return None
    info = xgrammar.TokenizerInfo([bytes([b]).decode("latin1") for b in range(256)])
    return xgrammar, xgrammar.GrammarCompiler(info, cache_enabled=False)


def measure(repeats: int, counts: tuple[int, ...] = COUNTS) -> list[dict[str, Any]]:
    engine = _xgrammar()
    rows = []
    for name in DIALECTS:
        dialect = get_dialect(name)
        if dialect.shape is None:
            continue
        for n in counts:
            offered = tools(n)
            row: dict[str, Any] = {"dialect": name, "tools": n}
            for fmt in FORMATS:
                def cold(fmt: str = fmt) -> Any:
                    cache.clear()
                    return cache.grammar_for(dialect, offered, fmt, tool_choice="required")
                row[fmt] = _median_us(cold, repeats)
            cache.grammar_for(dialect, offered, "structural-tag", tool_choice="required")
            fresh = json.loads(json.dumps(offered))  # as a new request parses them
            row["cached"] = _median_us(lambda: cache.grammar_for(dialect, fresh, "structural-tag",
                                                                 tool_choice="required"), repeats, 50)
            if engine is not None:
                xgr, compiler = engine
                tag = json.dumps(cache.grammar_for(dialect, offered, "structural-tag", tool_choice="required"))
                ebnf = cache.grammar_for(dialect, offered, "gbnf", tool_choice="required")
                row["xgrammar tag"] = _median_us(lambda: compiler.compile_grammar(
                    xgr.Grammar.from_structural_tag(tag)), max(3, repeats // 4))
                row["xgrammar ebnf"] = _median_us(lambda: compiler.compile_grammar(
                    xgr.Grammar.from_ebnf(ebnf)), max(3, repeats // 4))
            rows.append(row)
    cache.clear()
    return rows


def report(rows: list[dict[str, Any]]) -> str:
    cols = ["structural-tag", "gbnf", "lark", "cached"]
    extra = [c for c in ("xgrammar tag", "xgrammar ebnf") if rows and c in rows[0]]
    head = f"{'dialect':<13}{'tools':>6}" + "".join(f"{c:>16}" for c in cols + extra) + f"{'cached/cold':>13}"
    lines = ["grammar compile time per request, microseconds (median; tool_choice required)", head]
    for r in rows:
        ratio = r["cached"] / r["structural-tag"]
        lines.append(f"{r['dialect']:<13}{r['tools']:>6}" + "".join(f"{r[c]:>16.0f}" for c in cols + extra)
                     + f"{ratio:>12.3f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="toolbridge bench --grammar", description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--counts", default=",".join(map(str, COUNTS)),
                        help="tool counts, comma-separated (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    rows = measure(args.repeats, tuple(int(n) for n in args.counts.split(",")))
    print(json.dumps(rows, indent=2) if args.json else report(rows))
    return 0
