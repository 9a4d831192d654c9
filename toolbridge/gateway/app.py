"""The gateway's HTTP side: routes, upstream calls, streaming, errors, metrics, one log line.

Requests are read by ``_h1server`` and the upstream is called through ``_h1client`` (asyncio
protocols on httptools, chosen by measurement: see benchmarks/stack/README.md). All tool-call
logic is in ``request``, ``response`` and ``streaming``; this module only moves bytes and maps
failures to OpenAI-style errors: 400 bad request, 401 missing key, 404/405, 413 body too large
(from the server layer), 502 upstream unreachable or unusable, 504 upstream timeout, and the
upstream's own status and message for its errors. A stream that fails after it started ends
with an SSE error event, never a silent stop; a client that disconnects cancels the handler,
which closes the upstream request.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import time
from collections.abc import Callable
from typing import Any

import orjson

from ..errors import ConfigError
from .http.client import GO, PAUSE, STOP, UpstreamError, UpstreamPool, UpstreamTimeout
from .http.server import ClientDisconnected, H1Server, Limits, Request, Response
from .config import GatewayConfig
from .upstream.fallback import FallbackHandler, name_the_flag
from .metrics import Metrics
from .fronts.chat import RequestError, Settings, plan_request
from .repair import Provenance, repair_completion
from .http.sse import DONE, SSEError, encode
from .streaming import StreamTranslator

log = logging.getLogger("toolbridge.gateway")

JSON = [(b"content-type", b"application/json")]
SSE = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
MAX_UPSTREAM_BODY = 64 << 20


def error_body(message: str, type: str = "invalid_request_error", code: str | None = None) -> bytes:
    return orjson.dumps({"error": {"message": message, "type": type, "param": None, "code": code}})


class Gateway:
    """One gateway process: ``await Gateway(config).start()``."""

    def __init__(self, config: GatewayConfig) -> None:
        config.check()
        self.config = config
        self.metrics = Metrics()
        self.settings = Settings(config.tool_call_parser, config.recover_from_reasoning,
                                 config.keep_special_tokens)
        self._host, self._port, self._base = config.upstream_parts()
        self.pool: UpstreamPool | None = None
        self.server: H1Server | None = None
        self._routes = {
            ("POST", "/v1/chat/completions"): self._chat,
            ("GET", "/v1/models"): self._models,
            ("GET", "/health"): self._health,
            ("GET", "/metrics"): self._metrics,
        }
        fallback = FallbackHandler.for_gateway(self)  # completions mode, --tool-fallback
        if fallback is not None:
            self._routes[("POST", "/v1/chat/completions")] = fallback.chat

    async def start(self, reuse_port: bool = False) -> H1Server:
        c = self.config
        self.pool = UpstreamPool(self._host, self._port, read_timeout=c.timeout, connect_timeout=c.connect_timeout)
        limits = Limits(max_body=c.max_body)
        self.server = await H1Server.start(self.handle, c.host, c.port, limits, reuse_port=reuse_port)
        return self.server

    async def close(self) -> None:
        if self.server is not None:
            await self.server.close(grace=1.0)
        if self.pool is not None:
            await self.pool.close()

    # ---------------------------------------------------------------- routing

    async def handle(self, req: Request, resp: Response) -> None:
        started = time.perf_counter()
        route = self._routes.get((req.method, req.path))
        status, provenance = 404, Provenance()
        try:
            if route is None:
                known = any(path == req.path for _, path in self._routes)
                status = 405 if known else 404
                resp.send(status, JSON, error_body(f"{req.method} {req.path} is not served here", code=str(status)))
            elif not self._authorised(req):
                status = 401
                resp.send(401, JSON, error_body("missing or wrong API key", "authentication_error", "invalid_api_key"))
            else:
                status, provenance = await route(req, resp)
        finally:
            self.metrics.inc("toolbridge_requests_total", endpoint=req.path if route else "other", status=str(status))
            self.metrics.record(provenance)
            log.info("%s %s %d calls[%s] %.1fms", req.method, req.path, status, provenance.header(),
                     1000 * (time.perf_counter() - started))

    def _authorised(self, req: Request) -> bool:
        key = self.config.api_key
        if not key or req.path == "/health":
            return True
        given = req.header(b"x-api-key") or (req.header(b"authorization") or b"").removeprefix(b"Bearer ")
        return given.decode("latin-1") == key

    def _upstream_headers(self, req: Request, stream: bool) -> list[tuple[bytes, bytes]]:
        headers = [*JSON, (b"accept", b"text/event-stream" if stream else b"application/json")]
        if self.config.upstream_api_key:
            headers.append((b"authorization", b"Bearer " + self.config.upstream_api_key.encode()))
        elif not self.config.api_key and req.header(b"authorization"):
            headers.append((b"authorization", req.header(b"authorization") or b""))
        return headers

    # ---------------------------------------------------------------- endpoints

    async def _health(self, req: Request, resp: Response) -> tuple[int, Provenance]:
        resp.send(200, JSON, orjson.dumps({"status": "ok", "upstream": self.config.upstream,
                                           "tool_call_parser": self.config.tool_call_parser}))
        return 200, Provenance()

    async def _metrics(self, req: Request, resp: Response) -> tuple[int, Provenance]:
        resp.send(200, [(b"content-type", b"text/plain; version=0.0.4")], self.metrics.render().encode())
        return 200, Provenance()

    async def _models(self, req: Request, resp: Response) -> tuple[int, Provenance]:
        assert self.pool is not None
        try:
            async with self.pool.request("GET", self._base + "/models", self._upstream_headers(req, False)) as up:
                body = await up.read(MAX_UPSTREAM_BODY)
        except UpstreamError as exc:
            return self._upstream_failure(resp, exc), Provenance()
        resp.send(up.status, JSON, body)
        return up.status, Provenance()

    async def _chat(self, req: Request, resp: Response) -> tuple[int, Provenance]:
        try:
            body = orjson.loads(req.body)
            plan = plan_request(body, self.settings)
        except orjson.JSONDecodeError as exc:
            resp.send(400, JSON, error_body(f"the request body is not valid JSON: {exc}"))
            return 400, Provenance()
        except (RequestError, ConfigError) as exc:
            status = exc.status if isinstance(exc, RequestError) else 400
            resp.send(status, JSON, orjson.dumps(exc.body()) if isinstance(exc, RequestError) else error_body(str(exc)))
            return status, Provenance()
        headers = self._upstream_headers(req, plan.stream)
        data = orjson.dumps(plan.body)
        # Sent: the request's objects are not kept for the life of a stream (fewer objects
        # for the collector to scan, less memory per stream).
        plan.body.clear()
        del body
        relay = self._stream if plan.stream else self._whole
        try:
            return await relay(plan, headers, data, resp)
        except (UpstreamError, SSEError) as exc:
            if resp.started:
                self._stream_error(resp, str(exc), "upstream_error")
                return 200, Provenance()
            return self._upstream_failure(resp, exc), Provenance()

    async def _whole(self, plan: Any, headers: list[tuple[bytes, bytes]], data: bytes,
                     resp: Response) -> tuple[int, Provenance]:
        assert self.pool is not None
        async with self.pool.request("POST", self._base + "/chat/completions", headers, data) as up:
            raw = await up.read(MAX_UPSTREAM_BODY)
        if up.status != 200:
            return self._pass_error(resp, up.status, raw), Provenance()
        try:
            answer, provenance = repair_completion(orjson.loads(raw), plan)
        except orjson.JSONDecodeError:
            resp.send(502, JSON, error_body("the upstream answered with invalid JSON", "upstream_error"))
            return 502, Provenance()
        except RequestError as exc:
            resp.send(exc.status, JSON, orjson.dumps(exc.body()))
            return exc.status, Provenance()
        resp.send(200, [*JSON, (b"x-toolbridge-calls", provenance.header().encode())], orjson.dumps(answer))
        return 200, provenance

    async def _stream(self, plan: Any, headers: list[tuple[bytes, bytes]], data: bytes,
                      resp: Response) -> tuple[int, Provenance]:
        assert self.pool is not None
        translator = StreamTranslator(plan)
        async with self.pool.request("POST", self._base + "/chat/completions", headers, data) as up:
            if up.status != 200:
                return self._pass_error(resp, up.status, await up.read(MAX_UPSTREAM_BODY)), Provenance()
            resp.start(200, [*SSE, (b"x-toolbridge-calls", b"streamed; see metrics and the log")])
            self.metrics.open_streams += 1
            try:
                await self._relay(up, translator, resp)
            except ClientDisconnected:
                log.info("client disconnected mid-stream; upstream request closed")
            finally:
                self.metrics.open_streams -= 1
        return 200, translator.provenance

    async def _relay(self, up: Any, translator: Any, resp: Response) -> None:
        """Relay a stream: each upstream event is translated and written from the upstream
        connection's read callback (``SSEStream.each``); what ends it early is settled here."""
        feed, finish = _sse_methods(translator)
        write = resp.write
        chunks = 0
        ended: list[tuple[str, str, str | None]] = []  # the error event that ends the stream

        def handle(event: bytes) -> int:
            nonlocal chunks
            if event == b"[DONE]":
                return STOP
            try:
                chunk = orjson.loads(event)
            except orjson.JSONDecodeError:
                ended.append(("the upstream sent an invalid chunk", "upstream_error", None))
                return STOP
            if isinstance(chunk, dict) and "error" in chunk and not chunk.get("choices"):
                ended.append((_message(chunk["error"]), "upstream_error", None))
                return STOP
            try:
                data = feed(chunk)
            except RequestError as exc:
                ended.append((str(exc), exc.type, exc.code))
                return STOP
            if data:
                write(data)  # the chunks one upstream chunk gives, in one write
                chunks += data.count(b"\n\n")
            return PAUSE if resp.paused else GO

        stopped = await up.sse().each(handle, resp.drain)
        self.metrics.inc("toolbridge_streamed_chunks_total", chunks)
        if ended:
            return self._stream_error(resp, *ended[0])
        if not stopped:
            return self._stream_error(resp, "the upstream stream ended before it was complete", "upstream_error")
        try:
            closing = finish()
        except RequestError as exc:
            return self._stream_error(resp, str(exc), exc.type, exc.code)
        resp.end(closing + DONE)

    # ---------------------------------------------------------------- failures

    def _stream_error(self, resp: Response, message: str, type: str, code: str | None = None) -> None:
        self.metrics.inc("toolbridge_upstream_errors_total", kind="mid_stream")
        resp.end(b"data: " + error_body(message, type, code) + b"\n\n")

    def _upstream_failure(self, resp: Response, exc: UpstreamError | SSEError) -> int:
        timeout = isinstance(exc, UpstreamTimeout)
        status = 504 if timeout else 502
        self.metrics.inc("toolbridge_upstream_errors_total", kind="timeout" if timeout else "unreachable")
        resp.send(status, JSON, error_body(f"upstream {'timed out' if timeout else 'failed'}: {exc}", "upstream_error"))
        return status

    def _pass_error(self, resp: Response, status: int, raw: bytes) -> int:
        """The upstream's error, status and message kept (wrapped when it is not JSON)."""
        self.metrics.inc("toolbridge_upstream_errors_total", kind=f"status_{status}")
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            parsed = None
        if not isinstance(parsed, dict) or "error" not in parsed:
            raw = error_body(f"upstream answered {status}: {raw[:2000].decode('utf-8', 'replace')}", "upstream_error")
        if not self.config.tool_fallback:
            raw = name_the_flag(raw)  # "tools not supported": say which flag works around it
        resp.send(status if 400 <= status < 600 else 502, JSON, raw)
        return status


def _sse_methods(translator: Any) -> tuple[Callable[[Any], bytes], Callable[[], bytes]]:
    """A translator's ``feed`` and ``finish`` giving SSE bytes: a StreamTranslator's own, or
    its chunk objects encoded (a translator that only gives objects)."""
    if isinstance(translator, StreamTranslator):
        return translator.feed_sse, translator.finish_sse
    return (lambda chunk: b"".join(encode(c) for c in translator.feed(chunk)),
            lambda: b"".join(encode(c) for c in translator.finish()))


def _message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


async def serve(config: GatewayConfig, reuse_port: bool = False) -> None:
    """Run one gateway process until cancelled."""
    gateway = Gateway(config)
    server = await gateway.start(reuse_port=reuse_port)
    importlib.import_module("jsonschema")  # for schemas the quick check leaves; before the freeze
    # Long-lived objects made at start-up leave the collector's scans, and young-generation
    # collections run less often: each stream allocates small dicts at every chunk.
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
    log.info("toolbridge gateway on http://%s:%d -> %s (parser %s)", config.host, server.port,
             config.upstream, config.tool_call_parser)
    try:
        await asyncio.Event().wait()
    finally:
        await gateway.close()
