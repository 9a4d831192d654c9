"""The gateway's HTTP side: routes, authentication, the non-API endpoints, one log line.

Requests are read by ``http.server`` and the upstream is called through ``http.client``
(asyncio protocols on httptools, chosen by measurement: see benchmarks/stack/README.md). Each
API route is a front (``fronts/``) over the one ``pipeline``, which does the upstream exchange,
the tool-call work and the failures: adding an API is a front module and one line in
``_routes``. Errors here: 401 missing or wrong key (checked before the route, so every path but
``/health`` and ``HEAD /`` answers 401 without it), 404/405 unknown route, each in the error
shape of the front the path belongs to (every path under ``/v1/messages/`` is the Messages
front's), as is a failure no route handled (500); from the server layer 400, 408, 413, 414, 431 and 505
(see ``http.server.Limits``). Every answer of a route carries the request's id, which its log
line names (``requestid``). ``/health`` tells anyone ``{"status": "ok"}`` and the store's
backend and whether it answers, and the upstream, parser and the store's address only to a
client with the configured key. An upgrade request (after the key check) is a WebSocket on
``GET /v1/responses`` (``fronts.responses.socket``, each turn through the same
``pipeline.serve``), and 426 anywhere else or with ``--no-websockets``.
"""

from __future__ import annotations

import asyncio
import gc
import hmac
import importlib
import logging
import signal
import time
from functools import partial
from typing import Any

import orjson

from ..errors import ConfigError
from .config import GatewayConfig
from .fronts.chat import ChatFront
from .fronts.messages import MessagesFront
from .fronts.messages.threads import Threads
from .fronts.messages.tokens import TokenCounter
from .fronts.responses import ResponsesFront
from .fronts.responses.compacted import CompactFront
from .fronts.responses.socket import ResponsesSocket
from .http.client import UpstreamError, UpstreamPool
from .http.server import ClientDisconnected, H1Server, Limits, Request, Response, new_request_id
from .http.websocket import SocketLimits, WebSocket, accept
from .logline import access
from .metrics import Metrics
from .pipeline import JSON, OFFLOOP_REQUEST_BYTES, Pipeline
from .repair import Provenance
from .requestid import CURRENT, client_request_id
from .state import StoreUnavailable
from .turn import RequestError
from .upstream.catalog import catalog, context_of_dir
from .upstream.models import ABSENT

log = logging.getLogger("toolbridge.gateway")

CHAT = ChatFront()
MESSAGES = MessagesFront()
COUNT = MessagesFront(count=True)  # count_tokens: a Messages request without max_tokens
STORED = "/v1/responses/"
INPUT_ITEMS = "/input_items"  # GET /v1/responses/{id}/input_items
SWEEP_SECONDS = 30.0  # at most this long between sweeps of the expired stored responses
HEALTH_SECONDS = 2.0  # /health's wait for the store's answer
MESSAGES_PATHS = "/v1/messages"  # and every path under it: the Messages error shape
SOCKET = "/v1/responses"  # the one path served over WebSocket
NO_CALLS = Provenance()  # what an answer no route made reports (only read)


