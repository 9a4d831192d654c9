"""``toolbridge demo``: bundled model outputs parsed whole and streamed, side by side.

The samples are one coding-agent task (fix a config loader) as written by three model families
in their own dialects: reading a file, writing a file with multi-line content, arguments typed by
the tool schema (integer, boolean, array), prose with angle brackets, a call to a tool that was
not offered, and a call cut off by the token limit. Each is parsed whole and streamed in small
chunks; the demo prints the raw text, the OpenAI message, the report and whether the two runs
agreed. Exit code 1 when a sample does not behave as it declares (so ``make demo`` is a check).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..openai import ChunkEncoder, assemble
from ..parsing.parser import StreamParser, parse

CHUNK = 3  # characters per streamed piece: smaller than any marker, so markers get split


def _tool(name: str, description: str, **props: dict[str, Any]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": props, "required": list(props)[:1]}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


STR: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
BOOL: dict[str, Any] = {"type": "boolean"}
STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}

TOOLS = [
    _tool("read_file", "Read a text file.", path=STR, start_line=INT, end_line=INT),
    _tool("write_file", "Write a text file.", path=STR, content=STR),
    _tool("search_code", "Search the repository.", query=STR, max_results=INT,
          case_sensitive=BOOL, paths=STRINGS),
    _tool("run_tests", "Run pytest.", paths=STRINGS, verbose=BOOL, timeout_s=INT),
]

NEW_LOADER = '''def load(path, depth=0):
    if depth > MAX_DEPTH:
        raise ConfigError(f"includes nested deeper than {MAX_DEPTH}")
    with open(path) as f:
        data = yaml.safe_load(f) or {}
    for inc in data.pop("include", []):
        data = {**load(inc, depth + 1), **data}
    return data
'''


@dataclass(frozen=True)
class Sample:
    """One model output and what it shows (streamed, it gives the same message: each call is
    sent whole, and a cut one not at all)."""

    dialect: str
    title: str
    text: str
    options: dict[str, Any] = field(default_factory=dict)


SAMPLES = [
    Sample(
        "hermes", "reasoning, then a call reading a file",
        "<think>\nThe user says the config loader crashes on nested includes. "
        "Read it before changing anything.\n</think>\n\n"
        "Let me look at the loader first.\n<tool_call>\n"
        '{"name": "read_file", "arguments": {"path": "src/config.py", "start_line": 1, '
        '"end_line": 80}}\n</tool_call>',
        {"reasoning": True},
    ),
    Sample(
        "qwen3_coder", "writing a file with multi-line content",
        "The recursion has no depth limit. I'll add one.\n\n<tool_call>\n<function=write_file>\n"
        "<parameter=path>\nsrc/config.py\n</parameter>\n"
        f"<parameter=content>\n{NEW_LOADER}\n</parameter>\n</function>\n</tool_call>",
    ),
    Sample(
        "glm45", "integer, boolean and array arguments typed by the schema",
        "<tool_call>run_tests\n<arg_key>paths</arg_key>\n<arg_value>[\"tests/test_config.py\"]"
        "</arg_value>\n<arg_key>verbose</arg_key>\n<arg_value>true</arg_value>\n"
        "<arg_key>timeout_s</arg_key>\n<arg_value>120</arg_value>\n</tool_call>",
    ),
    Sample(
        "glm47", "two calls in one turn, compact spelling",
        "<tool_call>search_code<arg_key>query</arg_key><arg_value>MAX_DEPTH</arg_value>"
        "<arg_key>max_results</arg_key><arg_value>20</arg_value>"
        "<arg_key>case_sensitive</arg_key><arg_value>false</arg_value></tool_call>"
        "<tool_call>read_file<arg_key>path</arg_key><arg_value>src/limits.py</arg_value>"
        "</tool_call>",
    ),
    Sample(
        "glm47", "prose with angle brackets stays prose",
        "Fixed. The loader now stops when depth > MAX_DEPTH (8), so a <= b chains and "
        "<include> loops fail fast. Note that a GLM call starts with <tool_call> and the "
        "function name; this sentence is not one.",
    ),
    Sample(
        "hermes", "a tool that was not offered stays content",
        "Cleaning up.\n<tool_call>\n"
        '{"name": "delete_branch", "arguments": {"branch": "fix-loader"}}\n</tool_call>',
    ),
    Sample(
        "qwen3_coder", "a call cut off by the token limit",
        "<tool_call>\n<function=write_file>\n<parameter=path>\ntests/test_config.py\n"
        "</parameter>\n<parameter=content>\nimport pytest\n\ndef test_depth_limit(tmp_path):\n",
    ),
]


def _index_id(index: int) -> str:
    return f"call_{index}"


def streamed(sample: Sample) -> tuple[dict[str, Any], int]:
    """The message a client assembles from the deltas of a chunked run, and the delta count."""
    parser = StreamParser(sample.dialect, TOOLS, call_id=_index_id, **sample.options)
    encoder = ChunkEncoder()
    deltas: list[dict[str, Any]] = []
    for start in range(0, len(sample.text), CHUNK):
        deltas += encoder.encode(parser.feed(sample.text[start : start + CHUNK]))
    deltas += encoder.encode(parser.close()) + encoder.finish()
    return assemble(deltas), len(deltas)


def summary(report: dict[str, Any], finish: str) -> str:
    """The report in one line: what was found, what was not turned into a call, and why."""
    parts = [f"{report['calls']} call(s)"]
    for key in ("rejected", "aborted", "repaired", "invalid"):
        for entry in report[key]:
            parts.append(f"{key}: {entry.get('reason') or entry.get('what') or entry}")
    if report["truncated"]:
        parts.append("truncated inside a call")
    return "; ".join(parts) + f"; finish_reason {finish!r}"


def show(number: int, sample: Sample, out: TextIO) -> bool:
    """Print one sample; True when streaming agreed with the whole parse as declared."""
    result = parse(sample.text, sample.dialect, TOOLS, call_id=_index_id, **sample.options)
    message, count = streamed(sample)
    alike = message == result.message
    print(f"\n=== {number}. {sample.dialect}: {sample.title}", file=out)
    print(f"--- model output ({len(sample.text)} characters)", file=out)
    print("\n".join("  | " + line for line in sample.text.split("\n")), file=out)
    print("--- OpenAI message", file=out)
    print(json.dumps(result.message, indent=2, ensure_ascii=False), file=out)
    print(f"--- report: {summary(result.report.to_dict(), result.finish_reason)}", file=out)
    verdict = "same message as whole" if alike else "differs from whole:"
    print(f"--- streamed in {CHUNK}-character chunks ({count} deltas): {verdict}", file=out)
    if not alike:
        print(json.dumps(message, indent=2, ensure_ascii=False), file=out)
        print("    UNEXPECTED", file=out)
    return alike


def main(out: TextIO | None = None) -> int:
    """Run every sample; 0 when each behaved as declared."""
    out = out or sys.stdout
    print(f"toolbridge demo: {len(SAMPLES)} sample outputs, tools: "
          + ", ".join(t["function"]["name"] for t in TOOLS), file=out)
    ok = [show(n, sample, out) for n, sample in enumerate(SAMPLES, 1)]
    failed = ok.count(False)
    print(f"\n{len(ok) - failed} of {len(ok)} samples behaved as expected.", file=out)
    return 0 if not failed else 1
