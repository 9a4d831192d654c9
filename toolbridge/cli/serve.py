"""``toolbridge serve``: the gateway's flags (each with its ``TOOLBRIDGE_*`` variable) and the run."""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields

from ..errors import ConfigError
from ..gateway.config import (CONSTRAIN, CONSTRAIN_DRIFT, MAX_RETRIES, ON_INVALID, REASONING_IN_CONTENT,
                              UPSTREAM_APIS, UPSTREAM_KINDS, GatewayConfig, env_defaults)
from .exits import EXIT_USAGE, missing_extra


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from ..gateway.config import GatewayConfig, env_defaults

    p = commands.add_parser(
        "serve",
        help="run the OpenAI-compatible gateway in front of an upstream",
        description="Every flag has a TOOLBRIDGE_<FLAG> variable (TOOLBRIDGE_UPSTREAM, ...).",
    )
    d = GatewayConfig()
    p.add_argument("--upstream", default=d.upstream, help="upstream base URL, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--host", default=d.host, help="listen address (default loopback)")
    p.add_argument("--port", type=int, default=d.port)
    p.add_argument("--tool-call-parser", default=d.tool_call_parser, help="dialect of the model's output (default auto: recognised from the output, "
                        "hinted by the request's model name)")
    p.add_argument("--api-key", default=d.api_key, help="key clients must send")
    p.add_argument("--upstream-api-key", default=d.upstream_api_key,
                   help="key sent upstream (default: the client's Authorization passes through)")
    p.add_argument("--drop-reasoning-history", action="store_true", default=d.drop_reasoning_history,
                   help="send earlier assistant turns upstream without their reasoning (default: "
                        "kept, as reasoning_content, for templates that read it)")
    p.add_argument("--stable-prompt", action=argparse.BooleanOptionalAction, default=d.stable_prompt,
                   help="take the values a client writes into its system prompt that change between "
                        "requests, though the model has no use for them (Claude Code's attribution "
                        "block: cch=, cc_version=), out of the upstream prompt, so that an upstream's "
                        "prefix cache holds across turns (default on; TOOLBRIDGE_STABLE_PROMPT=0: off)")
    p.add_argument("--recover-from-reasoning", action="store_true", default=d.recover_from_reasoning,
                   help="also take calls from reasoning_content/reasoning (off by default)")
    p.add_argument("--reasoning-in-content", choices=REASONING_IN_CONTENT, default=d.reasoning_in_content,
                   help="reasoning the upstream wrote inside the content (<think>...</think>) becomes "
                        "reasoning: auto (default) when the answer opens with it or the request asked "
                        "for thinking, on: always, off: never")
    p.add_argument("--keep-special-tokens", choices=("auto", "always", "never"), default=d.keep_special_tokens,
                   help="ask the upstream for skip_special_tokens=false (auto: when the markers are special)")
    p.add_argument("--on-invalid", choices=ON_INVALID, default=d.on_invalid,
                   help="a call whose arguments fail its tool's schema: pass it on (default), reject "
                        "the answer with an error, or retry (ask the upstream again with the errors); "
                        "a tool with \"strict\": true is never passed")
    p.add_argument("--stream-arguments", action="store_true", default=d.stream_arguments,
                   help="in streams, send a call's opening as soon as its name is known and its "
                        "arguments as the model writes them (default: each call in one piece, once "
                        "it has ended and been checked)")
    p.add_argument("--repair", action="store_true", default=d.repair,
                   help="read recovered JSON arguments leniently: trailing commas, single quotes, "
                        "True/None, unquoted keys, brackets left open at a clean end (each reported)")
    p.add_argument("--no-coerce", action="store_true", default=d.no_coerce,
                   help="do not type recovered calls' arguments by the tools' schemas (\"2\" -> 2 ...)")
    p.add_argument("--retries", type=int, default=d.retries,
                   help=f"with --on-invalid retry: how many times to ask again (default 1, at most {MAX_RETRIES})")
    p.add_argument("--max-body", type=int, default=d.max_body, help="largest request body in bytes (413 above)")
    p.add_argument("--timeout", type=float, default=d.timeout, help="seconds of upstream silence before 504")
    p.add_argument("--connect-timeout", type=float, default=d.connect_timeout)
    _limit_flags(p, d)
    _responses_flags(p, d)
    p.add_argument("--workers", type=int, default=d.workers,
                   help="processes sharing the port (one that dies is restarted)")
    p.add_argument("--graceful-timeout", type=float, default=d.graceful_timeout,
                   help="on SIGTERM or SIGINT, seconds requests in flight have to finish (default 30)")
    p.add_argument("--log-level", default=d.log_level)
    _fallback_flags(p, d)
    _constrain_flags(p, d)
    _model_flags(p, d)
    p.set_defaults(handler=run, **_env_or_exit(env_defaults))