class Gateway:
    """One gateway process: ``await Gateway(config).start()``."""

    def __init__(self, config: GatewayConfig) -> None:
        config.check()
        self.config = config
        self.metrics = Metrics()
        self.pipeline = Pipeline(config, self.metrics)
        self.tokens = TokenCounter(config)
        self.responses = ResponsesFront(config, self.metrics)
        self.compact = CompactFront(self.responses)
        # Message threads are kept in the gateway's one store, in scopes of their own. (The
        # module's MESSAGES front gives the error shape of /v1/messages paths for any gateway.)
        threads = Threads(self.responses.store, self.responses.scopes)
        self.messages = MessagesFront(threads=threads, tokens=self.tokens)
        self._host, self._port, self._base = config.upstream_parts()
        self._window = context_of_dir(config.model_dir)  # the context window GET /v1/models gives
        self.pool: UpstreamPool | None = None
        self.server: H1Server | None = None
        self._sweeper: asyncio.TimerHandle | None = None
        self._sweeping: asyncio.Task[None] | None = None
        store = self.responses.store
        self._store_up = True  # what the last look at the store found (``/health``, the sweep)
        self.metrics.gauges.update(toolbridge_responses_stored=lambda: store.count,
                                   toolbridge_responses_stored_bytes=lambda: store.bytes,
                                   toolbridge_store_up=lambda: int(self._store_up))
        serve = self.pipeline.serve
        self._routes: dict[tuple[str, str], Any] = {
            ("POST", "/v1/chat/completions"): partial(serve, CHAT),
            ("POST", "/v1/messages"): partial(serve, self.messages),
            ("POST", "/v1/messages/count_tokens"): self._count_tokens,
            ("POST", "/v1/responses"): partial(serve, self.responses),
            ("POST", "/v1/responses/input_tokens"): self._input_tokens,
            ("POST", "/v1/responses/compact"): partial(serve, self.compact),
            ("HEAD", "/"): self._probe,
            ("GET", "/v1/models"): self._models,
            ("GET", "/health"): self._health,
            ("GET", "/metrics"): self._metrics,
        }
        self._fronts = {path: self._front(path) for _, path in self._routes}  # (``_front``, once a route)

    async def start(self, reuse_port: bool = False) -> H1Server:
        c = self.config
        self.pool = self.pipeline.pool = UpstreamPool(self._host, self._port, read_timeout=c.timeout,
                                                      connect_timeout=c.connect_timeout)
        limits = Limits(max_body=c.max_body, max_target=c.max_url, max_head=c.max_header_bytes,
                        max_headers=c.max_headers, request_timeout=c.request_timeout,
                        keepalive_timeout=c.keepalive_timeout)
        # The model list before the first request (a few seconds at most: then names pass on).
        await self.pipeline.models.start(self.pool, self._base + "/models",
                                         self.pipeline.upstream_headers(None, False))
        self.server = await H1Server.start(self.handle, c.host, c.port, limits, reuse_port=reuse_port)
        self._sweep()
        return self.server

    def _sweep(self) -> None:
        """Drop the expired stored records, and again in a while: their memory goes even
        while no request comes (the memory store's operations sweep too). The sweep runs as a
        task (a shared store's is I/O, off the loop); one at a time."""
        loop = asyncio.get_running_loop()
        if self._sweeping is None or self._sweeping.done():
            self._sweeping = loop.create_task(self._swept())
        delay = min(SWEEP_SECONDS, self.config.responses_ttl)
        self._sweeper = loop.call_later(delay, self._sweep)

    async def _swept(self) -> None:
        try:
            await self.responses.store.sweep()
            self._store_up = True
        except StoreUnavailable as exc:
            self._store_up = False
            log.warning("the store's sweep failed: %s", exc)

    async def close(self, grace: float = 1.0) -> None:
        """Stop accepting; requests in flight have ``grace`` seconds to finish."""
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self.server is not None:
            await self.server.close(grace=grace)
        if self._sweeping is not None:
            await asyncio.gather(self._sweeping, return_exceptions=True)
        await self.pipeline.models.close()
        if self.pool is not None:
            await self.pool.close()
        await self.pipeline.grammars.close()
        await self.responses.store.close()

    # ---------------------------------------------------------------- routing

    async def handle(self, req: Request, resp: Response) -> None:
        started = time.perf_counter()
        method, path = req.method, req.path
        route = self._routes.get((method, path)) if not req.upgrade else self._upgrade
        stored = route is None and path.startswith(STORED) and method in ("GET", "DELETE")
        if stored:
            route = self._stored
        status, provenance = 404, NO_CALLS
        front = self._fronts.get(path) or self._front(path)
        request_id = new_request_id()
        CURRENT.set(request_id)  # (this request's own task: its context is its own)
        resp.extra = ((b"request-id" if front is MESSAGES else b"x-request-id", request_id.encode()),)
        try:
            if (self.config.api_key and path != "/health" and (method != "HEAD" or path != "/")
                    and not self._authorised(req)):
                status = 401  # before the route: without the key, nothing is told about paths
                resp.send(401, JSON, front.error("missing or wrong API key", "authentication_error",
                                                 "invalid_api_key"))
            elif route is None:
                known = path in self._fronts or path.startswith(STORED)
                status = 405 if known else 404
                resp.send(status, JSON, front.error(f"{method} {path} is not served here",
                                                    code=str(status)))
            else:
                status, provenance = await route(req, resp)
        except ClientDisconnected:
            raise
        except Exception as exc:  # noqa: BLE001  # the boundary of the routes the pipeline does not serve
            status, provenance = self.pipeline.fail.failure(front, resp, exc)
        finally:
            endpoint = (STORED + "{id}" + (INPUT_ITEMS if path.endswith(INPUT_ITEMS) else "") if stored
                        else path if route and (not req.upgrade or path == SOCKET) else "other")
            self.metrics.answered(endpoint, status, provenance, front.name)
            client = client_request_id(req)
            access(log, f"{method} {path} {status} {request_id} calls[{provenance.header()}] "
                        f"{1000 * (time.perf_counter() - started):.1f}ms"
                        + (f" client_request_id={client}" if client else ""))  # (the text: nothing to format)

    def _front(self, path: str) -> Any:
        """The front whose error shape a path's answers take (refusals, failures): the Messages
        front for ``/v1/messages`` and every path under it, else the chat front's OpenAI shape."""
        if path == MESSAGES_PATHS or path.startswith(MESSAGES_PATHS + "/"):
            return MESSAGES
        return self.responses if path == "/v1/responses" else CHAT

    def _authorised(self, req: Request) -> bool:
        """Whether the request carries the configured key (one is): ``x-api-key: KEY`` or
        ``Authorization: Bearer KEY`` (the scheme in any case, as HTTP has it)."""
        expected = self.config.api_key.encode()
        scheme, _, token = (req.header(b"authorization") or b"").strip().partition(b" ")
        bearer = token.strip() if scheme.lower() == b"bearer" else b""
        return (hmac.compare_digest(req.header(b"x-api-key") or b"", expected)
                or hmac.compare_digest(bearer, expected))

    # ---------------------------------------------------------------- WebSocket

    async def _upgrade(self, req: Request, resp: Response) -> tuple[int, Provenance]:
        """An upgrade request: the Responses API over WebSocket on ``GET /v1/responses``; 426
        anywhere else or with ``--no-websockets`` (never 400: Codex takes a 426 as "use HTTP")."""
        served = (self.config.websockets and req.method == "GET" and req.path == SOCKET
                  and (req.header(b"upgrade") or b"").lower() == b"websocket")
        if not served:
            why = ("WebSockets are turned off here (--no-websockets): use HTTP" if self.config.websockets is False
                   else f"{req.method} {req.path} is not served over an upgraded connection: use HTTP "
                        f"(only GET {SOCKET} upgrades, to a WebSocket)")
            resp.send(426, JSON, self._front(req.path).error(why, code="426"))
            return 426, Provenance()
        c = self.config
        limits = SocketLimits(c.max_body, c.websocket_idle_timeout, c.websocket_lifetime)
        socket = accept(req, resp, lambda ws: self._session(ws, req), limits, c.websocket_deflate)
        if isinstance(socket, str):
            resp.send(400, JSON, self.responses.error(socket, code="invalid_websocket_handshake"))
            return 400, Provenance()
        return 101, Provenance()

    def _session(self, socket: WebSocket, req: Request) -> ResponsesSocket:
        return ResponsesSocket(socket, self.responses, req, self.pipeline.serve, self.pipeline.check,
                               self.pipeline.refuse, self._turn_answered)

    def _turn_answered(self, status: int, provenance: Provenance, started: float) -> None:
        """A turn on a socket: counted and logged as a request of the Responses front."""
        self.metrics.answered(SOCKET, status, provenance, self.responses.name)
        access(log, "WS %s %d calls[%s] %.1fms", SOCKET, status, provenance.header(),
               1000 * (time.perf_counter() - started))

    # ---------------------------------------------------------------- endpoints

    async def _health(self, req: Request, resp: Response) -> tuple[int, Provenance]:
        """Up or not, and whether its store answers, for anyone (200 either way: stateless
        requests are served while the store is down); what it serves (upstream, parser, the
        store's address) only with the configured key."""
        store = self.responses.store
        try:
            self._store_up = await asyncio.wait_for(store.ping(), HEALTH_SECONDS)
        except (StoreUnavailable, asyncio.TimeoutError):
            self._store_up = False
        kind = store.name.partition(":")[0]
        health: dict[str, Any] = {"status": "ok", "store": {"backend": kind, "up": self._store_up}}
        if self.config.api_key and self._authorised(req):
            health.update(upstream=self.config.upstream, tool_call_parser=self.config.tool_call_parser)
            health["store"]["name"] = store.name
        resp.send(200, JSON, orjson.dumps(health))
        return 200, Provenance()

    async def _probe(self, req: Request, resp: Response) -> tuple[int, Provenance]:
        """``HEAD /``: the connectivity probe Claude Code sends first (no key needed: it tells
        nothing but that something answers)."""
        resp.send(200, [(b"content-type", b"text/plain")], b"")
        return 200, Provenance()

    async def _count_tokens(self, req: Request, resp: Response) -> tuple[int, Provenance]:
        """The request's input tokens; ``x-toolbridge-token-count`` says how (``fronts.messages.tokens``).
        The request is checked as ``/v1/messages`` checks it (``Pipeline.check``)."""
        large = self.tokens.renders or len(req.body) > OFFLOOP_REQUEST_BYTES
        try:
            body, how = await self.pipeline.cpu(large, "count", self._counted, req.body)
        except (orjson.JSONDecodeError, RequestError, ConfigError) as exc:
            return self.pipeline.refuse(COUNT, resp, exc)
        resp.send(200, [*JSON, (b"x-toolbridge-token-count", how.encode())], body)
        return 200, Provenance()

    def _counted(self, body: bytes) -> tuple[bytes, str]:
        turn, _ = self.pipeline.check(COUNT, body)
        return self.tokens.answer(turn)

    async def _input_tokens(self, req: Request, resp: Response) -> tuple[int, Provenance]:
        """``POST /v1/responses/input_tokens``: the input tokens a Responses request would use,
        counted as ``count_tokens`` counts them; the request checked as ``/v1/responses`` checks
        it, in the caller's scope (``previous_response_id``, item references)."""
        large = self.tokens.renders or len(req.body) > OFFLOOP_REQUEST_BYTES
        try:
            loaded = await self.responses.load(req)
            count, how = await self.pipeline.cpu(large, "count", self._input_counted, req, loaded)
        except (orjson.JSONDecodeError, RequestError, ConfigError) as exc:
            return self.pipeline.refuse(self.responses, resp, exc)
        except StoreUnavailable as exc:
            return self.pipeline.fail.store_down(self.responses, resp, exc)
        resp.send(200, [*JSON, (b"x-toolbridge-token-count", how.encode())],
                  orjson.dumps({"object": "response.input_tokens", "input_tokens": count}))
        return 200, Provenance()

    def _input_counted(self, req: Request, loaded: Any) -> tuple[int, str]:
        turn, _ = self.pipeline.check(self.responses, req.body, req, loaded)
        return self.tokens.count(turn)

    async def _stored(self, req: Request, resp: Response) -> tuple[int, Provenance]:
        """``GET`` / ``DELETE /v1/responses/{id}``: a stored response of the caller's scope, or
        its deletion (404 when it is not stored here for this caller: unknown, expired, deleted,
        another caller's, or kept by another worker; the same answer for each); ``GET
        /v1/responses/{id}/input_items``: a page of its input items."""
        response_id = req.path[len(STORED):]
        try:
            if response_id.endswith(INPUT_ITEMS):
                return await self._input_items(req, resp, response_id.removesuffix(INPUT_ITEMS))
            if req.method == "GET":
                found = await self.responses.stored(req, response_id)
                if found is not None:
                    resp.send(200, JSON, orjson.dumps(found))
                    return 200, Provenance()
            elif await self.responses.delete(req, response_id):
                resp.send(200, JSON, orjson.dumps({"id": response_id, "object": "response", "deleted": True}))
                return 200, Provenance()
        except StoreUnavailable as exc:
            return self.pipeline.fail.store_down(CHAT, resp, exc)
        return self._not_stored(resp, response_id)

    @staticmethod
    def _not_stored(resp: Response, response_id: str) -> tuple[int, Provenance]:
        resp.send(404, JSON, CHAT.error(f"no response {response_id!r:.80} is stored here (unknown, expired, "
                                        "or deleted)", code="not_found"))
        return 404, Provenance()

    async def _input_items(self, req: Request, resp: Response, response_id: str) -> tuple[int, Provenance]:
        if req.method != "GET":
            resp.send(405, JSON, CHAT.error(f"{req.method} {req.path} is not served here", code="405"))
            return 405, Provenance()
        try:
            found = await self.responses.input_items(req, response_id)
        except RequestError as exc:
            return self.pipeline.refuse(CHAT, resp, exc)
        if found is None:
            return self._not_stored(resp, response_id)
        resp.send(200, JSON, orjson.dumps(found))
        return 200, Provenance()

    async def _metrics(self, req: Request, resp: Response) -> tuple[int, Provenance]:
        resp.send(200, [(b"content-type", b"text/plain; version=0.0.4")], self.metrics.render().encode())
        return 200, Provenance()

    async def _models(self, req: Request, resp: Response) -> tuple[int, Provenance]:
        """The upstream's models as the OpenAI list, the Anthropic page and Codex's catalog in one
        body (``upstream.catalog``), with the plain-named aliases."""
        assert self.pool is not None
        try:
            async with self.pool.request("GET", self._base + "/models",
                                         self.pipeline.upstream_headers(req, False)) as up:
                body = await up.read(self.config.max_answer)
        except UpstreamError as exc:
            return self.pipeline.fail.upstream_failure(CHAT, resp, exc), Provenance()
        listed = _listing(up.status, body)
        if listed is None:  # an error of the upstream's (401, 5xx ...): passed on as it is
            resp.send(up.status, JSON, body)
            return up.status, Provenance()
        resp.send(200, JSON, orjson.dumps(catalog(listed, self.config.aliases(), self._window)))
        return 200, Provenance()


