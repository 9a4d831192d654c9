"""One turn, front-agnostic: a front's request -> upstream -> parsers -> tools -> events.

A front (``fronts/``) is a translator between its client API and two internal shapes; the
pipeline does the rest and never looks at which front asked.

**In: the Turn** (``turn.Turn``): ``messages`` in the Chat Completions shape (``system``, ``user``,
``assistant`` with ``tool_calls`` whose ``arguments`` are JSON text, ``tool`` with
``tool_call_id``), ``tools`` as OpenAI function tools, ``tool_choice`` (``none``, ``auto``,
``required``, a named function, ``allowed_tools``), ``parallel``, ``stream``,
``include_usage``, ``model``, and ``options``: every other field for the upstream as it is
(sampling, ``max_tokens``, ``stop``, ``chat_template_kwargs`` ...). Its ``model`` is first made
the name the upstream serves (``upstream.models``; the answer repeats the client's, ``Plan.asked``,
and ``x-toolbridge-model`` names the one sent to), so that all that is keyed by model reads
the served name. ``plan_turn`` checks it
and plans the upstream request (``turn.Plan``); the router (``upstream/fallback``, when the
completions mode or the injected protocol is configured) may rewrite the plan.

**Out, whole:** a ``chat.completion`` object, repaired (``repair.repair_completion``: native
calls canonicalised, calls recovered from text, ``finish_reason`` made honest), with its
``Provenance``; the front turns it into its own body (``front.whole``).

**Out, streamed:** ``streaming.AnswerStream`` gives, per upstream chunk, ``(choice index,
events)`` pairs. The events are the library's (``toolbridge.events``): ``Text`` (settled content:
trailing whitespace is held until it is known to belong), ``Reasoning``, ``ToolCallBegin(index,
id, name)``, ``ArgumentsDelta(index, text)`` (fragments that join into the call's JSON
arguments), ``ToolCallEnd(index, arguments)`` (calls recovered from text), plus three of the
pipeline's own: ``Field(key, value)`` (an upstream delta field passed on as it is),
``WholeCall(index, id, name, arguments)`` (a call held until it ended and was checked, then
released to be sent in one piece: every call, unless ``--stream-arguments``, which leaves only
the calls that must be valid held, the others coming as ``ToolCallBegin`` and fragments; see
``validation``) and ``Finish(reason)`` (``stop``, ``length``, ``tool_calls``, or the upstream's
reason), the last event of each choice. Call indices are the turn's own, 0..n-1 in order. ``meta`` (id, created,
model) and ``usage`` are on the AnswerStream. The front's encoder (``front.stream``) turns the
events into its wire bytes.

**Errors:** a bad request raises ``RequestError`` (status, message, param, code) before anything
is sent; the front writes it in its API's error shape (``front.error``). An upstream that cannot
be reached is 502, silence beyond ``--timeout`` 504 (as is an exchange longer than the
``time_limit`` seconds a front's turn context may carry: ``_bounded``), the upstream's own errors keep their status
(``front.upstream_error``; a 404 first fetches the upstream's model list again, and the
request goes once more when its name then maps to another model), and a stream that fails
after it began ends with ``front.stream_error``, never a silent stop (so does one whose upstream
says ``[DONE]`` before each choice it began had its finish reason: ``UNFINISHED``); a client that
disconnects closes the upstream request. ``serve`` is the boundary where any other exception ends: logged with its traceback,
counted (``toolbridge_internal_errors_total``) and answered in the front's error shape, never as
a bare 500 or a cut stream. An answer the gateway fails to read is 502 ``unreadable_answer``, any
other failure before the response began is 500 ``internal_error``, both with
``x-should-retry: false`` (the openai SDK otherwise retries 5xx, and the same answer or request
would meet the same fault, the upstream generating again each time); after the response began,
it is the front's stream error event. A call whose arguments fail its schema, when the policy
or a ``strict`` tool says it must be valid (``validation``), is 502 ``invalid_tool_arguments``
with ``x-should-retry: false``, or that stream error event; under ``--on-invalid retry`` the
upstream is first asked again (``_again``), a stream going on where it was. The answers to
failures are written by ``failures.Failures`` (``self.fail``).

**Off the event loop:** parsing is CPU work that holds every other client of the process while
it runs. Reading a whole answer or translating one streamed upstream event of more than
``OFFLOOP_BYTES``, and checking and planning a request of more than ``OFFLOOP_REQUEST_BYTES``,
run on a small pool of worker threads (``PARSE_WORKERS``); smaller ones run inline, where the
thread hop would cost about as much as the work, and so does a whole answer of up to
``OFFLOOP_PLAIN_BYTES`` that reads at C speed (prose, a few calls written plainly: tried on the
loop first, and given to a worker when it turns out otherwise). A worker holds the GIL only in slices
(``sys.getswitchinterval``), so the loop keeps answering meanwhile, provided the work does not
release and retake the GIL at a high rate (which starves the loop: see ``parsing.ids``).

**A front** is one module with: ``turn(body, request) -> Turn`` (the request tells a front that
keeps things per caller whose they are), ``paths`` (how it spells a field's path) and ``rebuilds``
(whether its turn is built out of the body, which is then checked for nesting before the front
reads it: ``nesting``), ``error(message, type, code, param) -> bytes``, ``upstream_error(raw) ->
bytes``, ``whole(answer, plan) -> bytes``, ``stream(answer_stream) ->
encoder`` (``feed_sse(chunk) -> bytes``, ``finish_sse() -> bytes``, ``provenance``),
``stream_error(message, type, code) -> bytes``, ``stream_end() -> bytes`` and ``content_type``;
and one route in ``app.py``. A front may also have ``decode(body) -> (value, shallow)``: the body
as ``orjson.loads`` decodes it and whether it is ``turn.shallow_body``, read faster by what the
front knows of its bodies (the chat front: tools it has seen). An encoder may also have ``idle_sse() -> bytes`` and
``idle_seconds``: its keep-alive events, written while the client is sent nothing
(``keepalive``);
``event_end``, what ends each of its events when not SSE's blank line (counted by it);
and ``disconnected()``, called when the client goes away mid-stream.

**A front that keeps state** (``gateway/state``: the Responses front, Messages threads) may also
have ``async load(request)``: what the store holds of the records the request names, read before
the turn and passed to ``turn(body, request, loaded)`` (planning never waits on the store; a
request planned again after an upstream 404 is built from the same ``loaded``), and
``keep(plan)``: the awaitable that keeps a whole answer (``whole`` made the record) before it
is sent, or None when there is nothing to keep; its
encoder ``async begin()`` (before the response head) and ``async keep()`` (after ``finish_sse``,
before the last bytes go). A store that fails in any of them (``StoreUnavailable``) is 503
``store_unavailable`` in the front's shape, or the stream's error event once it began.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

import orjson

from ..errors import ConfigError, FallbackRequired, RenderError
from ..syntax.dialect import Dialect
from .config import GatewayConfig
from .http.client import STOP, GO, PAUSE, Fields, UpstreamError, UpstreamPool, UpstreamTimeout
from .http.server import ClientDisconnected, Request, Response
from .http.sse import SSEError
from .metrics import Metrics
from .order import in_call_order
from .state import StoreUnavailable
from .repair import NotPlain, Provenance, repair_completion
from .plain import PlainBytes
from .stable import stable_prompt
from .streaming import AnswerStream
from .turn import Plan, RequestError, Settings, Turn, check_body, drop_reasoning, plan_turn, shallow_body
from .failures import JSON, Failures, Result, error_message
from .grammars import GrammarChecker
from .upstream.models import Models, model_field
from .upstream.quirks import adapt
from .upstream.refusal import is_refusal
from .validation import InvalidArguments, Retries

log = logging.getLogger("toolbridge.gateway")

# Bigger inputs are read on a worker thread. Measured on this code (2 busy cores): a thread
# round trip costs 30-90 us; reading a whole answer costs 3-10 ns a byte of prose and 450-1000
# ns a byte of text dense with calls. At 16 KB prose takes about as long as the hop (offloading
# at most doubles the cheapest step it takes), and the worst text held the loop for 8-17 ms.
OFFLOOP_BYTES = 16 << 10
# A larger answer is first read on the loop when it reads at C speed (prose, and at most
# OFFLOOP_PLAIN_CALLS calls written plainly: ``repair.NotPlain`` otherwise, and it goes to a worker):
# 3-5 ns a byte (a 33 KB call: about 130 us, where the thread round trip cost some 80-100 us of CPU
# more), some 15 us a call, so the loop is held at most a couple of milliseconds, well within
# what the worst 16 KB text costs inline.
OFFLOOP_PLAIN_BYTES = 256 << 10
OFFLOOP_PLAIN_CALLS = 32
# Checking and planning a request costs 2.5 ns a byte (15 with a template to render): agents
# send 20-200 KB with every turn, for which the hop would cost more than it saves.
OFFLOOP_REQUEST_BYTES = 256 << 10
PARSE_WORKERS = 2  # the GIL runs one at a time anyway; two keep a huge one from queueing the rest
T = TypeVar("T")
# A stream that says [DONE] before each choice it began had its finish (AnswerStream.finished).
UNFINISHED = ("the upstream ended its stream without a finish reason: the answer was cut short "
              "(llama-cpp-python's server ends a stream so when another request reaches it, unless it "
              "runs with --interrupt_requests false)")


class _Ended(Exception):
    """A stream's translation ended it (the error is noted); stops reading the upstream."""


