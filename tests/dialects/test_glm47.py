"""GLM-4.7 / GLM-5: the GLM arg_key pairs run together, with no newlines between elements.

Outputs follow the GLM-4.7-Flash chat template, whose generation prompt ends with ``<think>``:
``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>``.
"""

from __future__ import annotations

from typing import Any

from tests.dialects.test_glm45 import CODE, close_tag_in_value_cases
from tests.harness import Case, make_table_tests, tool


def call(name: str, *pairs: tuple[str, str]) -> str:
    """One call block as the GLM-4.7 template renders it."""
    body = "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in pairs)
    return f"<tool_call>{name}{body}</tool_call>"


SHELL = [
    tool(
        "run_shell", command={"type": "string"}, timeout={"type": "number"}, cwd={"type": "string"}
    )
]
GIT = [tool("git__log", n={"type": "integer"}), tool("git__diff", path={"type": "string"})]
DOTTED = [tool("git.log", n={"type": "integer"})]
TWINS = [tool("run_shell"), tool("RUN_SHELL")]
TYPED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "$defs": {
        "Id": {"type": "string"},
        "Opts": {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "on": {"type": "boolean"}},
        },
    },
    "properties": {
        "id": {"$ref": "#/$defs/Id"},
        "n": {"type": "integer"},
        "x": {"type": "number"},
        "yes": {"type": "boolean"},
        "nil": {"type": "null"},
        "words": {"type": "array", "items": {"type": "string"}},
        "nums": {"type": "array", "items": {"type": "number"}},
        "opts": {"$ref": "#/$defs/Opts"},
        "num_or_null": {"type": ["number", "null"]},
        "any": {"anyOf": [{"type": "boolean"}, {"type": "integer"}]},
        "unit": {"enum": ["c", "f"]},
        "prio": {"enum": [1, 2]},
        "name": {"type": "string"},
    },
}
TYPED = [{"type": "function", "function": {"name": "typed", "parameters": TYPED_SCHEMA}}]
REASONING = {"reasoning": True}
IN_REASONING = {"reasoning": True, "in_reasoning": True}