def _env_or_exit(read: object) -> dict[str, object]:
    try:
        return read()  # type: ignore[operator,no-any-return]
    except ConfigError as exc:
        print(f"toolbridge: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None


def run(args: argparse.Namespace) -> int:
    if args.model_aliases:  # the flags, when given, replace TOOLBRIDGE_MODEL_ALIAS
        args.model_alias = ",".join(args.model_aliases)
    config = GatewayConfig(**{f.name: getattr(args, f.name) for f in fields(GatewayConfig)})
    if config.api_key == "" and config.host not in ("127.0.0.1", "localhost", "::1"):
        print("toolbridge: warning: listening beyond loopback without --api-key", file=sys.stderr)
    lacking = missing_extra("serve") or (missing_extra("render") if config.model_dir or config.chat_template
                                         or config.tool_fallback or config.upstream_api != "chat" else None) \
        or (missing_extra("redis") if config.state.startswith(("redis:", "rediss:")) else None)
    if lacking:
        print(lacking, file=sys.stderr)
        return EXIT_USAGE
    from ..gateway.run import run as run_gateway  # the HTTP stack: only when serving

    try:
        return run_gateway(config)
    except ConfigError as exc:
        print(f"toolbridge: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _limit_flags(p: argparse.ArgumentParser, d: GatewayConfig) -> None:
    """The limits on requests and upstream answers (README: Limits and failure behaviour)."""
    p.add_argument("--max-url", type=int, default=d.max_url, help="largest request URL in bytes (414 above)")
    p.add_argument("--max-header-bytes", type=int, default=d.max_header_bytes,
                   help="largest URL plus header fields in bytes (431 above)")
    p.add_argument("--max-headers", type=int, default=d.max_headers, help="most header fields (431 above)")
    p.add_argument("--request-timeout", type=float, default=d.request_timeout,
                   help="seconds to receive a whole request (408 after)")
    p.add_argument("--keepalive-timeout", type=float, default=d.keepalive_timeout,
                   help="seconds an idle client connection is kept")
    p.add_argument("--max-answer", type=int, default=d.max_answer,
                   help="largest whole upstream answer in bytes (502 above)")
    p.add_argument("--max-event", type=int, default=d.max_event,
                   help="largest upstream SSE event in bytes (the stream ends with an error event above)")


def _responses_flags(p: argparse.ArgumentParser, d: GatewayConfig) -> None:
    """The Responses front's store and reasoning seal (README: the Responses front)."""
    p.add_argument("--state", default=d.state,
                   help="where stored responses, their items and Messages thread turns are kept: memory, "
                        "sqlite:///path (a file the workers of one machine share), redis://host:port/db or "
                        "rediss://... (a Redis or Valkey server several gateways share; the redis extra) "
                        "(default: memory with one worker, a SQLite file under the user's runtime folder "
                        "with --workers above 1)")
    p.add_argument("--responses-store", type=int, default=d.responses_store,
                   help="responses kept for previous_response_id and GET, and Messages thread turns, "
                        "in the store (--state) (0: none)")
    p.add_argument("--responses-store-bytes", type=int, default=d.responses_store_bytes,
                   help="bytes the stored responses may account for, their JSON (the least recently "
                        "stored go first)")
    p.add_argument("--responses-ttl", type=float, default=d.responses_ttl,
                   help="seconds a stored response is kept")
    p.add_argument("--websockets", action=argparse.BooleanOptionalAction, default=d.websockets,
                   help="serve the Responses API over WebSocket on GET /v1/responses (on by default; "
                        "off: an upgrade gets 426 and clients such as Codex use HTTP)")
    p.add_argument("--websocket-idle-timeout", type=float, default=d.websocket_idle_timeout,
                   help="seconds a socket may wait for its next response.create (then closed, 1001)")
    p.add_argument("--websocket-lifetime", type=float, default=d.websocket_lifetime,
                   help="seconds a socket lives, 60 minutes as OpenAI's (then closed after its turn, 1001)")
    p.add_argument("--websocket-deflate", action=argparse.BooleanOptionalAction, default=d.websocket_deflate,
                   help="accept permessage-deflate when a socket's client offers it (on by default, as "
                        "Codex offers it; off: plain frames, a little less work a turn where bytes are "
                        "free, on loopback)")
    p.add_argument("--responses-secret", default=d.responses_secret,
                   help="secret that seals reasoning into encrypted_content and keys the hashes of "
                        "callers' credentials that scope the store (default: one per start, shared by "
                        "its workers)")
    p.add_argument("--compact-max-tokens", type=int, default=d.compact_max_tokens,
                   help="longest conversation summary the upstream may write when a client compacts "
                        "(POST /v1/responses/compact, or a compaction_trigger input item), in tokens")
    p.add_argument("--compact-timeout", type=float, default=d.compact_timeout,
                   help="seconds the upstream may take to write a conversation summary, in all (504 after, "
                        "or the stream's error event)")


def _fallback_flags(p: argparse.ArgumentParser, d: GatewayConfig) -> None:
    """The flags of the completions mode and the injected protocol (gateway/upstream/fallback.py)."""
    p.add_argument("--tool-fallback", action="store_true", default=d.tool_fallback,
                   help="write tools, calls and results into the prompt as ordinary turns when the "
                        "template or upstream has no tool support (off by default)")
    p.add_argument("--fallback-dialect", default=d.fallback_dialect,
                   help="the call format the injected protocol asks for (default hermes)")
    p.add_argument("--guard-tool-results", action=argparse.BooleanOptionalAction,
                   default=d.guard_tool_results,
                   help="in the completions mode, write whatever in a tool result a parser could "
                        "read as a call (markers, special tokens, bare JSON/Python calls) with one "
                        "character as a reference, so that a model copying it forges no call "
                        "(on by default; the injected protocol always does)")
    p.add_argument("--upstream-api", choices=UPSTREAM_APIS, default=d.upstream_api,
                   help="chat: the upstream's /chat/completions; completions: render the prompt "
                        "here and call its /completions")
    p.add_argument("--model-dir", default=d.model_dir,
                   help="model folder with the chat template (chat_template.jinja or tokenizer_config.json)")
    p.add_argument("--chat-template", default=d.chat_template, help="a Jinja chat template file")


def _constrain_flags(p: argparse.ArgumentParser, d: GatewayConfig) -> None:
    """Constrained decoding (README: Constrained decoding in the gateway)."""
    p.add_argument("--constrain", choices=CONSTRAIN, default=d.constrain,
                   help="send the upstream a grammar of the dialect and the offered tools: off (default), "
                        "required (tool_choice required or a named function), strict (those and requests "
                        "with a strict tool), always (every request with tools; under auto the calls are "
                        "triggered, prose stays free)")
    p.add_argument("--constrain-drift", choices=CONSTRAIN_DRIFT, default=d.constrain_drift,
                   help="under tool_choice auto, for dialects whose recovery also reads a call in a "
                        "```json fence or bare (Hermes and kin): constrain those too (default), steer "
                        "(prose holds no fence, so the model must use the marker) or off")
    p.add_argument("--upstream-kind", choices=UPSTREAM_KINDS, default=d.upstream_kind,
                   help="how the grammar is sent (default auto: detected once from the upstream's "
                        "/v1/models and its Server header)")


def _model_flags(p: argparse.ArgumentParser, d: GatewayConfig) -> None:
    """Model names (README: Model names)."""
    p.add_argument("--model-alias", dest="model_aliases", action="append", metavar="PATTERN=NAME",
                   help="send a request for a model the upstream does not serve whose name matches the "
                        "glob PATTERN as NAME (repeatable, the first match wins; TOOLBRIDGE_MODEL_ALIAS: "
                        "several separated by commas); without a match, a name the upstream does not "
                        "serve goes to its only model")
    p.set_defaults(model_alias=d.model_alias)
    p.add_argument("--models-refresh", type=float, default=d.models_refresh,
                   help="seconds between fetches of the upstream's /v1/models (default 60; 0: only at "
                        "start and after the upstream answers 404)")
