"""Gateway configuration: every flag of ``toolbridge serve`` and its ``TOOLBRIDGE_*`` variable."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..dialects import fallback_dialect, get_dialect
from ..errors import ConfigError, RenderError
from .state import default_url, sqlite_path

if TYPE_CHECKING:
    from ..render import ChatTemplate
    from .upstream.models import Alias

UPSTREAM_APIS = ("chat", "completions")
ON_INVALID = ("pass", "reject", "retry")  # gateway/validation.py
CONSTRAIN = ("off", "required", "strict", "always")  # gateway/upstream/constraint.py
UPSTREAM_KINDS = ("auto", "vllm", "sglang", "llamacpp", "llama-cpp-python", "ollama", "openai")
REASONING_IN_CONTENT = ("auto", "on", "off")  # gateway/thinking.py
CONSTRAIN_DRIFT = ("constrain", "steer", "off")  # constrain/compiler.py DRIFT
MAX_RETRIES = 5  # each retry is a whole generation: a small bound keeps a request's cost bounded


@dataclass(frozen=True)
class GatewayConfig:
    upstream: str = ""  # the upstream's base URL, e.g. http://127.0.0.1:8000/v1
    host: str = "127.0.0.1"
    port: int = 8080
    tool_call_parser: str = "auto"
    api_key: str = ""  # clients must send it (Authorization: Bearer, or x-api-key)
    upstream_api_key: str = ""  # sent upstream; without it the client's Authorization passes through
    recover_from_reasoning: bool = False
    drop_reasoning_history: bool = False  # earlier turns reach the upstream without their reasoning
    stable_prompt: bool = True  # per-request values taken out of the system prompt (gateway/stable.py)
    keep_special_tokens: str = "auto"
    reasoning_in_content: str = "auto"  # reasoning an upstream wrote in the content: auto, on, off
    on_invalid: str = "pass"  # a call whose arguments fail the schema: pass, reject or retry
    no_coerce: bool = False  # leave recovered arguments untyped by the schema
    repair: bool = False  # read recovered JSON arguments leniently (each slip reported)
    stream_arguments: bool = False  # streams send a call's arguments as written, not each call whole
    retries: int = 1  # with on_invalid retry: how many times the upstream is asked again
    max_body: int = 8 << 20
    timeout: float = 300.0  # upstream silence, seconds
    connect_timeout: float = 10.0
    # Limits on what clients send (http.server.Limits) and on what the upstream answers.
    max_url: int = 8 << 10  # 414 above
    max_header_bytes: int = 64 << 10  # request target and header fields; 431 above
    max_headers: int = 100  # 431 above
    request_timeout: float = 60.0  # to receive a whole request; 408 after
    keepalive_timeout: float = 75.0  # an idle client connection is closed after
    max_answer: int = 64 << 20  # a whole upstream answer; 502 above
    max_event: int = 1 << 20  # one upstream SSE event; the stream ends with an error event above
    workers: int = 1
    graceful_timeout: float = 30.0  # seconds requests in flight have to finish on SIGTERM
    responses_store: int = 256  # responses kept for previous_response_id (0: none)
    responses_store_bytes: int = 256 << 20  # bytes the stored responses may account for (their JSON)
    responses_ttl: float = 3600.0  # seconds a stored response is kept
    # The gateway's secret: seals reasoning (encrypted_content) and keys the hashes of the callers'
    # credentials that scope the store; default: one per start
    responses_secret: str = ""
    # Compaction (fronts/responses/compaction.py): the summary's length in tokens (room for a dense
    # summary and the reasoning a model writes before it).
    compact_max_tokens: int = 4096
    compact_timeout: float = 600.0  # seconds the whole summary may take (4096 tokens at 10 a second, and more)
    # Where the store is (gateway/state): memory, sqlite:///path, redis://host:port/db, rediss://...;
    # empty: memory with one worker, a SQLite file under the user's runtime folder with more
    state: str = ""
    log_level: str = "info"
    # The Responses API over WebSocket (GET /v1/responses upgraded: gateway/http/websocket.py).
    websockets: bool = True  # off: an upgrade is answered 426 (clients fall back to HTTP)
    websocket_idle_timeout: float = 900.0  # seconds a socket may wait for its next turn
    websocket_lifetime: float = 3600.0  # seconds a socket lives (OpenAI's limit: 60 minutes)
    websocket_deflate: bool = True  # accept permessage-deflate when a client offers it (Codex does)
    # The prompt-injected tool protocol and the completions upstream mode (gateway/fallback.py).
    tool_fallback: bool = False
    fallback_dialect: str = "hermes"
    # Completions mode, the model's own template: tool results neutralised (render/guard.py).
    guard_tool_results: bool = True
    upstream_api: str = "chat"  # or "completions": render the prompt here
    model_dir: str = ""
    chat_template: str = ""
    # Constrained decoding (gateway/upstream/constraint.py): which requests, and how it is sent.
    constrain: str = "off"
    upstream_kind: str = "auto"  # auto: detected from the upstream's /v1/models
    # Model names (gateway/upstream/models.py): PATTERN=NAME entries separated by commas, and
    # how often the upstream's /v1/models is asked again (0: only at start and after a 404).
    model_alias: str = ""
    models_refresh: float = 60.0
    constrain_drift: str = "constrain"  # under auto: the fenced and bare calls recovery reads

    def upstream_parts(self) -> tuple[str, int, str]:
        """Host, port and base path (``/v1`` when the URL has none) of the upstream."""
        parts = urlsplit(self.upstream if "://" in self.upstream else "http://" + self.upstream)
        if parts.scheme != "http" or not parts.hostname:
            raise ConfigError(f"--upstream must be an http:// URL, not {self.upstream!r} (terminate TLS in front)")
        base = parts.path.rstrip("/") or "/v1"
        return parts.hostname, parts.port or 80, base

    def check(self) -> None:
        """Raise ConfigError for settings that cannot work (loading the chat template, if any)."""

        if not self.upstream:
            raise ConfigError("--upstream (or TOOLBRIDGE_UPSTREAM) is required")
        self.upstream_parts()
        if self.tool_call_parser != "auto":
            get_dialect(self.tool_call_parser)
        if self.keep_special_tokens not in ("auto", "always", "never"):
            raise ConfigError("--keep-special-tokens must be auto, always or never")
        if self.reasoning_in_content not in REASONING_IN_CONTENT:
            raise ConfigError(f"--reasoning-in-content must be auto, on or off, not {self.reasoning_in_content!r}")
        if self.on_invalid not in ON_INVALID:
            raise ConfigError(f"--on-invalid must be pass, reject or retry, not {self.on_invalid!r}")
        if not 0 <= self.retries <= MAX_RETRIES:
            raise ConfigError(f"--retries must be between 0 and {MAX_RETRIES}")
        if self.responses_store < 0 or self.responses_ttl <= 0 or self.responses_store_bytes < 1:
            raise ConfigError("--responses-store must be 0 or more, --responses-store-bytes and "
                              "--responses-ttl positive")
        if self.compact_max_tokens < 1 or self.compact_timeout <= 0:
            raise ConfigError("--compact-max-tokens and --compact-timeout must be positive")
        if self.state and self.state.partition(":")[0] not in ("memory", "sqlite", "redis", "rediss"):
            raise ConfigError(f"--state must be memory, sqlite:///path, redis://host:port/db or "
                              f"rediss://..., not {self.state!r}")
        if self.state.startswith("sqlite:"):
            sqlite_path(self.state)  # (a URL that names no file: ConfigError, before any worker starts)
        if self.workers > 1 and self.state == "memory":
            raise ConfigError("--state memory keeps each worker's records to itself: with --workers above 1, "
                              "leave --state out (a SQLite file the workers share) or name a shared store")
        if self.workers < 1 or self.max_body < 1 or self.timeout <= 0:
            raise ConfigError("--workers, --max-body and --timeout must be positive")
        if self.graceful_timeout < 0:
            raise ConfigError("--graceful-timeout must not be negative")
        if min(self.max_url, self.max_header_bytes, self.max_headers, self.max_answer, self.max_event) < 1 \
                or min(self.request_timeout, self.keepalive_timeout, self.websocket_idle_timeout,
                       self.websocket_lifetime) <= 0:
            raise ConfigError("the --max-* limits and the --*-timeout flags must be positive")
        if self.upstream_api not in UPSTREAM_APIS:
            raise ConfigError(f"--upstream-api must be chat or completions, not {self.upstream_api!r}")
        if self.model_dir and self.chat_template:
            raise ConfigError("give --model-dir or --chat-template, not both")
        if self.upstream_api == "completions" and not (self.model_dir or self.chat_template):
            raise ConfigError("--upstream-api completions renders the prompt: it needs --model-dir or "
                              "--chat-template")
        if self.constrain not in CONSTRAIN:
            raise ConfigError(f"--constrain must be off, required, strict or always, not {self.constrain!r}")
        if self.constrain_drift not in CONSTRAIN_DRIFT:
            raise ConfigError(f"--constrain-drift must be one of {', '.join(CONSTRAIN_DRIFT)}, "
                              f"not {self.constrain_drift!r}")
        if self.upstream_kind not in UPSTREAM_KINDS:
            raise ConfigError(f"--upstream-kind must be one of {', '.join(UPSTREAM_KINDS)}, "
                              f"not {self.upstream_kind!r}")
        if self.models_refresh < 0:
            raise ConfigError("--models-refresh must not be negative")
        self.aliases()
        fallback_dialect(self.fallback_dialect)
        self.template()

    def state_url(self) -> str:
        """The store's URL: ``--state``, else the default for the number of workers."""
        return self.state or default_url(self.workers, self.port)

    @property
    def rewrites_requests(self) -> bool:
        """Whether turns may be rendered or rewritten here (the completions mode, the injected
        protocol, or a chat template whose capabilities decide), not only relayed."""
        return (self.upstream_api != "chat" or self.tool_fallback or bool(self.model_dir)
                or bool(self.chat_template))

    def aliases(self) -> tuple[Alias, ...]:
        """The ``--model-alias`` entries in order; raises ConfigError for a malformed one."""
        from .upstream.models import parse_aliases

        return parse_aliases(self.model_alias)

    def template(self) -> ChatTemplate | None:
        """The chat template of ``--model-dir`` or ``--chat-template`` (None without either);
        raises ConfigError when it cannot be loaded. Needs the ``render`` extra (Jinja2)."""
        if not (self.model_dir or self.chat_template):
            return None
        from ..render import load_model_dir, load_template

        try:
            return load_model_dir(self.model_dir) if self.model_dir else load_template(self.chat_template)
        except RenderError as exc:
            raise ConfigError(str(exc)) from None


def env_defaults(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """Defaults from ``TOOLBRIDGE_<FLAG>`` variables (``TOOLBRIDGE_TOOL_CALL_PARSER`` ...)."""
    environ = dict(os.environ if environ is None else environ)
    out: dict[str, Any] = {}
    for f in fields(GatewayConfig):
        raw = environ.get("TOOLBRIDGE_" + f.name.upper())
        if raw is None:
            continue
        kind = type(f.default)
        try:
            out[f.name] = raw.lower() in ("1", "true", "yes", "on") if kind is bool else kind(raw)
        except ValueError:
            raise ConfigError(f"TOOLBRIDGE_{f.name.upper()}={raw!r} is not a valid {kind.__name__}") from None
    return out