class _NotFound(Exception):
    """The upstream answered 404 before the response began: perhaps a model it no longer
    serves (``_serve`` asks for its model list again and, if the name now maps elsewhere, sends
    the request once more)."""

    def __init__(self, raw: bytes) -> None:
        super().__init__("the upstream answered 404")
        self.raw = raw


class Front(Protocol):
    """A client API's translator; see the module docstring."""

    content_type: bytes
    paths: str  # how its error messages spell a field's path (``nesting.PATHS``)
    rebuilds: bool  # its turn is built out of the body (the body's nesting is checked first)

    def turn(self, body: Any, req: Request | None = None) -> Turn: ...
    def error(self, message: str, type: str = ..., code: str | None = ..., param: str | None = ...) -> bytes: ...
    def upstream_error(self, raw: bytes) -> bytes: ...
    def whole(self, answer: dict[str, Any], plan: Plan) -> bytes: ...
    def stream(self, answer: AnswerStream) -> Any: ...
    def stream_error(self, message: str, type: str, code: str | None = None) -> bytes: ...
    def stream_end(self) -> bytes: ...


class Pipeline:
    """Runs turns against the configured upstream; one per gateway process."""

    def __init__(self, config: GatewayConfig, metrics: Metrics) -> None:
        self.config = config
        self.metrics = metrics
        self.fail = Failures(metrics, config.tool_fallback)  # how failures are answered
        self.settings = Settings(config.tool_call_parser, config.recover_from_reasoning,
                                 config.keep_special_tokens, config.on_invalid, not config.no_coerce,
                                 config.repair, config.stream_arguments, config.max_answer,
                                 config.reasoning_in_content)
        self.base = config.upstream_parts()[2]
        # An upstream request's header fields, their lines made once, but a client's key passed
        # on (``upstream_headers``).
        key = config.upstream_api_key
        own = [(b"authorization", b"Bearer " + key.encode())] if key else []
        self._fields = tuple(Fields([*JSON, (b"accept", accept), *own])
                             for accept in (b"application/json", b"text/event-stream"))
        self._passes_key = not config.upstream_api_key and not config.api_key
        self.pool: UpstreamPool | None = None
        self.router: Any = None
        self._workers: ThreadPoolExecutor | None = None  # made at the first large step
        self.grammars = GrammarChecker(metrics)  # freeform tools' grammars, compiled off the loop
        self.models = Models(config.aliases(), config.models_refresh, metrics)  # names sent upstream
        if config.upstream_kind != "auto":
            self.models.kind = config.upstream_kind
        if config.rewrites_requests:
            from .upstream.fallback import Router  # the renderer: only when configured

            self.router = Router(config, config.template())
        self.constrainer: Any = None  # --constrain: the grammar sent upstream (off: none)
        if config.constrain != "off":
            from .upstream.constraint import Constrainer

            self.constrainer = Constrainer(config, metrics, self.router.template if self.router else None)
            self.models.listener = self.constrainer.learn  # one GET /v1/models for both

    async def serve(self, front: Front, req: Request, resp: Response) -> Result:
        """Answer one request of ``front``'s API. Nothing but cancellation and a client gone
        leaves it: every other failure is answered here (see the module docstring). One
        coroutine to the upstream exchange: a request that needs nothing around it (a store to
        read, a worker thread, a time limit, a refusal of tools to send again) makes no other
        (``_exchanged``)."""
        try:
            if self.constrainer is not None and not self.constrainer.detected:
                assert self.pool is not None
                await self.constrainer.detect(self.pool, self.base + "/models", self.upstream_headers(req, False))
            try:
                load = getattr(front, "load", None)  # a front that keeps state reads the store first
                loaded = await load(req) if load is not None else None
                if len(req.body) > OFFLOOP_REQUEST_BYTES:
                    turn, plan, path, retry = await self.cpu(True, "request", self._plan, front, req, loaded)
                else:  # inline, without the coroutine ``cpu`` would make
                    turn, plan, path, retry = self._plan(front, req, loaded)
            except (orjson.JSONDecodeError, RequestError, ConfigError) as exc:
                return self.refuse(front, resp, exc)
            except StoreUnavailable as exc:
                return self.fail.store_down(front, resp, exc)
            if turn.freeforms:
                failed = await self.grammars.first_failure(turn.freeforms.values())
                if failed is not None:
                    fmt, error = failed
                    return self.fail.refuse(front, resp, 400, fmt.compile_failure(error), param=fmt.where)
            if plan.constraint is not None:
                self.constrainer.report(plan)
                set_header(resp, plan.constraint.header())
            if plan.model:
                set_header(resp, model_field(plan.model))
            headers = self.upstream_headers(req, plan.stream)
            # The turn is kept only to be asked again: not for the life of every stream.
            retrying = plan.on_invalid == "retry" and plan.enforcing  # (the property last: seldom read)
            tries = Retries(turn, self.config.retries) if retrying else None
            del turn
            try:
                try:
                    return await self._exchanged(front, plan, path, headers, resp, retry, tries)
                except _NotFound as missing:
                    return await self._not_found(front, req, resp, plan, missing.raw, loaded)
            except RequestError as exc:  # the history cannot be written as the protocol
                return self.fail.refuse(front, resp, exc.status, str(exc), exc.type, exc.code, exc.param)
            except StoreUnavailable as exc:  # a stream's response could not be registered or kept
                return self.fail.store_down(front, resp, exc)
            except (UpstreamError, SSEError) as exc:
                if resp.started:
                    self.fail.stream_error(front, resp, str(exc), "upstream_error")
                    return 200, Provenance()
                return self.fail.upstream_failure(front, resp, exc), Provenance()
        except ClientDisconnected:
            raise
        except Exception as exc:  # noqa: BLE001  # the boundary: logged, counted, answered
            return self.fail.failure(front, resp, exc)

    def _exchanged(self, front: Front, plan: Plan, path: str, headers: list[tuple[bytes, bytes]],
                   resp: Response, retry: bool, tries: Retries | None) -> Awaitable[Result]:
        """``plan`` sent and answered: ``_send`` itself when nothing is wrapped around it, else
        within ``_exchange`` (a refusal of tools sent again: only when ``retry`` is set, as
        ``_send`` answers None only then) and ``_bounded`` (the turn's time limit)."""
        if retry:
            exchange = self._exchange(front, plan, path, headers, resp, retry, tries)
        else:
            exchange = self._send(front, plan, path, headers, resp, retry, tries)
        limit = getattr(plan.context, "time_limit", None)
        return _bounded(exchange, limit) if limit else exchange  # type: ignore[return-value]

    async def _exchange(self, front: Front, plan: Plan, path: str, headers: list[tuple[bytes, bytes]],
                        resp: Response, retry: bool, tries: Retries | None) -> Result:
        """``plan`` sent and answered; a refusal of tools sends it again with the protocol."""
        result = await self._send(front, plan, path, headers, resp, retry, tries)
        if result is None:  # the upstream refused tools: once more, with the protocol
            if self.constrainer is not None:
                self.constrainer.withdraw(plan, "the upstream refused tools: the injected protocol")
            self.router.remember(plan.model)
            log.info("upstream refused tools for model %r; retrying with the injected "
                     "protocol", plan.model)
            result = await self._send(front, self.router.injected(plan), path, headers, resp,
                                      False, tries)
        assert result is not None
        return result

    async def _not_found(self, front: Front, req: Request, resp: Response, plan: Plan,
                         raw: bytes, loaded: Any) -> Result:
        """The upstream answered 404 to ``plan``: its model list is asked for again; when the
        request's name then maps to another model it is planned and sent once more (from what
        ``load`` read of the store for the first plan: the store is not asked twice), when it
        maps to none the answer is the 404 naming the served models (``Models.resolve``), else
        the upstream's own answer."""
        assert self.pool is not None
        await self.models.refresh(self.pool, self.base + "/models", self.upstream_headers(req, False))
        try:
            turn, again, path, retry = await self.cpu(len(req.body) > OFFLOOP_REQUEST_BYTES, "request",
                                                      self._plan, front, req, loaded)
        except (orjson.JSONDecodeError, RequestError, ConfigError) as exc:
            return self.refuse(front, resp, exc)
        if again.model == plan.model:
            return self.fail.pass_error(front, resp, 404, raw), Provenance()
        log.info("the upstream does not serve %r: the request goes again as %r", plan.model, again.model)
        if again.model:
            set_header(resp, model_field(again.model))
        retrying = again.on_invalid == "retry" and again.enforcing
        tries = Retries(turn, self.config.retries) if retrying else None
        del turn
        try:
            return await self._exchanged(front, again, path, self.upstream_headers(req, again.stream), resp,
                                         retry, tries)
        except _NotFound as missing:
            return self.fail.pass_error(front, resp, 404, missing.raw), Provenance()

    def refuse(self, front: Front, resp: Response, exc: Exception) -> Result:
        """The 400 (or the error's own status) for a request ``check`` refused; the 503 of a
        store that did not answer (``StoreUnavailable``, from a front's ``load``)."""
        if isinstance(exc, StoreUnavailable):
            return self.fail.store_down(front, resp, exc)
        if isinstance(exc, orjson.JSONDecodeError):
            return self.fail.refuse(front, resp, 400, f"the request body is not valid JSON: {exc}")
        if isinstance(exc, RequestError):
            return self.fail.refuse(front, resp, exc.status, str(exc), exc.type, exc.code, exc.param)
        return self.fail.refuse(front, resp, 400, str(exc))

    def check(self, front: Front, body: bytes, req: Request | None = None,
              loaded: Any = None) -> tuple[Turn, Plan]:
        """A request checked and planned as every request of ``front`` is, without the upstream
        route (what ``count_tokens`` validates with; ``req`` gives the caller's scope,
        ``loaded`` what ``load`` read for it); raises orjson.JSONDecodeError, RequestError or
        ConfigError (``refuse`` answers them)."""
        turn, shallow, checked = self._turn(front, body, req, loaded)
        return turn, plan_turn(turn, self.settings, shallow, checked)

    def _turn(self, front: Front, body: bytes, req: Request | None = None,
              loaded: Any = None) -> tuple[Turn, bool, bool]:
        """The request decoded, its nesting bounded (``turn.check_body``, for a front that builds
        its turn out of the body) and translated: the turn, whether the body is ``shallow``
        and whether it was ``checked`` (see ``plan_turn``)."""
        if req is not None and req.parsed is not None and req.body is body:
            value, shallow = req.parsed, shallow_body(body)
        else:  # (a front may read its body faster, as it knows it: ``decode``)
            decode = getattr(front, "decode", None)
            value, shallow = (orjson.loads(body), shallow_body(body)) if decode is None else decode(body)
        checked = front.rebuilds and not shallow
        if checked:
            check_body(value, front.paths)
        turn = front.turn(value, req) if loaded is None else front.turn(value, req, loaded)  # type: ignore[call-arg]
        if self.config.drop_reasoning_history:
            drop_reasoning(turn.messages)
        if self.config.stable_prompt:
            stable_prompt(turn.messages)
        if not turn.ordered and in_call_order(turn.messages):
            self.metrics.inc("toolbridge_results_reordered_total", front=front.name)
        return turn, shallow, checked

    def _plan(self, front: Front, req: Request, loaded: Any = None) -> tuple[Turn, Plan, str, bool]:
        """The request checked and planned: its turn, plan, upstream path and whether a refusal
        of tools is retried."""
        turn, shallow, checked = self._turn(front, req.body, req, loaded)
        asked = turn.model
        turn.serve_as(self.models.resolve(asked))
        plan, path, retry = self._route(turn, shallow, checked)
        if asked is not None and asked != turn.model:
            plan.asked = asked
        return turn, plan, path, retry

    def _route(self, turn: Turn, shallow: bool = False, checked: bool = False) -> tuple[Plan, str, bool]:
        """``turn`` planned: its plan, upstream path and whether a refusal of tools is retried
        (``shallow``, ``checked``: see ``plan_turn``)."""
        plan = plan_turn(turn, self.settings, shallow, checked)
        path, retry = "/chat/completions", False
        if self.router is not None:
            try:
                path, plan, retry = self.router.prepare(turn, plan)
            except (ConfigError, RenderError) as exc:
                code = "tool_fallback_required" if isinstance(exc, FallbackRequired) else None
                raise RequestError(str(exc), code=code, param="messages") from exc
        if path == "/chat/completions":
            adapt(self.models.kind, plan.body)  # what the upstream's kind refuses (upstream.quirks)
        if self.constrainer is not None:
            self.constrainer.apply(turn, plan, path)
        return plan, path, retry

    async def cpu(self, large: bool, kind: str, step: Callable[..., T], *args: Any) -> T:
        """``step(*args)``, on a worker thread when its input is ``large``, so that a long parse
        does not hold the loop's other clients; ``kind`` names it in the metrics."""
        if not large:
            return step(*args)
        if self._workers is None:
            self._workers = ThreadPoolExecutor(PARSE_WORKERS, thread_name_prefix="toolbridge-parse")
        self.metrics.inc("toolbridge_offloaded_total", kind=kind)
        return await asyncio.get_running_loop().run_in_executor(self._workers, step, *args)

    def upstream_headers(self, req: Request | None, stream: bool) -> list[tuple[bytes, bytes]]:
        """The header fields of an upstream request (not to be changed: the same ``Fields``,
        its lines made once, serves every request that adds none); ``req``: the client's request
        (its Authorization passes on when the gateway neither checks keys nor has its own, its
        line checked as it is sent)."""
        fields = self._fields[stream]
        if self._passes_key and req is not None:
            passed = req.header(b"authorization")
            if passed:
                return [*fields, (b"authorization", passed)]
        return fields

    async def _send(self, front: Front, plan: Plan, path: str, headers: list[tuple[bytes, bytes]],
                    resp: Response, retry: bool, tries: Retries | None = None) -> Result | None:
        """One upstream exchange; None when it was refused for tools and ``retry`` is set. An
        answer with a call that had to be valid and is not goes to ``_again``."""
        assert self.pool is not None
        # A constrained body is kept until the upstream takes it: a rejection sends it again.
        constrained = plan.constraint is not None and bool(plan.constraint.restore)
        discard = not retry and not constrained
        exchange = self.pool.request("POST", self.base + path, headers,
                                     upstream_body(plan, discard))
        if discard:
            # Sent: the request's objects are not kept for the life of a stream (fewer objects
            # for the collector to scan, less memory per stream).
            plan.body.clear()
        async with exchange as up:
            if up.status != 200:
                raw = await up.read(self.config.max_answer)
                if not (constrained and self.constrainer.rejected(plan, up.status, raw)):
                    return self._failed(front, resp, up.status, raw, retry)
            else:
                if constrained:
                    self.constrainer.accepted(plan)
                    if not retry:
                        plan.body.clear()
                if plan.stream:
                    streamed = await self._stream(front, up, plan, resp, tries)
                else:
                    raw = await up.read(self.config.max_answer)
        if up.status != 200:  # the grammar was refused: the request goes again without it
            return await self._unconstrained(front, plan, path, headers, resp, retry, tries)
        if plan.stream:
            if isinstance(streamed, InvalidArguments):
                return await self._again(front, streamed, headers, resp, tries)
            return streamed
        try:
            if len(raw) > OFFLOOP_BYTES:
                read = self._read_plain(front, raw, plan)
                if read is None:
                    read = await self.cpu(True, "whole", self._read_whole, front, raw, plan)
                body, provenance = read
            else:
                body, provenance = self._read_whole(front, raw, plan)
        except InvalidArguments as exc:
            return await self._again(front, exc, headers, resp, tries)
        except RequestError as exc:
            return self.fail.refuse(front, resp, exc.status, str(exc), exc.type, exc.code, exc.param)
        except Exception as exc:  # noqa: BLE001  # the boundary for a whole answer (502)
            return self.fail.failure(front, resp, exc, answer=True)
        keep = getattr(front, "keep", None)  # a front that keeps the answer: before it is sent
        kept = keep(plan) if keep is not None else None  # (None: nothing to keep, nothing to await)
        if kept is not None:
            await kept
        resp.send(200, [*JSON, (b"x-toolbridge-calls", provenance.header().encode())], body)
        return 200, provenance

    def _failed(self, front: Front, resp: Response, status: int, raw: bytes, retry: bool) -> Result | None:
        """An upstream's error answer, passed on; None when it refused tools and ``retry`` is set."""
        if retry and is_refusal(raw):
            return None
        if resp.started:  # a retry's: the client's stream already began
            self.fail.stream_error(front, resp, f"the upstream answered {status} to a retry", "upstream_error")
            return 200, Provenance()
        if status == 404:
            raise _NotFound(raw)
        return self.fail.pass_error(front, resp, status, raw), Provenance()

    async def _unconstrained(self, front: Front, plan: Plan, path: str, headers: list[tuple[bytes, bytes]],
                             resp: Response, retry: bool, tries: Retries | None) -> Result | None:
        """The upstream refused ``plan``'s grammar (its body is restored): the same request
        again without it, read by recovery as any other."""
        if not resp.started:
            set_header(resp, plan.constraint.header())
        result = await self._send(front, plan, path, headers, resp, retry, tries)
        self.constrainer.settled(plan, 400 if result is None else result[0])
        return result

    def _read_plain(self, front: Front, raw: bytes, plan: Plan) -> tuple[bytes, Provenance] | None:
        """``_read_whole`` of a large answer, on the loop, when it reads at C speed (see
        ``OFFLOOP_PLAIN_BYTES``); None when it does not (nothing of it is kept)."""
        if len(raw) > OFFLOOP_PLAIN_BYTES or self.router is not None or not isinstance(plan.dialect, Dialect):
            return None  # (the renderer's reading, and auto's, are not bounded so)
        try:
            return self._read_whole(front, raw, plan, OFFLOOP_PLAIN_CALLS)
        except NotPlain:
            return None

    def _read_whole(self, front: Front, raw: bytes, plan: Plan,
                    plain: int | None = None) -> tuple[bytes, Provenance]:
        """A whole upstream answer read, repaired and written in the front's shape (``plain``:
        see ``repair_completion``)."""
        try:
            answer = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise RequestError("the upstream answered with invalid JSON", status=502,
                               type="upstream_error") from exc
        if plan.asked is not None and isinstance(answer, dict):
            answer["model"] = plan.asked
        if self.router is not None:
            answer, provenance = self.router.whole(answer, plan)
        else:
            answer, provenance = repair_completion(answer, plan, plain)
        return front.whole(answer, plan), provenance

    async def _again(self, front: Front, exc: InvalidArguments, headers: list[tuple[bytes, bytes]],
                     resp: Response, tries: Retries | None) -> Result:
        """A call that had to be valid is not: the upstream is asked again with the errors while
        ``tries`` allow (``--on-invalid retry``), else the answer is the error."""
        turn = tries.again(exc) if tries is not None else None
        if turn is None:
            return self.fail.invalid(front, resp, exc, tries)
        assert tries is not None
        self.metrics.inc("toolbridge_invalid_retries_total")
        log.info("asking the upstream again (retry %d of %d): %s", tries.made,
                 tries.made + tries.left, exc)
        try:
            plan, path, _ = self._route(turn)
        except RequestError as failed:
            log.warning("the retry cannot be sent: %s", failed)
            return self.fail.invalid(front, resp, exc, tries)
        result = await self._send(front, plan, path, headers, resp, False, tries)
        assert result is not None
        return result

    async def _stream(self, front: Front, up: Any, plan: Plan, resp: Response,
                      tries: Retries | None) -> Result | InvalidArguments:
        """Relay a streamed answer; an InvalidArguments is returned for ``_again``."""
        if tries is not None and tries.stream is not None:  # a retry: the client's stream goes on
            answer, encoder = tries.stream
            answer.restart(plan)
        else:
            answer = self.router.answer_stream(plan) if self.router is not None else AnswerStream(plan)
            encoder = front.stream(answer)
            begin = getattr(encoder, "begin", None)  # an encoder that registers its response first
            if begin is not None:
                await begin()
            resp.encoder = encoder
            resp.start(200, [(b"content-type", front.content_type), (b"cache-control", b"no-cache"),
                             (b"x-toolbridge-calls", b"streamed; see metrics and the log")])
            if tries is not None:
                tries.stream = answer, encoder
        self.metrics.open_streams += 1
        ticker = keepalive(encoder, resp)
        try:
            invalid = await self._relay(front, up, encoder, resp, plan, answer)
        except ClientDisconnected:
            log.info("client disconnected mid-stream; upstream request closed")
            gone = getattr(encoder, "disconnected", None)  # an encoder that keeps state for its stream
            if gone is not None:
                gone()
            invalid = None
        finally:
            self.metrics.open_streams -= 1
            if ticker is not None:
                ticker.cancel()
        return invalid or (200, encoder.provenance)

    async def _relay(self, front: Front, up: Any, encoder: Any, resp: Response,
                     plan: Plan, answer: AnswerStream) -> InvalidArguments | None:
        """Relay a stream: each upstream event is translated and written from the upstream
        connection's read callback (``SSEStream.each``); an event over ``OFFLOOP_BYTES`` is
        translated on a worker thread instead, while reading waits (``drain``). What ends the
        stream early is settled here, but for a call that had to be valid and is not: returned,
        the stream left open. Any other exception reaches ``serve``."""
        feed, write, loads = encoder.feed_sse, resp.write, orjson.loads
        asked = plan.asked
        content = getattr(encoder, "content_sse", None)  # a plain-content chunk, undecoded
        plain_sse = getattr(encoder, "plain_sse", None)  # its events when the parser reads it as plain
        plain = PlainBytes()
        text_of = plain.text
        chunks = 0
        ends = getattr(encoder, "event_end", b"\n\n")  # what ends each event it writes (counted)
        ended: list[tuple[str, str, str | None]] = []  # the error event that ends the stream
        invalid: list[InvalidArguments] = []
        deferred: list[bytes] = []  # a large event, for drain to translate off the loop

        def step(event: bytes, text: str | None) -> bytes | None:
            """The client's bytes for one upstream event (``text``: its content, when it is a
            plain-content chunk read from its bytes); None when it ends the stream."""
            try:
                if text is not None:  # nearly every chunk: its content, read from its bytes
                    return content(text)  # type: ignore[misc,no-any-return]
                try:
                    chunk = loads(event)
                except orjson.JSONDecodeError:
                    ended.append(("the upstream sent an invalid chunk", "upstream_error", None))
                    return None
                if asked is not None and isinstance(chunk, dict):
                    chunk["model"] = asked  # (a plain-content chunk's model is not read)
                if isinstance(chunk, dict) and "error" in chunk and not chunk.get("choices"):
                    ended.append((error_message(chunk["error"]), "upstream_error", None))
                    return None
                data: bytes = feed(chunk)
                if content is not None and plain.learning and encoder.ready:
                    plain.learn(event, chunk)
                return data
            except InvalidArguments as exc:
                invalid.append(exc)
                return None
            except RequestError as exc:
                ended.append((str(exc), exc.type, exc.code))
                return None

        def emit(data: bytes) -> None:
            nonlocal chunks
            if data:
                write(data)  # the chunks one upstream chunk gives, in one write
                chunks += data.count(ends)

        def handle(event: bytes) -> int:
            nonlocal chunks
            if event == b"[DONE]":
                if not answer.finished:  # cut short: an error, not a short answer
                    ended.append((UNFINISHED, "upstream_error", None))
                return STOP
            if len(event) > OFFLOOP_BYTES:
                deferred.append(event)
                return PAUSE  # reading waits (the rest of the read is kept) for drain
            text = text_of(event)
            if text is not None and plain_sse is not None:  # nearly every chunk: plain content
                data = plain_sse(text)
                if data is not None:  # one event or none: counted without a search
                    if data:
                        write(data)
                        chunks += 1
                    return PAUSE if resp.paused else GO
            data = step(event, text)
            if data is None:
                return STOP
            if data:  # emit's lines, without its call: this runs for every chunk
                write(data)
                chunks += data.count(ends)
            return PAUSE if resp.paused else GO

        async def drain() -> None:
            if deferred:
                event = deferred.pop()
                data = await self.cpu(True, "chunk", lambda: step(event, text_of(event)))
                if data is None:
                    raise _Ended
                emit(data)
            await resp.drain()

        try:
            stopped = await up.sse(self.config.max_event).each(handle, drain)
        except _Ended:
            stopped = True
        self.metrics.inc("toolbridge_streamed_chunks_total", chunks)
        if invalid:
            return invalid[0]
        if ended:
            return self.fail.stream_error(front, resp, *ended[0])
        if not stopped:
            return self.fail.stream_error(front, resp, "the upstream stream ended before it was complete",
                                     "upstream_error")
        try:
            closing = encoder.finish_sse()
            keep = getattr(encoder, "keep", None)  # an encoder that keeps its answer: before the end
            if keep is not None:
                await keep()
        except InvalidArguments as exc:
            return exc
        except RequestError as exc:
            return self.fail.stream_error(front, resp, str(exc), exc.type, exc.code)
        except StoreUnavailable as exc:
            self.fail.store_down(front, resp, exc)
            return None
        resp.end(closing + front.stream_end())
        return None


