"""One turn, front-agnostic: a front's request -> upstream -> parsers -> tools -> events.

A front (``fronts/``) is a translator between its client API and two internal shapes; the
pipeline does the rest and never looks at which front asked.

**In: the Turn** (``turn.Turn``): ``messages`` in the Chat Completions shape (``system``, ``user``,
``assistant`` with ``tool_calls`` whose ``arguments`` are JSON text, ``tool`` with
``tool_call_id``), ``tools`` as OpenAI function tools, ``tool_choice`` (``none``, ``auto``,
``required``, a named function, ``allowed_tools``), ``parallel``, ``stream``,
``include_usage``, ``model``, and ``options``: every other field for the upstream as it is
(sampling, ``max_tokens``, ``stop``, ``chat_template_kwargs`` ...). ``plan_turn`` checks it
and plans the upstream request (``turn.Plan``); the router (``upstream/fallback``, when the
completions mode or the injected protocol is configured) may rewrite the plan.

**Out, whole:** a ``chat.completion`` object, repaired (``repair.repair_completion``: native
calls canonicalised, calls recovered from text, ``finish_reason`` made honest), with its
``Provenance``; the front turns it into its own body (``front.whole``).

**Out, streamed:** ``streaming.AnswerStream`` gives, per upstream chunk, ``(choice index,
events)`` pairs. The events are the library's (``toolbridge.events``): ``Text`` (settled content:
trailing whitespace is held until it is known to belong), ``Reasoning``, ``ToolCallBegin(index,
id, name)``, ``ArgumentsDelta(index, text)`` (fragments that join into the call's JSON
arguments), ``ToolCallEnd(index, arguments)`` (calls recovered from text), plus two of the
pipeline's own: ``Field(key, value)`` (an upstream delta field passed on as it is) and
``Finish(reason)`` (``stop``, ``length``, ``tool_calls``, or the upstream's reason), the last
event of each choice. Call indices are the turn's own, 0..n-1 in order. ``meta`` (id, created,
model) and ``usage`` are on the AnswerStream. The front's encoder (``front.stream``) turns the
events into its wire bytes.

**Errors:** a bad request raises ``RequestError`` (status, message, param, code) before anything
is sent; the front writes it in its API's error shape (``front.error``). An upstream that cannot
be reached is 502, silence beyond ``--timeout`` 504, the upstream's own errors keep their status
(``front.upstream_error``), and a stream that fails after it began ends with
``front.stream_error``, never a silent stop; a client that disconnects closes the upstream
request.

**A front** is one module with: ``turn(body) -> Turn``, ``error(message, type, code, param) ->
bytes``, ``upstream_error(raw) -> bytes``, ``whole(answer) -> bytes``, ``stream(answer_stream) ->
encoder`` (``feed_sse(chunk) -> bytes``, ``finish_sse() -> bytes``, ``provenance``),
``stream_error(message, type, code) -> bytes``, ``stream_end() -> bytes`` and ``content_type``;
and one route in ``app.py``.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

import orjson

from ..errors import ConfigError, FallbackRequired, RenderError
from .config import GatewayConfig
from .http.client import STOP, GO, PAUSE, UpstreamError, UpstreamPool, UpstreamTimeout
from .http.server import ClientDisconnected, Request, Response
from .http.sse import SSEError
from .metrics import Metrics
from .repair import Provenance, repair_completion
from .streaming import AnswerStream
from .turn import Plan, RequestError, Settings, Turn, plan_turn
from .upstream.refusal import is_refusal, name_the_flag

log = logging.getLogger("toolbridge.gateway")

JSON = [(b"content-type", b"application/json")]
MAX_UPSTREAM_BODY = 64 << 20
Result = tuple[int, Provenance]


class Front(Protocol):
    """A client API's translator; see the module docstring."""

    content_type: bytes

    def turn(self, body: Any) -> Turn: ...
    def error(self, message: str, type: str = ..., code: str | None = ..., param: str | None = ...) -> bytes: ...
    def upstream_error(self, raw: bytes) -> bytes: ...
    def whole(self, answer: dict[str, Any]) -> bytes: ...
    def stream(self, answer: AnswerStream) -> Any: ...
    def stream_error(self, message: str, type: str, code: str | None = None) -> bytes: ...
    def stream_end(self) -> bytes: ...


