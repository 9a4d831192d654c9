"""How the pipeline answers a failure, for any front: a refusal, an invalid call that had to be
valid, an upstream failure or error, and anything no other handler took; each logged and counted.

Before the response head: the front's error body with the status; every 5xx the gateway makes
itself carries ``x-should-retry: false`` (the SDKs otherwise ask again, two more times by
default, and the upstream would generate again each time: the same request meets the same fault,
or waits the same timeout), but for 503 ``store_unavailable`` (``store_down``: a store back in a
moment serves the retry); an upstream's own error keeps its status and is left to the SDK's
rule. After it: the front's stream error event, which ends the stream. See ``pipeline``'s
docstring for the codes.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from ..errors import ToolBridgeError
from .http.client import UpstreamError, UpstreamTimeout
from .http.server import Response
from .http.sse import SSEError
from .metrics import Metrics
from .repair import Provenance
from .upstream.refusal import name_the_flag
from .validation import InvalidArguments, Retries

log = logging.getLogger("toolbridge.gateway")

JSON = [(b"content-type", b"application/json")]
NO_RETRY = (b"x-should-retry", b"false")
Result = tuple[int, Provenance]


class Failures:
    """The failure answers of one pipeline (its metrics; whether the injected protocol is on)."""

    def __init__(self, metrics: Metrics, tool_fallback: bool) -> None:
        self.metrics = metrics
        self.tool_fallback = tool_fallback

    def refuse(self, front: Any, resp: Response, status: int, message: str,
                type: str = "invalid_request_error", code: str | None = None,
                param: str | None = None) -> Result:
        resp.send(status, headers(status), front.error(message, type, code, param))
        return status, Provenance()

    def invalid(self, front: Any, resp: Response, exc: InvalidArguments,
                 tries: Retries | None) -> Result:
        """The answer to a call that had to be valid and is not: the error names each tool and
        its schema errors; 502 with ``x-should-retry: false`` (the policy decides on retries),
        or the stream's error event."""
        message = exc.after(tries.made if tries is not None else 0)
        self.metrics.inc("toolbridge_invalid_rejected_total")
        log.warning("answer rejected: %s", message)
        if resp.started:
            resp.end(stream_error(front, resp, message, exc.type, exc.code))
            return 200, Provenance()
        resp.send(exc.status, [*JSON, NO_RETRY], front.error(message, exc.type, exc.code))
        return exc.status, Provenance()

    def store_down(self, front: Any, resp: Response, exc: Exception) -> Result:
        """The store did not answer or could not write (``state.StoreUnavailable``, its message
        naming the store): 503 ``store_unavailable`` in the front's shape, or the stream's error
        event once it began. Counted; the openai SDK's retries may find it back."""
        self.metrics.inc("toolbridge_store_errors_total")
        log.warning("store unavailable: %s", exc)
        message, kind, code = f"the gateway's store is unavailable: {exc}", "server_error", "store_unavailable"
        if resp.started:
            resp.end(stream_error(front, resp, message, kind, code))
            return 200, Provenance()
        resp.send(503, JSON, front.error(message, kind, code))
        return 503, Provenance()

    def stream_error(self, front: Any, resp: Response, message: str, type: str,
                     code: str | None = None) -> None:
        self.metrics.inc("toolbridge_upstream_errors_total", kind="mid_stream")
        log.warning("stream ended with an error event: %s (%s)", message, code or type)
        resp.end(stream_error(front, resp, message, type, code))

    def failure(self, front: Any, resp: Response, exc: Exception, answer: bool = False) -> Result:
        """An exception no other handler took (``answer``: while reading a whole answer):
        logged, counted and answered as the module docstring says."""
        stage = "stream" if resp.started else "answer" if answer else "request"
        self.metrics.inc("toolbridge_internal_errors_total", stage=stage)
        detail = f"{type(exc).__name__}: {exc}"[:300]
        if isinstance(exc, ToolBridgeError):  # the library's own, reported on purpose
            log.warning("%s failed: %s", stage, detail)
        else:  # a bug: the traceback is what finds it
            log.error("%s failed: %s", stage, detail, exc_info=exc)
        if resp.finished:
            return 200, Provenance()
        if resp.started or answer:
            status, kind, code = 502, "upstream_error", "unreadable_answer"
            message = f"the gateway could not read the model's answer ({detail})"
        else:
            status, kind, code = 500, "server_error", "internal_error"
            message = f"internal error while handling the request ({detail})"
        if resp.started:
            resp.end(stream_error(front, resp, message, kind, code))
            return 200, Provenance()
        resp.send(status, [*JSON, NO_RETRY], front.error(message, kind, code))
        return status, Provenance()

    def upstream_failure(self, front: Any, resp: Response, exc: UpstreamError | SSEError) -> int:
        timeout = isinstance(exc, UpstreamTimeout)
        status = 504 if timeout else 502
        self.metrics.inc("toolbridge_upstream_errors_total", kind="timeout" if timeout else "unreachable")
        resp.send(status, headers(status), front.error(f"upstream {'timed out' if timeout else 'failed'}: {exc}",
                                                       "upstream_error"))
        return status

    def pass_error(self, front: Any, resp: Response, status: int, raw: bytes) -> int:
        """The upstream's error, status and message kept (wrapped when it is not JSON)."""
        self.metrics.inc("toolbridge_upstream_errors_total", kind=f"status_{status}")
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            parsed = None
        if not isinstance(parsed, dict) or "error" not in parsed:
            raw = front.error(f"upstream answered {status}: {raw[:2000].decode('utf-8', 'replace')}",
                              "upstream_error")
        if not self.tool_fallback:
            raw = name_the_flag(raw)  # "tools not supported": say which flag works around it
        if 400 <= status < 600:
            resp.send(status, JSON, front.upstream_error(raw))
        else:  # a status no error has: the gateway's own 502
            resp.send(502, headers(502), front.upstream_error(raw))
        return status


def headers(status: int) -> list[tuple[bytes, bytes]]:
    """The header fields of an error answer the gateway makes itself with ``status``."""
    return [*JSON, NO_RETRY] if status >= 500 else JSON


def error_message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


def stream_error(front: Any, resp: Response, message: str, type: str, code: str | None) -> bytes:
    """The last event of a stream that fails: the stream's encoder writes it when it has
    ``error_sse`` (an API whose events are numbered, as Responses'), else the front."""
    encoder = resp.encoder
    if encoder is not None and hasattr(encoder, "error_sse"):
        return encoder.error_sse(message, type, code)  # type: ignore[no-any-return]
    return front.stream_error(message, type, code)  # type: ignore[no-any-return]