async def _bounded(exchange: Awaitable[Result], limit: float) -> Result:
    """``exchange`` awaited within ``limit`` seconds, the ``time_limit`` its front's turn
    context sets (a compaction's summary: ``--compact-timeout``); past it the upstream request is
    closed (the exchange is cancelled) and it is an UpstreamTimeout (504, or the stream's error
    event)."""
    try:
        return await asyncio.wait_for(exchange, limit)
    except asyncio.TimeoutError:  # (3.10: not the built-in TimeoutError)
        raise UpstreamTimeout(f"the answer took longer than its limit of {limit:g} s") from None


def upstream_body(plan: Plan, discard: bool) -> bytes:
    """``plan.body`` as JSON text. When the body is dropped once sent (``discard``), each field
    still holding the value whose text planning made (``Plan.texts``: by the same encoder, the
    same bytes) is written as that text instead of being encoded again. The texts are dropped
    either way: a plan lives as long as its stream."""
    body, texts = plan.body, plan.texts
    if texts:
        plan.texts = {}
        if discard:
            for key, (value, text) in texts.items():
                if body.get(key) is value:
                    body[key] = orjson.Fragment(text)
    return orjson.dumps(body)


def set_header(resp: Response, field: tuple[bytes, bytes]) -> None:
    """``field`` in every head of ``resp``, last, in place of a field of the same name set before
    (the request id set by the routes stays)."""
    name = field[0]
    for set_before in resp.extra:
        if set_before[0] == name:
            resp.extra = (*[f for f in resp.extra if f[0] != name], field)
            return
    resp.extra += (field,)


def keepalive(encoder: Any, resp: Response) -> asyncio.Task[None] | None:
    """For an encoder with ``idle_sse`` (its API's keep-alive: Messages' ``ping``, an SSE
    comment): a task that every ``encoder.idle_seconds`` writes what it gives when nothing was
    written to the client since the last look (an upstream reading a long prompt, a call held
    until it ends), until the response ends or the task is cancelled. None for other encoders."""
    idle = getattr(encoder, "idle_sse", None)
    if idle is None:
        return None

    async def tick() -> None:
        seen = resp.writes
        while not resp.finished:
            await asyncio.sleep(encoder.idle_seconds)
            if resp.writes == seen and not resp.finished:
                try:
                    resp.write(idle())
                except ClientDisconnected:
                    return
            seen = resp.writes

    return asyncio.get_running_loop().create_task(tick())
