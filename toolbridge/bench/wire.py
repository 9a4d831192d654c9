"""Whole calls against ``--stream-arguments``: what sending each call whole costs a stream.

The benchmark's agent turn (``script``: content, then an ``edit_file`` call in 4-character
deltas), with the small call (~300 characters) and with a 33,000-character ``new_string``,
translated by the chat front in process, each way in the same run:

- per chunk: microseconds per upstream chunk over the whole turn (decoding the chunk, the
  pipeline's events, the front's bytes), the median of ``repeat`` runs;
- the call's last character to its bytes: how long the upstream chunk that ends the call (the
  one whose text completes it for the parser: the chunk a whole call comes out of) takes to
  translate. Whole, that chunk releases the call: the time covers checking it and writing its
  one delta with all its arguments. Streamed as written, the arguments went out before and the
  chunk only sends its last piece. Median and 90th percentile of the runs. (The same time on
  the wire, through the gateway's sockets at the top stream level beside the floor's, is a row
  of the gateway benchmark's goals: ``report._wire_goal``.)

Every stream is checked (the text, the call and its arguments, the finish reason), and in the
whole mode the call must come in one delta, out of that chunk.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import orjson

from ..gateway.fronts.chat import ChatFront
from ..gateway.streaming import AnswerStream
from ..gateway.turn import Settings, plan_turn
from .fronts import print_figures
from .script import REQUEST, Script, assemble, check_message

SIZES = ("small", "33k")
MODES = {"whole": False, "stream_arguments": True}  # mode -> --stream-arguments


def run_once(script: Script, stream_arguments: bool, last: int) -> tuple[float, float, str | None]:
    """One turn: seconds over every chunk, seconds of chunk ``last`` (the one that ends the
    call), a problem."""
    total, ends, out = translate(script, stream_arguments, last)
    return total, ends, _problem(script, out, last, stream_arguments)


def translate(script: Script, stream_arguments: bool, last: int) -> tuple[float, float, list[bytes]]:
    """One turn through the chat front: seconds over every chunk, seconds of chunk ``last``,
    the bytes of each chunk (then the closing ones)."""
    front = ChatFront()
    plan = plan_turn(front.turn(dict(REQUEST, stream=True)), Settings(script.dialect, stream_arguments=stream_arguments))
    encoder = front.stream(AnswerStream(plan))
    chunks = [orjson.loads(template % (b"chatcmpl-bench",)) for template in script.chunks]
    out: list[bytes] = []
    ends = 0.0
    started = time.perf_counter()
    for i, chunk in enumerate(chunks):
        if i == last:
            before = time.perf_counter()
            out.append(encoder.feed_sse(chunk))
            ends = time.perf_counter() - before
        else:
            out.append(encoder.feed_sse(chunk))
    out.append(encoder.finish_sse())
    return time.perf_counter() - started, ends, out


def ending(script: Script) -> int:
    """The index of the upstream chunk a whole call comes out of (``Script.call_source``)."""
    last = script.call_source()
    return len(script.chunks) - 1 if last is None else last


def _problem(script: Script, out: list[bytes], last: int, stream_arguments: bool) -> str | None:
    problem = check_message(assemble(_chunks(b"".join(out))), script.dialect, True, script.size)
    if problem or stream_arguments:
        return problem
    parts, there = _call_parts(_chunks(b"".join(out))), _call_parts(_chunks(out[last]))
    if len(parts) != 1 or len(there) != 1:
        return f"the call came in {len(parts)} deltas, {len(there)} of them from the chunk that ends it"
    return None


def _chunks(sse: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(e[6:]) for e in sse.split(b"\n\n") if e.startswith(b"data: {")]


def _call_parts(chunks: list[dict[str, Any]]) -> list[Any]:
    return [p for c in chunks for ch in c["choices"] for p in ch["delta"].get("tool_calls") or ()]


def measure(dialect: str = "hermes", quick: bool = False) -> dict[str, Any]:
    """``{"dialect", "sizes": {size: {"chunks", mode: {"us_per_chunk", "end_us"}}}, "problems"}``."""
    figures: dict[str, Any] = {"dialect": dialect, "sizes": {}, "problems": []}
    for size in SIZES:
        script = Script.build(dialect, size)
        last = ending(script)
        repeat = (3 if quick else 15) if size != "small" else (20 if quick else 200)
        runs: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
        for _ in range(repeat):  # the modes interleaved: the machine's drift falls on both
            for mode, stream_arguments in MODES.items():
                total, ends, problem = run_once(script, stream_arguments, last)
                runs[mode].append((total, ends))
                if problem and len(figures["problems"]) < 4:
                    figures["problems"].append(f"{size} {mode}: {problem}")
        row: dict[str, Any] = {"chunks": len(script.chunks), "ending_chunk": last}
        for mode, pairs in runs.items():
            ends = sorted(e for _, e in pairs)
            row[mode] = {"us_per_chunk": round(1e6 * statistics.median(t for t, _ in pairs) / len(script.chunks), 2),
                         "end_us": round(1e6 * statistics.median(ends), 1),
                         "end_p90_us": round(1e6 * ends[min(len(ends) - 1, int(0.9 * len(ends)))], 1)}
        figures["sizes"][size] = row
    return figures


def report(figures: dict[str, Any]) -> str:
    lines = [f"Whole calls against --stream-arguments ({figures['dialect']}, chat front, in process)"]
    for size, row in figures["sizes"].items():
        whole, streamed = row["whole"], row["stream_arguments"]
        lines.append(f"  {size} call ({row['chunks']} upstream chunks): per chunk {whole['us_per_chunk']:.2f} us whole, "
                     f"{streamed['us_per_chunk']:.2f} us streamed ({whole['us_per_chunk'] / streamed['us_per_chunk']:.2f}x); "
                     f"last character to bytes {whole['end_us']:.1f} us whole (p90 {whole['end_p90_us']:.1f}), "
                     f"{streamed['end_us']:.1f} us streamed (p90 {streamed['end_p90_us']:.1f})")
    lines += [f"  FAILED CHECK: {p}" for p in figures["problems"]]
    return "\n".join(lines)


def main(quick: bool = False) -> int:
    return print_figures(measure, report, quick)


if __name__ == "__main__":
    raise SystemExit(main())
