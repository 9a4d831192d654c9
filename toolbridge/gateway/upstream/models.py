"""The upstream's model names, and the name each request is sent under.

Agents ask for the model they were made for (Claude Code for a Claude, Codex for a GPT) and
servers such as vLLM, Ollama and LM Studio refuse a name they do not serve. So the gateway
learns the names the upstream serves from its ``GET /v1/models`` (``data[].id``, the listing
vLLM, SGLang, llama.cpp, Ollama, LM Studio and OpenAI share) and resolves each request's name
(``resolve``), in this order:

1. the upstream lists no models (no such endpoint: 404, 405 or 501; an answer that is not a
   listing, or an empty one; or none came yet): the name passes unchanged, as the upstream's own business;
2. a name the upstream serves passes unchanged;
3. the first ``--model-alias PATTERN=NAME`` whose glob (``fnmatch``, case-sensitive) matches it
   gives NAME;
4. with no alias matching and exactly one model served: that model (names that share their
   ``root``, vLLM's ``--served-model-name a b``, are one model, sent as its first name);
5. else ``RequestError`` 404 ``model_not_found``, naming the served models and the flag.

A request without a model is resolved as the empty name (``*`` matches it). Each mapping is
logged once per (name, served) pair and counted (``toolbridge_models_mapped_total``, labelled by
how and by the served name: a client's names would make the labels unbounded).

The listing is fetched off the request path: at start (``start``, waited for ``START_WAIT``
seconds at most), every ``--models-refresh`` seconds by a background task (not from
llama-cpp-python's server, once its listing says it is that: its models are fixed when it starts,
and any request that reaches it ends the stream it is writing, cut short), and when the
upstream answers a request 404 (``refresh``: the pipeline then asks once more if the name now
maps elsewhere). Fetches are coalesced: one at a time, later callers share it. An upstream that
cannot be reached keeps the last listing. With ``--workers``, each process keeps its own.
"""

from __future__ import annotations

import asyncio
import functools
import fnmatch
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import orjson

from ...errors import ConfigError
from ..http.client import UpstreamError, UpstreamPool
from ..metrics import Metrics
from ..turn import RequestError
from .kind import kind_of

log = logging.getLogger("toolbridge.gateway")

START_WAIT = 5.0  # seconds the start waits for the first listing; requests then pass names on
FETCH_WAIT = 10.0  # seconds a later fetch (background or after a 404) may take
ABSENT = (404, 405, 501)  # the answers of a server without the endpoint
FIXED = frozenset({"llama-cpp-python"})  # kinds whose listing is not fetched again (module docstring)
TOLD = 256  # mappings remembered as logged (names come from clients: bounded)
LISTED = 20  # served names an error message names at most
FLAG = "--model-alias PATTERN=NAME (TOOLBRIDGE_MODEL_ALIAS)"


@dataclass(frozen=True)
class Alias:
    pattern: str  # a glob over the requested name
    name: str  # the model it is sent as


def parse_aliases(text: str) -> tuple[Alias, ...]:
    """``PATTERN=NAME`` entries separated by commas (the flag's, joined); raises ConfigError."""
    aliases = []
    for entry in filter(None, (part.strip() for part in text.split(","))):
        pattern, sep, name = entry.partition("=")
        if not sep or not pattern.strip() or not name.strip():
            raise ConfigError(f"--model-alias must be PATTERN=NAME (e.g. 'claude-*=qwen3-coder'), "
                              f"not {entry!r}")
        aliases.append(Alias(pattern.strip(), name.strip()))
    return tuple(aliases)


@functools.lru_cache(maxsize=256)  # a request's: the few names served, made once each
def model_field(name: str) -> tuple[bytes, bytes]:
    """The ``x-toolbridge-model`` header field naming the model a request was sent to. A name
    passed on from a client may hold anything: what is not visible ASCII (and ``%``) is
    percent-encoded."""
    return b"x-toolbridge-model", quote(name, safe=_VISIBLE).encode()


_VISIBLE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "%")


def listed_names(body: bytes) -> tuple[tuple[str, ...], str | None] | None:
    """The model ids of a ``/v1/models`` answer, in its order, and the one model they name when
    they are the names of one (a single id, or ids sharing one ``root``, the weights' path
    vLLM lists with each of its served names); None when the answer is not a listing."""
    try:
        listing: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        return None
    models = [m for m in data if isinstance(m, dict) and isinstance(m.get("id"), str) and m["id"]]
    names = tuple(dict.fromkeys(m["id"] for m in models))
    roots = {m["root"] if isinstance(m.get("root"), str) and m["root"] else m["id"] for m in models}
    return names, names[0] if len(roots) == 1 else None


