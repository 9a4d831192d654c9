"""Running the gateway: event loop choice, logging, and several worker processes.

Workers share the listening port with SO_REUSEPORT; the kernel spreads connections over them, one
event loop per process, so the gateway scales across cores. Each worker keeps its own metrics
(scrape each, or run one worker per container behind the load balancer you already have). The
master restarts a worker that dies and takes them all down on SIGTERM (``supervisor``); one
process or each worker stops gracefully on SIGTERM or SIGINT (``app.serve``).
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import logging
import secrets
import signal
import sys
from dataclasses import replace
from pathlib import Path

from . import allocator
from .config import GatewayConfig
from .logline import Formatter, LineHandler
from .state import sqlite_path
from .app import serve
from .supervisor import Supervisor

PR_SET_PDEATHSIG = 1  # Linux prctl: a signal for this process when its parent dies


def run(config: GatewayConfig) -> int:
    """Serve until SIGTERM or SIGINT; returns the exit code."""
    config.check()
    if config.workers == 1:
        _run_one(config, reuse_port=False)
        return 0
    # The default store's file outlives this start only if its records can be read again: with
    # a secret of this start alone (no --responses-secret), nothing in it can, so it goes at exit.
    scratch = sqlite_path(config.state_url()) if not config.state and not config.responses_secret else None
    if not config.responses_secret:  # one sealing key for every worker of this start
        config = replace(config, responses_secret=secrets.token_urlsafe(32))
    _configure_logging(config)
    worker = functools.partial(_run_one, config, True)
    try:
        return Supervisor(worker, config.workers, config.graceful_timeout).run()
    finally:
        if scratch is not None:
            for suffix in ("", "-wal", "-shm"):
                Path(scratch + suffix).unlink(missing_ok=True)


def _configure_logging(config: GatewayConfig) -> None:
    """Log lines to standard error. Records skip what the format does not show (caller,
    thread, process): the gateway logs one line per request, and these lookups cost a third
    of it. Run in each worker: a spawned process does not inherit the configuration."""
    handler = LineHandler(sys.stderr)
    handler.setFormatter(Formatter())
    logging.basicConfig(level=config.log_level.upper(), handlers=[handler])
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    logging._srcfile = None  # the optimisation the logging documentation describes


def _run_one(config: GatewayConfig, reuse_port: bool, restarts: int = 0) -> None:
    """One gateway process (the only one, or a worker: ``restarts`` made before it)."""
    if reuse_port:
        _die_with_parent()
    _configure_logging(config)
    allocator.tune()
    try:
        _loop_runner()(serve(config, reuse_port=reuse_port, restarts=restarts))
    except KeyboardInterrupt:  # a second SIGINT while draining
        pass


def _die_with_parent() -> None:
    """Have Linux send this worker SIGTERM when the master dies, even by SIGKILL: no worker
    keeps serving the port without a master to restart it. Elsewhere nothing is done."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def _loop_runner():  # type: ignore[no-untyped-def]
    try:
        import uvloop
    except ImportError:  # uvloop is not available everywhere (Windows): plain asyncio works too
        return asyncio.run
    return uvloop.run
