"""Tool-call accuracy of a real model (``toolbridge bench --model``, ``make bench-model``).

Prompts of our own over ten tools (single calls, typed arguments, dotted names, parallel calls,
no call, multi-turn), sent at temperature 0 to the model of ``bench/model.py`` on
llama-cpp-python's server, in these configurations:

- ``engine``: the server alone (its chat endpoint with the tools): its native ``tool_calls``;
- ``recovery``: toolbridge's parser (``auto``) on that same answer, which is what
  ``toolbridge serve`` returns for it (at temperature 0 the gateway sends the same prompt);
- ``constrain auto``: through ``toolbridge serve --constrain always``, ``tool_choice: auto``,
  with the drifted openers constrained (``--constrain-drift constrain``) or steered (``steer``);
- ``constrain required``: the same gateway, ``tool_choice: required`` (for the prompts that need
  a call).

Each answer is scored against the prompt's expected calls: call rate (a native call where one
is expected), exact-call rate (the expected calls, names and arguments, strings compared without
case), false-call rate (a call where none is expected), OpenRouter's three error buckets over
the native calls returned (invalid JSON, unknown name, schema mismatch), schema-valid calls,
what toolbridge refused (its report's rejected calls) and the median latency.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..parsing.parser import parse


def _tool(name: str, description: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": props, "required": required}}}


S, I, N = {"type": "string"}, {"type": "integer"}, {"type": "number"}
TOOLS = [
    _tool("get_weather", "Get the current weather for a city", {"city": S}, ["city"]),
    _tool("get_stock_price", "Get the latest price of a stock by its ticker symbol", {"symbol": S}, ["symbol"]),
    _tool("search_web", "Search the web", {"query": S, "max_results": I}, ["query"]),
    _tool("send_email", "Send an email", {"to": S, "subject": S, "body": S}, ["to", "subject", "body"]),
    _tool("create_event", "Create a calendar event", {"title": S, "date": {"type": "string", "description":
                                                     "YYYY-MM-DD"}, "duration_minutes": I}, ["title", "date"]),
    _tool("convert_currency", "Convert an amount of money", {"amount": N, "from_currency": S, "to_currency": S},
          ["amount", "from_currency", "to_currency"]),
    _tool("set_timer", "Start a countdown timer", {"minutes": I}, ["minutes"]),
    _tool("translate", "Translate text", {"text": S, "target_language": S}, ["text", "target_language"]),
    _tool("calendar.list_events", "List the calendar events of a day", {"date": {"type": "string", "description":
                                                                        "YYYY-MM-DD"}}, ["date"]),
    _tool("files.read", "Read a file", {"path": S}, ["path"]),
]
SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Prompt:
    kind: str
    messages: list[dict[str, Any]]
    calls: list[Call] = field(default_factory=list)  # expected; [] for no call


def _user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def _after(question: str, call: Call, result: str, then: str | None = None) -> list[dict[str, Any]]:
    """A conversation where ``call`` was made for ``question`` and returned ``result``."""
    turns = [{"role": "user", "content": question},
             {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {
                 "name": call[0], "arguments": json.dumps(call[1])}}]},
             {"role": "tool", "tool_call_id": "call_1", "content": result}]
    return turns + ([{"role": "user", "content": then}] if then else [])


PROMPTS = [
    Prompt("single", _user("What is the weather in Paris right now?"), [("get_weather", {"city": "Paris"})]),
    Prompt("single", _user("What is the current stock price of AAPL?"), [("get_stock_price", {"symbol": "AAPL"})]),
    Prompt("single", _user("Translate 'good morning' into Spanish."),
           [("translate", {"text": "good morning", "target_language": "Spanish"})]),
    Prompt("single", _user("Search the web for python 3.13 release notes."),
           [("search_web", {"query": "python 3.13 release notes"})]),
    Prompt("typed", _user("Set a timer for 15 minutes."), [("set_timer", {"minutes": 15})]),
    Prompt("typed", _user("Convert 100 USD to EUR."),
           [("convert_currency", {"amount": 100, "from_currency": "USD", "to_currency": "EUR"})]),
    Prompt("typed", _user("Create a calendar event titled 'Team sync' on 2025-03-04 lasting 30 minutes."),
           [("create_event", {"title": "Team sync", "date": "2025-03-04", "duration_minutes": 30})]),
    Prompt("typed", _user("Search the web for 'llama.cpp grammar' and return at most 3 results."),
           [("search_web", {"query": "llama.cpp grammar", "max_results": 3})]),
    Prompt("dotted", _user("List my calendar events for 2025-03-04."), [("calendar.list_events", {"date": "2025-03-04"})]),
    Prompt("dotted", _user("Read the file README.md."), [("files.read", {"path": "README.md"})]),
    Prompt("parallel", _user("What is the weather in Paris and in Tokyo?"),
           [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})]),
    Prompt("parallel", _user("Get the stock prices of AAPL and MSFT."),
           [("get_stock_price", {"symbol": "AAPL"}), ("get_stock_price", {"symbol": "MSFT"})]),
    Prompt("no-call", _user("What is 2 + 2?")),
    Prompt("no-call", _user("Write a haiku about autumn.")),
    Prompt("no-call", _user("What does HTTP stand for?")),
    Prompt("no-call", _user("Say hello in French.")),
    Prompt("multi-turn", _after("What is the weather in Paris?", ("get_weather", {"city": "Paris"}),
                                '{"temperature_c": 18, "conditions": "sunny"}')),
    Prompt("multi-turn", _after("What is the weather in Paris?", ("get_weather", {"city": "Paris"}),
                                '{"temperature_c": 18, "conditions": "sunny"}', "And what about Rome?"),
           [("get_weather", {"city": "Rome"})]),
    Prompt("multi-turn", _after("What is AAPL trading at?", ("get_stock_price", {"symbol": "AAPL"}),
                                '{"price": 187.2}', "Now send that price to bob@example.com by email."),
           [("send_email", {"to": "bob@example.com"})]),  # (only what is certain: the recipient)
]


@dataclass
class Answer:
    calls: list[dict[str, Any]]  # native tool_calls
    seconds: float
    rejected: int = 0  # calls toolbridge saw and refused (its report or header)


def post(url: str, body: dict[str, Any], timeout: float = 600) -> tuple[dict[str, Any], dict[str, str]]:
    request = urllib.request.Request(url + "/chat/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json", "authorization": "Bearer sk-local"})
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        return json.loads(answer.read()), dict(answer.headers.items())


def _body(prompt: Prompt, max_tokens: int, choice: str = "auto") -> dict[str, Any]:
    return {"model": "qwen2.5-coder-0.5b-instruct", "messages": prompt.messages, "tools": TOOLS,
            "tool_choice": choice, "temperature": 0, "max_tokens": max_tokens}


def engine_and_recovery(url: str, prompt: Prompt, max_tokens: int) -> tuple[Answer, Answer]:
    """The engine's own answer, and toolbridge's parser on it (as the gateway reads it)."""
    start = time.monotonic()
    answer, _ = post(url, _body(prompt, max_tokens))
    seconds = time.monotonic() - start
    message = answer["choices"][0]["message"]
    engine = Answer(list(message.get("tool_calls") or []), seconds)
    start = time.monotonic()
    result = parse(message.get("content") or "", "auto", TOOLS, hint="hermes")
    calls = list(result.message.get("tool_calls") or [])
    return engine, Answer(calls, seconds + time.monotonic() - start, len(result.report.rejected))


def through(url: str, prompt: Prompt, max_tokens: int, choice: str) -> Answer:
    start = time.monotonic()
    answer, headers = post(url, _body(prompt, max_tokens, choice))
    counts = dict(p.strip().split("=", 1) for p in headers.get("x-toolbridge-calls", "").split(";") if "=" in p)
    calls = list(answer["choices"][0]["message"].get("tool_calls") or [])
    return Answer(calls, time.monotonic() - start, int(counts.get("rejected", 0)) + int(counts.get("aborted", 0)))


# ---------------------------------------------------------------- scoring

_TOOLSET: Any = None


def _errors(call: dict[str, Any]) -> str | None:
    """The OpenRouter bucket of one returned call, or None when it is a valid call."""
    global _TOOLSET
    if _TOOLSET is None:
        from ..tools import Toolset

        _TOOLSET = Toolset(TOOLS)
    function = call.get("function") or {}
    try:
        arguments = json.loads(function.get("arguments") or "")
    except ValueError:
        return "invalid_json"
    if function.get("name") not in SCHEMAS:
        return "unknown_name"
    return "schema_mismatch" if _TOOLSET.validate(function["name"], arguments) else None


def _same(value: Any, want: Any) -> bool:
    if isinstance(value, bool) != isinstance(want, bool):
        return False
    if isinstance(want, str) and isinstance(value, str):
        return value.strip().casefold() == want.strip().casefold()
    if isinstance(want, (int, float)) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) == float(want)
    return bool(value == want)


def exact(calls: list[dict[str, Any]], expected: list[Call]) -> bool:
    """The expected calls, no more: each by name with (at least) its expected arguments."""
    if len(calls) != len(expected):
        return False
    left = []
    for call in calls:
        try:
            left.append((call["function"]["name"], json.loads(call["function"]["arguments"])))
        except (KeyError, ValueError):
            return False
    for name, want in expected:
        found = next((i for i, (n, a) in enumerate(left) if n == name and isinstance(a, dict)
                      and all(k in a and _same(a[k], v) for k, v in want.items())), None)
        if found is None:
            return False
        left.pop(found)
    return True


def score(pairs: list[tuple[Prompt, Answer]]) -> dict[str, Any]:
    """One configuration's row."""
    wanted = [(p, a) for p, a in pairs if p.calls]
    free = [(p, a) for p, a in pairs if not p.calls]
    calls = [c for _, a in pairs for c in a.calls]
    buckets = {"invalid_json": 0, "unknown_name": 0, "schema_mismatch": 0}
    for call in calls:
        bucket = _errors(call)
        if bucket:
            buckets[bucket] += 1

    def rate(hits: int, of: int) -> float | None:
        return round(100 * hits / of, 1) if of else None

    return {"answers": len(pairs),
            "call_rate": rate(sum(bool(a.calls) for _, a in wanted), len(wanted)),
            "exact_rate": rate(sum(exact(a.calls, p.calls) for p, a in wanted), len(wanted)),
            "false_call_rate": rate(sum(bool(a.calls) for _, a in free), len(free)),
            "calls": len(calls), **buckets,
            "schema_valid": rate(len(calls) - sum(buckets.values()), len(calls)),
            "refused": sum(a.rejected for _, a in pairs),
            "median_s": round(statistics.median(a.seconds for _, a in pairs), 2) if pairs else None}


