"""Conformance run over the shared corpus of peers' parse cases (../shared/corpus/parse_cases.jsonl).

Each case is parsed with our dialect of the same name (the corpus's own labels; ``ALIASES`` maps
the few that differ), with the case's tools and llama.cpp's reasoning settings, and compared with
the peer's expectation: the same calls (names and parsed arguments), the same content and
reasoning after trimming surrounding whitespace (``null`` and ``""`` alike). Cases that expect a
mid-output partial snapshot are set aside, as the issue says.

With ``--auto`` every case is parsed with ``dialect="auto"`` (no hint) instead of its label.

    python -m tests.corpus_run [--dialect NAME ...] [--list] [--auto] [--corpus PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbridge import ConfigError, Toolset, parse
from toolbridge.dialects import get_dialect

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "parse_cases.jsonl"
# sglang's test-only detector exercises its base class with Hermes' <tool_call>{json}</tool_call>.
ALIASES: dict[str, str] = {"generic_json_test_detector": "hermes"}
_PROMPT_TAIL = re.compile(r"the rendered prompt ends with (['\"])(.*?)\1; model_output", re.DOTALL)
# Assistant headers of the templates whose prompt may end inside the assistant turn.
_ASSISTANT_HEADERS = (
    "<|im_start|>assistant\n", "<|assistant|>", "<|turn>model\n", "\uff5cAssistant\uff5c>",
    "assistant<|im_middle|>", "<|start|>assistant", "]~b]ai\n", "<sep>assistant:", "<seed:bos>assistant\n",
    "<|start_header_id|>assistant<|end_header_id|>\n\n", "[/INST]", "assistant<|end_of_role|>",
    "<|begin_assistant|>\n", "<|CHATBOT_TOKEN|>", "assistant<|role_sep|>\n", "<|assistant_start|>",
    "<start_of_turn>model\n", "<SPECIAL_11>Assistant\n",
)
# What a template writes to open the reasoning it leaves to the model.
_REASONING_OPENERS = ("<think>", "<|START_THINKING|>", "Here are my reasoning steps:")
_REASONING_CLOSERS = ("</think>", "<|END_THINKING|>", "[BEGIN FINAL RESPONSE]")
_BODY_WRAP = {"glm45": "<tool_call>{}</tool_call>", "glm47": "<tool_call>{}</tool_call>",
              "gemma4": "<|tool_call>{}<tool_call|>", "functiongemma": "<start_function_call>{}<end_function_call>",
              "pythonic": "{}", "lfm2": "<|tool_call_start|>{}<|tool_call_end|>",
              "mistral": "[TOOL_CALLS]{}", "longcat": "<longcat_tool_call>{}</longcat_tool_call>"}


@dataclass
class Verdict:
    case: dict[str, Any]
    ok: bool
    why: str = ""


def load(path: Path, dialects: set[str] | None = None) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    return [c for c in cases if dialects is None or c["dialect"] in dialects]


def is_partial_snapshot(case: dict[str, Any]) -> bool:
    notes = case.get("notes", "")
    return bool(case.get("is_partial")) or "partial snapshot" in notes or "stops mid-call" in notes


def options_for(case: dict[str, Any]) -> dict[str, Any]:
    reasoning = case.get("reasoning_format") in ("AUTO", "DEEPSEEK")
    forced_open = "thinking_forced_open=true" in case.get("notes", "")
    options: dict[str, Any] = {"reasoning": reasoning, "in_reasoning": True if reasoning and forced_open else None}
    if case["source"].startswith("llama.cpp"):
        # llama.cpp parses generations whose special tokens were kept: a family's end tokens are
        # dropped then, as the gateway drops them when it asks an upstream to keep special tokens.
        options["drop_tokens"] = get_dialect(ALIASES.get(case["dialect"], case["dialect"])).end_tokens
    return options


def prefill(case: dict[str, Any]) -> str:
    """What the prompt already wrote of the assistant turn (llama.cpp cases quote the prompt's
    tail): a prefilled ``<think>`` or a continued message. The model's output continues it."""
    found = _PROMPT_TAIL.search(case.get("notes", ""))
    if not found:
        return ""
    tail = found.group(2).encode().decode("unicode_escape").encode("latin-1").decode("utf-8")
    starts = [tail.rfind(h) + len(h) for h in _ASSISTANT_HEADERS if h in tail]
    # The quoted tail is the prompt's last characters: it may begin inside the header itself.
    starts += [len(h) - k for h in _ASSISTANT_HEADERS for k in range(1, len(h) - 7) if tail.startswith(h[k:])]
    written = tail[max(starts):] if starts else ""
    if "continuation test" in case["notes"]:
        return written  # a continued message
    if written.rstrip().endswith(_REASONING_OPENERS):
        # Reasoning the template opened. With extraction off, llama.cpp writes the opener back
        # into content only when the output closes it; a model that skips straight to its
        # answer never wrote any of it.
        closed = any(c in case["model_output"] for c in _REASONING_CLOSERS)
        return written if closed or options_for(case)["reasoning"] else ""
    return ""  # e.g. an empty think block the template closed: not part of the output


