"""``toolbridge bench --plain --instructions``: goal 2's ratios counted, not timed.

``bench --plain`` times the floor and the gateway on a machine shared with other work, where the
same server's CPU time a request moves by a fifth between runs a second apart: that, not the
code, decides a row near the goal. This counts instead. Each server (the floor, the gateway and,
with ``--bound``, the bound) runs under valgrind's callgrind; once warmed up it answers
``--requests`` requests of each front from ``--connections`` keep-alive connections, and the
figure is the instructions its process executed a request (user space: the system calls, the
same for the floor and the gateway, are not counted). The same tree gives the same figures
within about one percent whatever else the machine runs.

A front's ratio is the floor's instructions a request over the front's: the ratio of the rates
where the CPU limits them and an instruction costs the same in both (the gateway's, more of them
Python's, cost a little more: timed ratios have run below these). A large copy counts one
instruction a byte and costs far less on the CPU: the 33k rows read lower counted than timed.
Every answer's status is checked, and each front's first answer as ``bench --plain`` checks it.

Needs valgrind; without it, says so and exits 2. Slow: a server runs some fifty times slower
under it (about sixteen minutes for the whole table with ``--bound``, two minutes for ``--quick``).
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.client import HTTPConnection
from typing import Any

from .gateway import SERVERS, wait_port
from .load import check_answer, plain_request
from .ports import free_port

HEADERS = {"content-type": "application/json"}  # (as ``load plain`` sends them)
WARM = 100  # requests each front answers before it is counted
START_SECONDS = 300  # a server under valgrind starts some fifty times slower


def available() -> str | None:
    """Why the count cannot run here (None: it can)."""
    missing = [tool for tool in ("valgrind", "callgrind_control") if shutil.which(tool) is None]
    return f"needs {' and '.join(missing)} (valgrind's callgrind counts the instructions)" if missing else None


def send(port: int, path: str, body: bytes, count: int, connections: int) -> tuple[bytes | None, list[str]]:
    """``count`` requests over ``connections`` keep-alive connections, one after another on each:
    the first answer, and what went wrong (a status other than 200, a broken connection)."""
    first: list[bytes] = []
    problems: list[str] = []

    def client(n: int) -> None:
        conn = HTTPConnection("127.0.0.1", port, timeout=START_SECONDS)
        try:
            for _ in range(n):
                conn.request("POST", path, body, HEADERS)
                resp = conn.getresponse()
                data = resp.read()
                if resp.status != 200:
                    problems.append(f"{path}: {resp.status} {data[:200]!r}")
                elif not first:
                    first.append(data)
        except OSError as exc:
            problems.append(f"{path}: {exc!r}")
        finally:
            conn.close()

    shares = [count // connections + (k < count % connections) for k in range(connections)]
    threads = [threading.Thread(target=client, args=(n,)) for n in shares if n]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return (first[0] if first else None), problems


class Counted:
    """One server process under callgrind: started, its count zeroed and read."""

    def __init__(self, argv: list[str], port: int, out: str) -> None:
        self.out = out
        self.proc = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}.%p",
                                      sys.executable, *argv], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_port(port, self.proc, START_SECONDS)
        except RuntimeError:
            self.stop()
            raise

    def _control(self, *args: str) -> None:
        subprocess.run(["callgrind_control", *args, str(self.proc.pid)], capture_output=True, timeout=120, check=True)

    def zero(self) -> None:
        self._control("-z")

    def dumped(self) -> int:
        """The instructions since the last zero (a dump of the count, read back)."""
        before = set(glob.glob(f"{self.out}.{self.proc.pid}*"))
        self._control("-d")
        for _ in range(600):  # (the dump is written when valgrind next polls: shortly)
            made = set(glob.glob(f"{self.out}.{self.proc.pid}*")) - before
            total = _total(made)
            if total is not None:
                return total
            time.sleep(0.1)
        raise RuntimeError("callgrind wrote no count")

    def stop(self) -> None:
        self.proc.kill()  # (terminated, callgrind would first write a dump nobody reads)
        self.proc.wait(30)


def _total(files: set[str]) -> int | None:
    """The instructions a callgrind dump among ``files`` counts (None: none written yet): its
    ``summary`` line, the counter since the last zero, at the head of the dump (the ``totals``
    line at its end, summed from the cost lines, was seen up to two percent above it in dumps
    made after a zero: not the count)."""
    for name in files:
        with open(name, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("summary:"):
                    return int(line.split()[1])
    return None


def count_case(dialect: str, size: str, requests: int, connections: int, bound: bool, fronts: tuple[str, ...],
               server_argv: Callable[[str, int, int, str], list[str]]) -> dict[str, Any]:
    """One dialect and answer: instructions a request of the floor's chat and of each of the
    gateway's ``fronts`` (``bound``: and of the bound's), with the problems found.
    ``server_argv(server, port, upstream, dialect)``: a server's command line (``bench --plain``'s)."""
    up = free_port()
    upstream = subprocess.Popen([sys.executable, "-m", SERVERS, "upstream", "--port", str(up), "--dialect", dialect,
                                 "--args", size, "--rate", "30"], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    figures: dict[str, float] = {}
    problems: list[str] = []
    plan = [("floor", ("chat",)), ("gateway", fronts), *([("bound", fronts)] if bound else [])]
    with tempfile.TemporaryDirectory(prefix="toolbridge-cg-") as tmp:
        try:
            wait_port(up, upstream, 60)
            for server, asked in plan:
                port = free_port()
                counted = Counted(server_argv(server, port, up, dialect), port, os.path.join(tmp, server))
                try:
                    for front in asked:
                        path, body = plain_request(front, dialect, size)
                        _, warm_problems = send(port, path, body, WARM, connections)
                        counted.zero()
                        first, failed = send(port, path, body, requests, connections)
                        total = counted.dumped()
                        name = "floor" if server == "floor" else (f"bound {front}" if server == "bound" else front)
                        figures[name] = total / requests
                        checked = argparse.Namespace(front=front, args=size, dialect=dialect,
                                                     translated=server != "floor")
                        wrong = check_answer(first, checked) if first is not None else "no answer"
                        problems += [f"{dialect} {size} {name}: {p}" for p in [*warm_problems, *failed, wrong] if p]
                finally:
                    counted.stop()
        finally:
            upstream.terminate()
            upstream.wait(30)
    return {"dialect": dialect, "size": size, "instructions": figures, "problems": problems}


def rows(case: dict[str, Any], fronts: tuple[str, ...], goal: float) -> list[dict[str, Any]]:
    """Each front's instructions a request, the floor's, and their ratio with its verdict."""
    counts = case["instructions"]
    floor = counts.get("floor")
    out = []
    for front in fronts:
        own, bound = counts.get(front), counts.get(f"bound {front}")
        ratio = floor / own if floor and own else None
        out.append({"dialect": case["dialect"], "size": case["size"], "front": front, "instructions": own,
                    "floor_instructions": floor, "ratio": ratio,
                    "bound_ratio": floor / bound if floor and bound else None,
                    "ratio_ok": None if ratio is None else ratio >= goal})
    return out


# The table's columns: heading, width (negative: aligned left)
COLUMNS = (("dialect", -12), ("answer", -8), ("front", -11), ("k instr", 9), ("floor", 9), ("ratio", 8),
           ("", 2), ("goal", -10), ("", -6), ("bound", 8))


def _line(cells: list[str]) -> str:
    return "".join(f"{c:<{-w}}" if w < 0 else f"{c:>{w}}" for c, (_, w) in zip(cells, COLUMNS)).rstrip()


def _k(count: float | None) -> str:
    return "" if count is None else f"{count / 1000:,.1f}"


def _x(ratio: float | None) -> str:
    return "" if ratio is None else f"{ratio:.3f}x"


def report(table: list[dict[str, Any]], requests: int, connections: int, goal: float) -> str:
    """The counted table as text: each row's counts, ratio and verdict, the bound's ratio beside
    where it was counted, and how many goals were met."""
    bound = any(r["bound_ratio"] is not None for r in table)
    lines = ["toolbridge bench --plain --instructions: non-streamed requests, each server under callgrind",
             f"{requests} requests a front over {connections} keep-alive connections after a warm-up; instructions "
             "a request (user space); ratio: the floor's over the front's (the ratio of the rates where the CPU "
             "limits them)", "", "  " + _line([name for name, _ in COLUMNS][: None if bound else -1])]
    for r in table:
        verdict = "" if r["ratio_ok"] is None else ("PASS" if r["ratio_ok"] else "FAIL")
        lines.append("  " + _line([r["dialect"], r["size"], r["front"], _k(r["instructions"]),
                                   _k(r["floor_instructions"]), _x(r["ratio"]), "", f">= {goal}x", verdict,
                                   _x(r["bound_ratio"])]))
    if bound:
        lines += ["", "bound: the floor's instructions over the least translation's (toolbridge.bench.bound)"]
    met = [r["ratio_ok"] for r in table if r["ratio_ok"] is not None]
    return "\n".join([*lines, "", f"goals met: {sum(met)} of {len(met)}"])