COLUMNS = (("configuration", "configuration"), ("answers", "n"), ("call_rate", "call %"),
           ("exact_rate", "exact %"), ("false_call_rate", "false-call %"), ("calls", "calls"),
           ("invalid_json", "invalid JSON"), ("unknown_name", "unknown name"),
           ("schema_mismatch", "schema mismatch"), ("schema_valid", "schema-valid %"),
           ("refused", "refused"), ("median_s", "median s"))


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table (``-`` where a rate has no case)."""
    lines = ["| " + " | ".join(title for _, title in COLUMNS) + " |",
             "|" + "|".join("---" if k == "configuration" else "---:" for k, _ in COLUMNS) + "|"]
    for row in rows:
        lines.append("| " + " | ".join("-" if row.get(k) is None else str(row.get(k)) for k, _ in COLUMNS) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------- the run

CONFIGS = ("engine", "recovery", "constrain auto (drift constrained)", "constrain auto (drift steered)",
           "constrain required")


def run(prompts: list[Prompt], max_tokens: int, say: Any = print, upstream: str = "") -> list[dict[str, Any]]:
    """Every configuration over ``prompts``, with one model server (``upstream``: one already
    running) and one gateway per drift."""
    from .model import LlamaServer, Serve, cache_dir, template_path

    answers: dict[str, list[tuple[Prompt, Answer]]] = {c: [] for c in CONFIGS}
    flags = ("--constrain", "always", "--chat-template", str(template_path()))
    log = cache_dir() / "toolbridge-serve.log"
    server: Any = _Running(upstream) if upstream else LlamaServer()
    with server as llama, Serve(llama.url, *flags, "--constrain-drift", "constrain", log=log) as drift, \
            Serve(llama.url, *flags, "--constrain-drift", "steer", log=log) as steer:
        for i, prompt in enumerate(prompts, 1):
            say(f"bench-model: prompt {i}/{len(prompts)} ({prompt.kind})")
            engine, recovered = engine_and_recovery(llama.url, prompt, max_tokens)
            answers["engine"].append((prompt, engine))
            answers["recovery"].append((prompt, recovered))
            answers[CONFIGS[2]].append((prompt, through(drift.url, prompt, max_tokens, "auto")))
            answers[CONFIGS[3]].append((prompt, through(steer.url, prompt, max_tokens, "auto")))
            if prompt.calls:
                answers[CONFIGS[4]].append((prompt, through(drift.url, prompt, max_tokens, "required")))
    return [{"configuration": name, **score(pairs)} for name, pairs in answers.items()]


def _per_kind(n: int) -> list[Prompt]:
    seen: dict[str, int] = {}
    kept = []
    for prompt in PROMPTS:
        seen[prompt.kind] = seen.get(prompt.kind, 0) + 1
        if seen[prompt.kind] <= n:
            kept.append(prompt)
    return kept


class _Running:
    """A server already running at ``url`` (``--upstream``), as LlamaServer is used."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    def __enter__(self) -> _Running:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="toolbridge bench --model", description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-tokens", type=int, default=80, help="per answer (default 80)")
    ap.add_argument("--per-kind", type=int, default=0, help="only the first N prompts of each kind (0: all)")
    ap.add_argument("--out", default="benchmarks/model/results.json", help="the results file")
    ap.add_argument("--upstream", default="", help="a llama-cpp-python server already running on the model "
                                                   "(default: one is started)")
    args = ap.parse_args(argv)
    from .model import NAME, SHA256, fetch

    fetch()
    prompts = _per_kind(args.per_kind) if args.per_kind else PROMPTS
    start = time.monotonic()
    rows = run(prompts, args.max_tokens, say=lambda line: print(line, file=sys.stderr, flush=True),
               upstream=args.upstream)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"model": NAME, "sha256": SHA256, "engine": "llama-cpp-python server, 1 thread, n_ctx 2048",
              "prompts": len(prompts), "tools": len(TOOLS), "max_tokens": args.max_tokens, "temperature": 0,
              "seconds": round(time.monotonic() - start), "rows": rows}
    out.write_text(json.dumps(result, indent=1) + "\n")
    out.with_suffix(".md").write_text(table(rows) + "\n")
    print(table(rows))
    print(f"\n{len(prompts)} prompts, {NAME}; written to {out} and {out.with_suffix('.md')}")
    return 0