CASES = [
    *close_tag_in_value_cases(call),
    Case("keys-holding-markup", call("set_item", ("items<0>", "x"), ("a>b", "2")),
         [("set_item", {"items<0>": "x", "a>b": 2})], None),
    Case("a-key-may-not-hold-the-next-pair", call("set_item", ("city<arg_value>x", "y")), [],
         call("set_item", ("city<arg_value>x", "y")), report={"calls": 0}),
    # ---------------------------------------------------------------- calls
    Case(
        "single",
        call("run_shell", ("command", "ls -la"), ("timeout", "30")),
        [("run_shell", {"command": "ls -la", "timeout": 30})],
        None,
        tools=SHELL,
        report={"calls": 1},
    ),
    Case(
        "parallel-keeps-order",
        call("run_shell", ("command", "a"))
        + call("run_shell", ("command", "b"))
        + call("run_shell", ("command", "c")),
        [
            ("run_shell", {"command": "a"}),
            ("run_shell", {"command": "b"}),
            ("run_shell", {"command": "c"}),
        ],
        None,
        tools=SHELL,
        report={"calls": 3},
    ),
    Case("zero-arguments", "<tool_call>whoami</tool_call>", [("whoami", {})], None),
    Case(
        "nested-json-values",
        call(
            "batch",
            ("jobs", '[{"id": 1, "env": {"A": "1"}}, {"id": 2, "env": {}}]'),
            ("dry", "true"),
        ),
        [("batch", {"jobs": [{"id": 1, "env": {"A": "1"}}, {"id": 2, "env": {}}], "dry": True})],
        None,
    ),
    Case(
        "content-before",
        "Running it." + call("run_shell", ("command", "make")),
        [("run_shell", {"command": "make"})],
        "Running it.",
        tools=SHELL,
    ),
    Case(
        "content-before-and-after",
        "Before " + call("run_shell", ("command", "x")) + " after",
        [("run_shell", {"command": "x"})],
        "Before  after",
        tools=SHELL,
    ),
    Case(
        "newline-layout-accepted",
        "<tool_call>run_shell\n<arg_key>command</arg_key>\n<arg_value>pwd</arg_value>\n"
        "</tool_call>",
        [("run_shell", {"command": "pwd"})],
        None,
        tools=SHELL,
    ),
    # ---------------------------------------------------------------- values keep whitespace
    Case(
        "value-keeps-surrounding-spaces",
        call("run_shell", ("command", "  echo hi  ")),
        [("run_shell", {"command": "  echo hi  "})],
        None,
        tools=SHELL,
    ),
    Case(
        "value-keeps-newlines-and-indentation",
        call("run_shell", ("command", "\nfor f in *; do\n    echo $f\ndone\n")),
        [("run_shell", {"command": "\nfor f in *; do\n    echo $f\ndone\n"})],
        None,
        tools=SHELL,
    ),
    Case(
        "empty-string-value",
        call("run_shell", ("command", "")),
        [("run_shell", {"command": ""})],
        None,
        tools=SHELL,
    ),
    Case(
        "value-with-markup",
        call("run_shell", ("command", "echo '<b>x</b>' > out.html && test 1 -lt 2")),
        [("run_shell", {"command": "echo '<b>x</b>' > out.html && test 1 -lt 2"})],
        None,
        tools=SHELL,
    ),
    # ---------------------------------------------------------------- schema typing
    Case(
        "schema-typing",
        call(
            "typed",
            ("id", "02134"),
            ("n", "-3"),
            ("x", "1e2"),
            ("yes", "true"),
            ("nil", "null"),
            ("words", '["a b", "c"]'),
            ("nums", "[1, 2.5]"),
            ("opts", '{"n": "4", "on": "false"}'),
            ("num_or_null", "0.5"),
            ("any", "false"),
            ("unit", "c"),
            ("prio", "1"),
            ("name", "null"),
        ),
        [
            (
                "typed",
                {
                    "id": "02134",
                    "n": -3,
                    "x": 100.0,
                    "yes": True,
                    "nil": None,
                    "words": ["a b", "c"],
                    "nums": [1, 2.5],
                    "opts": {"n": 4, "on": False},
                    "num_or_null": 0.5,
                    "any": False,
                    "unit": "c",
                    "prio": 1,
                    "name": "null",
                },
            )
        ],
        None,
        tools=TYPED,
        report={"invalid": 0},
    ),
    Case(
        "schema-typing-unions-second-branch",
        call("typed", ("num_or_null", "null"), ("any", "7")),
        [("typed", {"num_or_null": None, "any": 7})],
        None,
        tools=TYPED,
        report={"invalid": 0},
    ),
    Case(
        "schema-mismatch-keeps-text-and-reports",
        call("typed", ("n", "many")),
        [("typed", {"n": "many"})],
        None,
        tools=TYPED,
        report={"invalid": 1},
    ),
    Case(
        "untyped-values-without-tools",
        call(
            "anything",
            ("n", "10"),
            ("arr", "[true, null]"),
            ("text", "two words"),
            ("zip", "02134"),
            ("neg", "-0.5"),
        ),
        [
            (
                "anything",
                {"n": 10, "arr": [True, None], "text": "two words", "zip": "02134", "neg": -0.5},
            )
        ],
        None,
    ),
    # ---------------------------------------------------------------- reasoning
    Case(
        "reasoning-split",
        "<think>Need a shell.</think>" + call("run_shell", ("command", "id")),
        [("run_shell", {"command": "id"})],
        None,
        "Need a shell.",
        tools=SHELL,
        options=REASONING,
    ),
    Case(
        "starts-in-reasoning",
        "Nothing to run.</think>All good.",
        [],
        "All good.",
        "Nothing to run.",
        options=IN_REASONING,
    ),
    Case(
        "tool-call-ends-reasoning",
        "List the files." + call("run_shell", ("command", "ls")),
        [("run_shell", {"command": "ls"})],
        None,
        "List the files.",
        tools=SHELL,
        options=IN_REASONING,
    ),
    Case(
        "reasoning-then-content-then-call",
        "Plan.</think>On it." + call("run_shell", ("command", "ls")),
        [("run_shell", {"command": "ls"})],
        "On it.",
        "Plan.",
        tools=SHELL,
        options=IN_REASONING,
    ),
    # ---------------------------------------------------------------- truncation
    Case(
        "cut-after-complete-pair",
        "<tool_call>run_shell<arg_key>command</arg_key><arg_value>ls</arg_value>",
        [("run_shell", {"command": "ls"})],
        None,
        tools=SHELL,
        report={"recovered": [0], "truncated": False},
    ),
    Case(
        "cut-after-second-complete-pair",
        call("git__log", ("n", "1"))
        + "<tool_call>git__diff<arg_key>path</arg_key><arg_value>a.py</arg_value></tool",
        [("git__log", {"n": 1}), ("git__diff", {"path": "a.py"})],
        None,
        tools=GIT,
        report={"recovered": [1]},
    ),
    Case(
        "cut-mid-value",
        "<tool_call>run_shell<arg_key>command</arg_key><arg_value>rm -r",
        [],
        "<tool_call>run_shell<arg_key>command</arg_key><arg_value>rm -r",
        tools=SHELL,
        report={"truncated": True, "calls": 0},
    ),
    Case(
        "cut-after-key",
        "<tool_call>run_shell<arg_key>command</arg_key>",
        [],
        "<tool_call>run_shell<arg_key>command</arg_key>",
        tools=SHELL,
        report={"truncated": True},
    ),
    # ---------------------------------------------------------------- names
    Case(
        "dotted-name-to-offered-underscores",
        call("git.log", ("n", "5")),
        [("git__log", {"n": 5})],
        None,
        tools=GIT,
    ),
    Case(
        "underscored-name-to-offered-dots",
        call("git__log", ("n", "5")),
        [("git.log", {"n": 5})],
        None,
        tools=DOTTED,
    ),
    Case(
        "functions-prefix",
        call("functions.run_shell", ("command", "ls")),
        [("run_shell", {"command": "ls"})],
        None,
        tools=SHELL,
    ),
    Case(
        "case-and-dash",
        call("Run-Shell", ("command", "ls")),
        [("run_shell", {"command": "ls"})],
        None,
        tools=SHELL,
    ),
    Case(
        "ambiguous-name-is-not-a-call",
        call("run-shell", ("command", "ls")),
        [],
        call("run-shell", ("command", "ls")),
        tools=TWINS,
        report={"rejected": 1, "calls": 0},
    ),
    Case(
        "unknown-name-stays-content",
        "x" + call("format_disk", ("dev", "sda")) + "y",
        [],
        "x" + call("format_disk", ("dev", "sda")) + "y",
        tools=SHELL,
        report={"rejected": 1},
    ),
    Case(
        "unknown-then-known-is-index-0",
        call("format_disk", ("dev", "sda")) + call("run_shell", ("command", "df")),
        [("run_shell", {"command": "df"})],
        call("format_disk", ("dev", "sda")),
        tools=SHELL,
        report={"rejected": 1, "calls": 1},
    ),
    # ---------------------------------------------------------------- prose and malformed blocks
    Case("prose-angle-brackets", "a <b> c, and x < y > z", [], "a <b> c, and x < y > z"),
    Case(
        "prose-html",
        "<p>See <code>&lt;tool_call&gt;</code></p>",
        [],
        "<p>See <code>&lt;tool_call&gt;</code></p>",
    ),
    Case(
        "prose-code",
        "`vector<int> v; for (i = 0; i < n; i++)` ok",
        [],
        "`vector<int> v; for (i = 0; i < n; i++)` ok",
    ),
    Case(
        "prose-mentions-tool-call-tag",
        "Emit <tool_call> then the name.",
        [],
        "Emit <tool_call> then the name.",
        report={"calls": 0, "truncated": False},
    ),
    Case(
        "tool-call-holding-prose",
        "<tool_call>not a call at all</tool_call>",
        [],
        "<tool_call>not a call at all</tool_call>",
        report={"calls": 0},
    ),
    Case(
        "tool-call-without-name",
        "<tool_call><arg_key>a</arg_key><arg_value>1</arg_value></tool_call>",
        [],
        "<tool_call><arg_key>a</arg_key><arg_value>1</arg_value></tool_call>",
        report={"calls": 0},
    ),
    Case(
        "stray-value-without-key-is-not-a-call",
        "<tool_call>run_shell<arg_value>ls</arg_value></tool_call>",
        [],
        "<tool_call>run_shell<arg_value>ls</arg_value></tool_call>",
        tools=SHELL,
        report={"calls": 0},
    ),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("glm47", CASES)
