"""A real model on a real llama.cpp server (``make test-model`` fetches and installs them).

One llama-cpp-python server process for the whole session (the model is loaded once), and one
``toolbridge serve`` process per configuration, in front of it. Where the model or the server
is missing the tests skip, saying which make target sets them up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from toolbridge.bench.model import LlamaServer, Serve, missing, template_path


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "model: runs a real model on llama.cpp (make test-model sets it up)")


@pytest.fixture(scope="session")
def llama() -> Iterator[LlamaServer]:
    reason = missing()
    if reason:
        pytest.skip(reason)
    with LlamaServer() as server:
        yield server


@pytest.fixture(scope="session")
def serve(llama: LlamaServer) -> Iterator[Callable[..., Serve]]:
    """``serve(*flags)``: a gateway with those flags in front of the model (one per set of flags,
    kept for the session)."""
    running: dict[tuple[str, ...], Serve] = {}

    def start(*flags: str) -> Serve:
        if flags not in running:
            args = [a.replace("{template}", str(template_path())) for a in flags]
            running[flags] = Serve(llama.url, *args, log=llama.cache / "toolbridge-serve.log").__enter__()
        return running[flags]

    yield start
    for gateway in running.values():
        gateway.__exit__()