def text_for(case: dict[str, Any]) -> str:
    text = case["model_output"]
    if case.get("input_scope") == "call_body":
        text = _BODY_WRAP.get(case["dialect"], "<tool_call>\n{}\n</tool_call>").format(text)
    return prefill(case) + text


def offered(case: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The case's tools, or None where the peer called tools it was not offered.

    Several peers' tests hand the parser a tool list unrelated to the calls, and their parsers
    do not check names. toolbridge never emits a call to a tool that was not offered (a promise),
    so such a case is compared as library use without tools, which still tests the reading of
    the format; ``unoffered`` counts them.
    """
    tools = case.get("tools")
    if not tools:
        return tools
    toolset = Toolset(tools)
    names = [c["name"] for c in case["expected_tool_calls"]]
    return tools if all(toolset.resolve(n).name for n in names) else None


def judge(case: dict[str, Any], auto: bool = False) -> Verdict:
    dialect = "auto" if auto else ALIASES.get(case["dialect"], case["dialect"])
    try:
        result = parse(text_for(case), dialect, offered(case), **options_for(case))
    except ConfigError as exc:
        return Verdict(case, False, f"error: {exc}")
    msg = result.message
    got = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in msg.get("tool_calls", [])]
    want = [(c["name"], c["arguments"]) for c in case["expected_tool_calls"]]
    if got != want:
        return Verdict(case, False, f"calls {got!r} != expected {want!r}")
    expected_content = case.get("expected_content")  # null: the peer's test did not assert it
    if expected_content is not None and _norm(msg["content"]) != _norm(expected_content):
        return Verdict(case, False, f"content {msg['content']!r} != expected {expected_content!r}")
    if "expected_reasoning" in case:
        if _norm(msg.get("reasoning_content")) != _norm(case["expected_reasoning"]):
            return Verdict(case, False, f"reasoning {msg.get('reasoning_content')!r} != expected {case['expected_reasoning']!r}")
    return Verdict(case, True)


def _norm(text: str | None) -> str:
    return (text or "").strip()


def run(path: Path, dialects: set[str] | None, auto: bool = False) -> dict[str, list[Verdict]]:
    by_dialect: dict[str, list[Verdict]] = {}
    for case in load(path, dialects):
        if is_partial_snapshot(case):
            continue
        by_dialect.setdefault(case["dialect"], []).append(judge(case, auto))
    return by_dialect


def report(by_dialect: dict[str, list[Verdict]], listing: bool, out: Any = sys.stdout) -> float:
    total, agreed = Counter(), Counter()
    for dialect, verdicts in sorted(by_dialect.items()):
        total[dialect] = len(verdicts)
        agreed[dialect] = sum(v.ok for v in verdicts)
        print(f"{dialect:24s} {agreed[dialect]:4d}/{total[dialect]:<4d} {100 * agreed[dialect] / total[dialect]:6.1f}%", file=out)
        if listing:
            for v in verdicts:
                if not v.ok:
                    print(f"    {v.case['id']}\n        {v.why[:400]}", file=out)
    unoffered = sum(1 for vs in by_dialect.values() for v in vs if offered(v.case) is None and v.case.get("tools"))
    print(f"(compared without tools because the peer called unoffered tools: {unoffered} cases)", file=out)
    n, k = sum(total.values()), sum(agreed.values())
    share = k / n if n else 1.0
    print(f"{'overall':24s} {k:4d}/{n:<4d} {100 * share:6.1f}%", file=out)
    return share


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dialect", action="append", help="only this corpus dialect (repeatable)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--list", action="store_true", help="list every disagreement")
    ap.add_argument("--auto", action="store_true", help='parse with dialect "auto", not the label')
    args = ap.parse_args(argv)
    if not args.corpus.exists():
        print(f"corpus not found at {args.corpus}; nothing to run", file=sys.stderr)
        return 0
    report(run(args.corpus, set(args.dialect) if args.dialect else None, args.auto), args.list)
    return 0


if __name__ == "__main__":
    sys.exit(main())