def _listing(status: int, body: bytes) -> list[Any] | None:
    """The entries of the upstream's model listing (none when it has no such endpoint), or None
    when its answer is an error to pass on."""
    if status in ABSENT:
        return []
    if status != 200:
        return None
    try:
        data = orjson.loads(body).get("data")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return data if isinstance(data, list) else None


async def serve(config: GatewayConfig, reuse_port: bool = False, restarts: int = 0) -> None:
    """Run one gateway process until SIGTERM or SIGINT (or cancelled): then stop accepting, let
    the requests in flight finish for ``config.graceful_timeout`` seconds, and close.
    ``restarts``: how many workers the master had restarted when it started this one."""
    gateway = Gateway(config)
    server = await gateway.start(reuse_port=reuse_port)
    if restarts:
        gateway.metrics.inc("toolbridge_worker_restarts", restarts)
    importlib.import_module("jsonschema")  # for schemas the quick check leaves; before the freeze
    # Long-lived objects made at start-up leave the collector's scans, and young-generation
    # collections run less often: each stream allocates small dicts at every chunk.
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    log.info("toolbridge gateway on http://%s:%d -> %s (parser %s)", config.host, server.port,
             config.upstream, config.tool_call_parser)
    try:
        await stop.wait()
        log.info("stopping: no new connections; requests in flight have %g s to finish",
                 config.graceful_timeout)
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        await gateway.close(config.graceful_timeout)
