"""Chat requests the plain relay cannot serve: the completions upstream mode, and the opt-in
prompt-injected tool protocol (``--tool-fallback``) in front of a chat upstream.

``FallbackHandler.for_gateway`` returns None when neither is configured, and the gateway relays
as before (this module is then not on any request's path). Otherwise it serves
``/v1/chat/completions``:

- completions mode: render the prompt (``completions.render_request``), call
  ``/v1/completions``, translate the text;
- chat mode with the flag: send the request as it is; when the upstream answers with a
  recognisable "tools not supported" error, retry once with the protocol written into the
  messages (no ``tools`` sent) and parse the answer in the fallback dialect. A model that
  refused once is sent the protocol directly afterwards. With ``--chat-template`` or
  ``--model-dir`` the template's probed capabilities decide up front instead.

Without the flag, ``name_the_flag`` adds the flag to such an upstream error, and a template
without tool support is answered 400 naming the flag (FallbackRequired).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import orjson

from ...errors import ConfigError, RenderError
from ...render import ChatTemplate, FallbackRequired, inject, missing
from ...render.prompt import FLAG_HINT, capabilities
from ..http.client import UpstreamError
from ..http.server import ClientDisconnected, Request, Response
from .completions import TextPlan, TextTranslator, render_request, whole_answer
from ..fronts.chat import Plan, RequestError, plan_request
from ..repair import Provenance, repair_completion
from ..http.sse import SSEError
from ..streaming import StreamTranslator

if TYPE_CHECKING:
    from ..config import GatewayConfig
    from ..app import Gateway

log = logging.getLogger("toolbridge.gateway")

# How upstreams say that they will not take ``tools`` (Ollama, vLLM, llama.cpp), lower-cased.
REFUSALS = ("does not support tools", "--enable-auto-tool-choice", "--tool-call-parser",
            "tools param requires --jinja")
_TOOL_FIELDS = ("tools", "tool_choice", "parallel_tool_calls")
_MAX_BODY = 64 << 20


def is_refusal(raw: bytes) -> bool:
    """Whether an upstream error body says that it does not take tools."""
    text = raw[:4000].decode("utf-8", "replace").lower()
    return any(fragment in text for fragment in REFUSALS)


def name_the_flag(raw: bytes) -> bytes:
    """An upstream "tools not supported" error with the flag that works around it added."""
    if not is_refusal(raw):
        return raw
    try:
        body = orjson.loads(raw)
        message = str(body["error"]["message"])
    except (orjson.JSONDecodeError, KeyError, TypeError):
        message = raw[:2000].decode("utf-8", "replace")
    hint = f" (toolbridge: the upstream takes no tools; {FLAG_HINT} writes them into the prompt)"
    return orjson.dumps({"error": {"message": message + hint, "type": "invalid_request_error",
                                   "param": "tools", "code": "tool_fallback_required"}})


def injected_body(body: dict[str, Any], dialect: str) -> dict[str, Any]:
    """A chat request with the protocol written into its messages and no tool fields."""
    out = {k: v for k, v in body.items() if k not in _TOOL_FIELDS}
    out["messages"] = inject(body["messages"], body.get("tools"), dialect=dialect,
                             tool_choice=body.get("tool_choice"),
                             parallel=body.get("parallel_tool_calls", True) is not False)
    return out


def _uses_tools(body: dict[str, Any]) -> bool:
    return bool(body.get("tools")) or any(
        isinstance(m, dict) and (m.get("role") == "tool" or m.get("tool_calls"))
        for m in body.get("messages") or ())


JSON = [(b"content-type", b"application/json")]
SSE = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]


def _error(message: str, code: str | None = None, param: str | None = None) -> bytes:
    return orjson.dumps({"error": {"message": message, "type": "invalid_request_error",
                                   "param": param, "code": code}})


class FallbackHandler:
    """Serves ``/v1/chat/completions`` for a gateway in completions mode or with the flag."""

    def __init__(self, gateway: Gateway, template: ChatTemplate | None) -> None:
        config = gateway.config
        self.gateway = gateway
        self.template = template
        self.completions = config.upstream_api == "completions"
        self.flag = config.tool_fallback
        self.dialect = config.fallback_dialect
        self._refusing: set[Any] = set()  # models whose upstream refused tools

    @classmethod
    def for_gateway(cls, gateway: Gateway) -> FallbackHandler | None:
        """The handler the gateway's configuration needs, or None (plain relay)."""
        config = gateway.config
        template = config.template()
        if config.upstream_api == "chat" and not config.tool_fallback and template is None:
            return None
        return cls(gateway, template)

    async def chat(self, req: Request, resp: Response) -> tuple[int, Provenance]:
        try:
            body = orjson.loads(req.body)
            plan = plan_request(body, self.gateway.settings)
            path, plan, retry = self._prepare(body, plan)
        except orjson.JSONDecodeError as exc:
            resp.send(400, JSON, _error(f"the request body is not valid JSON: {exc}"))
            return 400, Provenance()
        except RequestError as exc:
            resp.send(exc.status, JSON, orjson.dumps(exc.body()))
            return exc.status, Provenance()
        except (ConfigError, RenderError) as exc:
            code = "tool_fallback_required" if isinstance(exc, FallbackRequired) else None
            resp.send(400, JSON, _error(str(exc), code, "messages"))
            return 400, Provenance()
        headers = self.gateway._upstream_headers(req, plan.stream)
        try:
            result = await self._send(plan, path, headers, resp, retry)
            if result is None:  # the upstream refused tools: once more, with the protocol
                self._remember(body.get("model"))
                log.info("upstream refused tools for model %r; retrying with the injected "
                         "protocol", body.get("model"))
                result = await self._send(self._injected(body, plan), path, headers, resp, False)
            assert result is not None
            return result
        except RequestError as exc:  # the history cannot be written as the protocol
            resp.send(exc.status, JSON, orjson.dumps(exc.body()))
            return exc.status, Provenance()
        except (UpstreamError, SSEError) as exc:
            if resp.started:
                self.gateway._stream_error(resp, str(exc), "upstream_error")
                return 200, Provenance()
            return self.gateway._upstream_failure(resp, exc), Provenance()

    def _remember(self, model: Any) -> None:
        if len(self._refusing) >= 256:  # model names come from clients: keep the set bounded
            self._refusing.pop()
        self._refusing.add(model)

    def _prepare(self, body: dict[str, Any], plan: Plan) -> tuple[str, Plan, bool]:
        """Where the request goes, how its answer is read, and whether a refusal is retried."""
        if self.completions:
            assert self.template is not None
            text_plan = render_request(body, plan, self.template, tool_fallback=self.flag,
                                       fallback_dialect=self.dialect)
            return "/completions", text_plan, False
        if not _uses_tools(body):
            return "/chat/completions", plan, False
        if self.template is not None:
            lacking = missing(capabilities(self.template), body["messages"], body.get("tools"),
                              body.get("tool_choice"))
            if lacking and not self.flag:
                raise FallbackRequired(
                    f"chat template {self.template.name} does not render {', '.join(lacking)}; "
                    f"enable the prompt-injected tool protocol with {FLAG_HINT}")
            if lacking:
                return "/chat/completions", self._injected(body, plan), False
        if self.flag and body.get("model") in self._refusing:
            return "/chat/completions", self._injected(body, plan), False
        return "/chat/completions", plan, self.flag

    def _injected(self, body: dict[str, Any], plan: Plan) -> Plan:
        from ...dialects import get_dialect

        try:
            plan.body = injected_body(plan.body, self.dialect)
        except RenderError as exc:
            raise RequestError(str(exc), param="messages") from exc
        plan.dialect = get_dialect(self.dialect)
        plan.drop_tokens = (plan.dialect.end_tokens if plan.body.get("skip_special_tokens") is False
                            else ())
        return plan

    async def _send(self, plan: Plan, path: str, headers: list[tuple[bytes, bytes]], resp: Response,
                    retry: bool) -> tuple[int, Provenance] | None:
        """One upstream exchange; None when it was refused for tools and ``retry`` is set."""
        g = self.gateway
        assert g.pool is not None
        async with g.pool.request("POST", g._base + path, headers, orjson.dumps(plan.body)) as up:
            if up.status != 200:
                raw = await up.read(_MAX_BODY)
                if retry and is_refusal(raw):
                    return None
                return g._pass_error(resp, up.status, raw), Provenance()
            if plan.stream:
                return await self._stream(up, plan, resp)
            raw = await up.read(_MAX_BODY)
        try:
            answer = orjson.loads(raw)
            answer, provenance = (whole_answer(answer, plan) if isinstance(plan, TextPlan)
                                  else repair_completion(answer, plan))
        except orjson.JSONDecodeError:
            resp.send(502, JSON, orjson.dumps({"error": {
                "message": "the upstream answered with invalid JSON", "type": "upstream_error",
                "param": None, "code": None}}))
            return 502, Provenance()
        except RequestError as exc:
            resp.send(exc.status, JSON, orjson.dumps(exc.body()))
            return exc.status, Provenance()
        resp.send(200, [*JSON, (b"x-toolbridge-calls", provenance.header().encode())],
                  orjson.dumps(answer))
        return 200, provenance

    async def _stream(self, up: Any, plan: Plan, resp: Response) -> tuple[int, Provenance]:
        g = self.gateway
        translator: Any = (TextTranslator(plan) if isinstance(plan, TextPlan)
                           else StreamTranslator(plan))
        resp.start(200, [*SSE, (b"x-toolbridge-calls", b"streamed; see metrics and the log")])
        g.metrics.open_streams += 1
        try:
            await g._relay(up, translator, resp)
        except ClientDisconnected:
            log.info("client disconnected mid-stream; upstream request closed")
        finally:
            g.metrics.open_streams -= 1
        return 200, translator.provenance
