"""Client grammars compiled in a child process first, off the event loop, with a time budget.

A freeform tool's grammar comes from the client and is compiled by native code (llguidance). The
bounds of ``freeform.bounds`` keep it well below where that engine is known to break; what no
bound can promise (a fault not yet found, a compile that runs long) is kept out of the gateway by
compiling each grammar not seen before in a child process first (``python -m
toolbridge.gateway.grammars``, started at the first such grammar, one per gateway process). A
grammar the child compiled is then compiled here too, on a thread of its own with four times
the child's stack (``freeform.COMPILE_STACK``), and kept: the same library, the same input and
more stack. A grammar that fails there is refused with a 400 naming the field: it does not
compile, it took longer than ``BUDGET`` (the child is killed), or the child died on it (the next
grammar starts a new one). Each outcome is kept with the grammar (``freeform.GRAMMARS``), so an
agent resending its tools does not compile again, and neither does a client resending a grammar
that failed.

Cost, measured on this code (medians of 7, 2 cores under a load of about 6): the child starts in
0.9 s, once per gateway process, at its first grammar; a new grammar then takes the child's
compile, the pipes and the compile here: the apply_patch grammar 3.4 ms against 1.3 ms in
process alone, a chain of 500 rules 56 against 15 ms, 2,000 alternatives 126 against 43 ms. A
kept grammar costs about 1 us (a dictionary look-up).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Iterable
from pathlib import Path

from ..freeform import GRAMMARS, Format, on_own_stack
from .metrics import Metrics

BUDGET = 5.0  # seconds for one compile; a grammar at the bounds takes well under 0.5
CHILD_STACK = 8 << 20  # a quarter of freeform.COMPILE_STACK: what compiles there compiles here
_ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding the package


class GrammarChecker:
    """Compiles freeform grammars for one gateway process (see the module docstring)."""

    def __init__(self, metrics: Metrics | None = None, budget: float = BUDGET, stack: int = CHILD_STACK) -> None:
        self.metrics = metrics
        self.budget = budget
        self.stack = stack  # the child's compile stack (smaller in tests, to make it fail)
        self._child: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()  # one grammar at a time through the child's pipes

    async def first_failure(self, formats: Iterable[Format]) -> tuple[Format, str] | None:
        """The first of ``formats`` whose grammar fails, and why; None when all compile."""
        for fmt in formats:
            if fmt.syntax == "text":
                continue
            kept = GRAMMARS.kept(fmt)
            error = kept[1] if kept is not None else await self._compile(fmt)
            if error:
                return fmt, error
        return None

    async def _compile(self, fmt: Format) -> str:
        if GRAMMARS.engine() is None:
            return ""  # not checked (said once in the log)
        error, outcome = await self._in_child(fmt)
        if not error:
            error = (await asyncio.to_thread(GRAMMARS.compiled, fmt, self.budget))[1]
            outcome = "error" if error else "ok"
        else:
            GRAMMARS.remember(fmt, (None, error))
        if self.metrics is not None:
            self.metrics.inc("toolbridge_grammar_compiles_total", outcome=outcome)
        return error

    async def _in_child(self, fmt: Format) -> tuple[str, str]:
        """(the child's compile error or "", the outcome: ok, error, timeout or crashed)."""
        async with self._lock:
            child = self._child
            if child is None or child.returncode is not None:
                child = self._child = await _start(self.stack)
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(json.dumps({"syntax": fmt.syntax, "definition": fmt.definition}).encode() + b"\n")
            try:
                await child.stdin.drain()
                line = await asyncio.wait_for(child.stdout.readline(), self.budget)
            except asyncio.TimeoutError:
                await self._stop(child)
                return f"compiling it took more than {self.budget:g} s", "timeout"
            except ConnectionError:
                line = b""
            if not line:
                code = await child.wait()
                self._child = None
                how = f"signal {-code}" if code < 0 else f"exit status {code}"
                return f"the grammar engine's process died compiling it ({how})", "crashed"
            error = json.loads(line)["error"]
            return error, "error" if error else "ok"

    async def _stop(self, child: asyncio.subprocess.Process) -> None:
        self._child = None
        if child.returncode is None:
            child.kill()
        await child.wait()

    async def close(self) -> None:
        if self._child is not None:
            await self._stop(self._child)


async def _start(stack: int) -> asyncio.subprocess.Process:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p))
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "toolbridge.gateway.grammars", str(stack), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, env=env)


def main() -> None:
    """The child: a grammar per line of standard input (JSON: syntax, definition), a line of
    JSON (error: "" when it compiles) per grammar on standard output; it ends with its input.
    Its argument: the stack its compiles run with."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the gateway ends it (or its input's end does)
    stack = int(sys.argv[1])
    for line in sys.stdin.buffer:
        asked = json.loads(line)
        fmt = Format(asked["syntax"], asked["definition"])
        _, error = on_own_stack(lambda: GRAMMARS.build(fmt), stack)
        sys.stdout.write(json.dumps({"error": error}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