class Pipeline:
    """Runs turns against the configured upstream; one per gateway process."""

    def __init__(self, config: GatewayConfig, metrics: Metrics) -> None:
        self.config = config
        self.metrics = metrics
        self.settings = Settings(config.tool_call_parser, config.recover_from_reasoning,
                                 config.keep_special_tokens)
        self.base = config.upstream_parts()[2]
        self.pool: UpstreamPool | None = None
        self.router: Any = None
        if config.rewrites_requests:
            from .upstream.fallback import Router  # the renderer: only when configured

            self.router = Router(config, config.template())

    async def serve(self, front: Front, req: Request, resp: Response) -> Result:
        """Answer one request of ``front``'s API."""
        try:
            turn = front.turn(orjson.loads(req.body))
            plan = plan_turn(turn, self.settings)
        except orjson.JSONDecodeError as exc:
            return self._refuse(front, resp, 400, f"the request body is not valid JSON: {exc}")
        except RequestError as exc:
            return self._refuse(front, resp, exc.status, str(exc), exc.type, exc.code, exc.param)
        except ConfigError as exc:
            return self._refuse(front, resp, 400, str(exc))
        path, retry = "/chat/completions", False
        if self.router is not None:
            try:
                path, plan, retry = self.router.prepare(turn, plan)
            except RequestError as exc:
                return self._refuse(front, resp, exc.status, str(exc), exc.type, exc.code, exc.param)
            except (ConfigError, RenderError) as exc:
                code = "tool_fallback_required" if isinstance(exc, FallbackRequired) else None
                return self._refuse(front, resp, 400, str(exc), code=code, param="messages")
        headers = self.upstream_headers(req, plan.stream)
        model = turn.model
        del turn  # the request's objects are not kept for the life of a stream
        try:
            result = await self._send(front, plan, path, headers, resp, retry)
            if result is None:  # the upstream refused tools: once more, with the protocol
                self.router.remember(model)
                log.info("upstream refused tools for model %r; retrying with the injected "
                         "protocol", model)
                result = await self._send(front, self.router.injected(plan), path, headers, resp, False)
            assert result is not None
            return result
        except RequestError as exc:  # the history cannot be written as the protocol
            return self._refuse(front, resp, exc.status, str(exc), exc.type, exc.code, exc.param)
        except (UpstreamError, SSEError) as exc:
            if resp.started:
                self.stream_error(front, resp, str(exc), "upstream_error")
                return 200, Provenance()
            return self.upstream_failure(front, resp, exc), Provenance()

    def upstream_headers(self, req: Request, stream: bool) -> list[tuple[bytes, bytes]]:
        headers = [*JSON, (b"accept", b"text/event-stream" if stream else b"application/json")]
        if self.config.upstream_api_key:
            headers.append((b"authorization", b"Bearer " + self.config.upstream_api_key.encode()))
        elif not self.config.api_key and req.header(b"authorization"):
            headers.append((b"authorization", req.header(b"authorization") or b""))
        return headers

    async def _send(self, front: Front, plan: Plan, path: str, headers: list[tuple[bytes, bytes]],
                    resp: Response, retry: bool) -> Result | None:
        """One upstream exchange; None when it was refused for tools and ``retry`` is set."""
        assert self.pool is not None
        data = orjson.dumps(plan.body)
        if not retry:
            # Sent: the request's objects are not kept for the life of a stream (fewer objects
            # for the collector to scan, less memory per stream).
            plan.body.clear()
        async with self.pool.request("POST", self.base + path, headers, data) as up:
            if up.status != 200:
                raw = await up.read(MAX_UPSTREAM_BODY)
                if retry and is_refusal(raw):
                    return None
                return self.pass_error(front, resp, up.status, raw), Provenance()
            if plan.stream:
                return await self._stream(front, up, plan, resp)
            raw = await up.read(MAX_UPSTREAM_BODY)
        try:
            whole = self.router.whole if self.router is not None else repair_completion
            answer, provenance = whole(orjson.loads(raw), plan)
        except orjson.JSONDecodeError:
            return self._refuse(front, resp, 502, "the upstream answered with invalid JSON", "upstream_error")
        except RequestError as exc:
            return self._refuse(front, resp, exc.status, str(exc), exc.type, exc.code, exc.param)
        resp.send(200, [*JSON, (b"x-toolbridge-calls", provenance.header().encode())], front.whole(answer))
        return 200, provenance

    async def _stream(self, front: Front, up: Any, plan: Plan, resp: Response) -> Result:
        answer = self.router.answer_stream(plan) if self.router is not None else AnswerStream(plan)
        encoder = front.stream(answer)
        resp.start(200, [(b"content-type", front.content_type), (b"cache-control", b"no-cache"),
                         (b"x-toolbridge-calls", b"streamed; see metrics and the log")])
        self.metrics.open_streams += 1
        try:
            await self._relay(front, up, encoder, resp)
        except ClientDisconnected:
            log.info("client disconnected mid-stream; upstream request closed")
        finally:
            self.metrics.open_streams -= 1
        return 200, encoder.provenance

    async def _relay(self, front: Front, up: Any, encoder: Any, resp: Response) -> None:
        """Relay a stream: each upstream event is translated and written from the upstream
        connection's read callback (``SSEStream.each``); what ends it early is settled here."""
        feed, write = encoder.feed_sse, resp.write
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
            return self.stream_error(front, resp, *ended[0])
        if not stopped:
            return self.stream_error(front, resp, "the upstream stream ended before it was complete",
                                     "upstream_error")
        try:
            closing = encoder.finish_sse()
        except RequestError as exc:
            return self.stream_error(front, resp, str(exc), exc.type, exc.code)
        resp.end(closing + front.stream_end())

    # ---------------------------------------------------------------- failures

    def _refuse(self, front: Front, resp: Response, status: int, message: str,
                type: str = "invalid_request_error", code: str | None = None,
                param: str | None = None) -> Result:
        resp.send(status, JSON, front.error(message, type, code, param))
        return status, Provenance()

    def stream_error(self, front: Front, resp: Response, message: str, type: str,
                     code: str | None = None) -> None:
        self.metrics.inc("toolbridge_upstream_errors_total", kind="mid_stream")
        resp.end(front.stream_error(message, type, code))

    def upstream_failure(self, front: Front, resp: Response, exc: UpstreamError | SSEError) -> int:
        timeout = isinstance(exc, UpstreamTimeout)
        status = 504 if timeout else 502
        self.metrics.inc("toolbridge_upstream_errors_total", kind="timeout" if timeout else "unreachable")
        resp.send(status, JSON, front.error(f"upstream {'timed out' if timeout else 'failed'}: {exc}",
                                            "upstream_error"))
        return status

    def pass_error(self, front: Front, resp: Response, status: int, raw: bytes) -> int:
        """The upstream's error, status and message kept (wrapped when it is not JSON)."""
        self.metrics.inc("toolbridge_upstream_errors_total", kind=f"status_{status}")
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            parsed = None
        if not isinstance(parsed, dict) or "error" not in parsed:
            raw = front.error(f"upstream answered {status}: {raw[:2000].decode('utf-8', 'replace')}",
                              "upstream_error")
        if not self.config.tool_fallback:
            raw = name_the_flag(raw)  # "tools not supported": say which flag works around it
        resp.send(status if 400 <= status < 600 else 502, JSON, front.upstream_error(raw))
        return status


def _message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)