class Models:
    """The served names of one upstream and the aliases; one per gateway process."""

    def __init__(self, aliases: tuple[Alias, ...], refresh: float, metrics: Metrics) -> None:
        self.aliases = aliases
        self.every = refresh  # seconds between background fetches (0: none after the start)
        self.served: tuple[str, ...] | None = None  # None: no listing (names pass through)
        self.only: str | None = None  # the name to send when the served names are one model's
        self.fetches = 0  # listings asked for (tests; the log)
        # The upstream's kind (``upstream.kind``): given (``--upstream-kind``) or read from the
        # listing; one in FIXED is not fetched from in the background.
        self.kind: str | None = None
        self._metrics = metrics
        self._told: set[tuple[str, str]] = set()
        self._fetch: asyncio.Task[None] | None = None
        self._ticker: asyncio.Task[None] | None = None
        self._said = ""  # the last listing outcome logged, to log each change once
        # Called with each answer (target, status, body, header fields): the constrainer learns
        # the upstream's kind from the same listing.
        self.listener: Callable[[str, int, bytes, list[tuple[bytes, bytes]]], None] | None = None

    # ------------------------------------------------------------ resolution

    def resolve(self, name: str | None) -> str | None:
        """The name to send for a request's ``name`` (None: none to send); raises RequestError
        (404) when the upstream serves several models, none of them this one, and no alias matches."""
        served = self.served
        if served is None or (name is not None and name in served):
            return name
        asked = name or ""
        for alias in self.aliases:
            if fnmatch.fnmatchcase(asked, alias.pattern):
                return self._mapped(asked, alias.name, "alias")
        if self.only is not None:
            return self._mapped(asked, self.only, "only")
        shown = ", ".join(repr(n) for n in served[:LISTED]) + (" ..." if len(served) > LISTED else "")
        what = f"model {asked!r:.200} is not" if asked else "a request without a model is not"
        raise RequestError(f"{what} served by the upstream, which serves {len(served)} models ({shown}): "
                           f"send one of them, or map names to one with {FLAG}",
                           status=404, type="not_found_error", param="model",
                           code="model_not_found")

    def _mapped(self, asked: str, served: str, how: str) -> str:
        self._metrics.inc("toolbridge_models_mapped_total", how=how, model=served)
        if (asked, served) not in self._told:
            if len(self._told) >= TOLD:
                self._told.clear()
            self._told.add((asked, served))
            why = "the alias" if how == "alias" else "the only model the upstream serves"
            log.info("model %r is sent as %r (%s)", asked[:200], served, why)
        return served

    # ------------------------------------------------------------ the listing

    async def start(self, pool: UpstreamPool, target: str, headers: list[tuple[bytes, bytes]]) -> None:
        """The first listing, waited for ``START_WAIT`` seconds at most; then the background
        refresh every ``self.every`` seconds."""
        try:
            await asyncio.wait_for(asyncio.shield(self._shared(pool, target, headers)), START_WAIT)
        except asyncio.TimeoutError:
            log.warning("the upstream's model list did not come within %g s: names pass through "
                        "until it does", START_WAIT)
        if self.every > 0:
            self._ticker = asyncio.get_running_loop().create_task(self._tick(pool, target, headers))

    async def refresh(self, pool: UpstreamPool, target: str, headers: list[tuple[bytes, bytes]]) -> None:
        """A new listing now (an upstream 404: a model may have gone or come), shared with a
        fetch already under way, waited for ``FETCH_WAIT`` seconds at most."""
        try:
            await asyncio.wait_for(asyncio.shield(self._shared(pool, target, headers)), FETCH_WAIT)
        except asyncio.TimeoutError:
            pass  # the listing stays as it was; the fetch goes on in the background

    async def close(self) -> None:
        for task in (self._ticker, self._fetch):
            if task is not None and not task.done():
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    pass

    @property
    def fixed(self) -> bool:
        """The upstream's listing is not fetched in the background (its kind is in FIXED)."""
        return self.kind in FIXED

    async def _tick(self, pool: UpstreamPool, target: str, headers: list[tuple[bytes, bytes]]) -> None:
        while not self.fixed:
            await asyncio.sleep(self.every)
            if not self.fixed:
                await self.refresh(pool, target, headers)

    def _shared(self, pool: UpstreamPool, target: str,
                headers: list[tuple[bytes, bytes]]) -> asyncio.Task[None]:
        if self._fetch is None or self._fetch.done():
            self._fetch = asyncio.get_running_loop().create_task(self._get(pool, target, headers))
        return self._fetch

    async def _get(self, pool: UpstreamPool, target: str, headers: Iterable[tuple[bytes, bytes]]) -> None:
        self.fetches += 1
        try:
            async with pool.request("GET", target, headers) as up:
                body, status, fields = await up.read(1 << 22), up.status, up.headers
        except UpstreamError as exc:
            self._say(f"the upstream's model list could not be fetched ({exc}); "
                      f"{'names pass through' if self.served is None else 'the last one is kept'}")
            return
        if self.listener is not None:
            self.listener(target, status, body, fields)
        if status == 200 and self.kind is None:
            self.kind = kind_of(body, fields)
            if self.fixed:
                log.info("the upstream is llama-cpp-python's server: its model list is not fetched again "
                         "(but after a 404): it is fixed when the server starts, and a request ends "
                         "the stream the server is writing")
        listed = listed_names(body) if status == 200 else None
        names = listed[0] if listed is not None else None
        if status in ABSENT or (status == 200 and not names):
            self.served = None  # an empty listing too: the upstream may still take a name
            self._say(f"the upstream lists no models ({target}: {status}): model names pass through unchanged")
        elif names is None:  # 401, 5xx ...: not an answer about the endpoint
            self._say(f"the upstream's model list answered {status}; "
                      f"{'names pass through' if self.served is None else 'the last one is kept'}")
        else:
            assert listed is not None
            self.served, self.only = listed
            self._say(f"the upstream serves {len(names)} model(s): {', '.join(names)[:500]}")

    def _say(self, message: str) -> None:
        if message != self._said:
            self._said = message
            log.info("%s", message)
