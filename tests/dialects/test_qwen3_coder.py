"""Qwen3-Coder / Qwen3.5 XML: <function=NAME> with raw-text <parameter=K> values.

Outputs follow the Qwen3-Coder and Qwen3.5 chat templates: ``<tool_call>\\n<function=NAME>\\n``,
then ``<parameter=K>\\nV\\n</parameter>\\n`` per argument, then ``</function>\\n</tool_call>``.
"""

from __future__ import annotations

from typing import Any

from tests.harness import Case, make_table_tests, tool


def call(name: str, *params: tuple[str, str]) -> str:
    """One call block as the Qwen3-Coder template renders it."""
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params)
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


WRITE = [
    tool(
        "write_file", path={"type": "string"}, content={"type": "string"}, mode={"type": "integer"}
    )
]
FS = [tool("os__fs__read", path={"type": "string"}), tool("os__fs__stat", path={"type": "string"})]
DOTTED = [tool("os.fs.read", path={"type": "string"})]
PATCH_TOOL = [tool("apply_patch", input={"type": "string"}),
              tool("edit", path={"type": "string"}, n={"type": "integer"})]
# A Codex-style patch to a file that writes the format's own tags inline.
PATCH = (
    "*** Begin Patch\n*** Update File: render.py\n@@ def param(k, v):\n"
    "-    return f\"<parameter={k}>{v}</parameter>\"\n"
    "+    return f\"<parameter={k}>\\n{v}\\n</parameter>\\n\"\n"
    "+# the call closes with </function> then </tool_call>; <parameter=x> opens one\n"
    "*** End Patch"
)
TWINS = [tool("run_cmd"), tool("Run_Cmd")]
TYPED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "$defs": {
        "Zip": {"type": "string"},
        "Point": {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "number"}},
        },
    },
    "properties": {
        "s": {"type": "string"},
        "zip": {"$ref": "#/$defs/Zip"},
        "i": {"type": "integer"},
        "f": {"type": "number"},
        "b": {"type": "boolean"},
        "nothing": {"type": "null"},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "obj": {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "tag": {"type": "string"}},
        },
        "maybe": {"type": ["integer", "null"]},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "flag_or_list": {
            "oneOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "string"}}]
        },
        "color": {"enum": ["red", "green"]},
        "level": {"enum": [1, 2, 3]},
        "pt": {"$ref": "#/$defs/Point"},
        "path": {"type": "array", "items": {"$ref": "#/$defs/Point"}},
    },
}
TYPED = [{"type": "function", "function": {"name": "typed", "parameters": TYPED_SCHEMA}}]
REASONING = {"reasoning": True}
IN_REASONING = {"reasoning": True, "in_reasoning": True}

CASES = [
    # ---------------------------------------------------------------- calls
    Case(
        "single",
        call("write_file", ("path", "/tmp/a.txt"), ("mode", "644")),
        [("write_file", {"path": "/tmp/a.txt", "mode": 644})],
        None,
        tools=WRITE,
        report={"calls": 1},
    ),
    Case(
        "parallel-keeps-order",
        call("write_file", ("path", "a"))
        + "\n"
        + call("write_file", ("path", "b"))
        + "\n"
        + call("write_file", ("path", "c")),
        [
            ("write_file", {"path": "a"}),
            ("write_file", {"path": "b"}),
            ("write_file", {"path": "c"}),
        ],
        None,
        tools=WRITE,
        report={"calls": 3},
    ),
    Case(
        "zero-arguments",
        "<tool_call>\n<function=list_files>\n</function>\n</tool_call>",
        [("list_files", {})],
        None,
    ),
    Case(
        "zero-arguments-run-together",
        "<tool_call><function=now></function></tool_call>",
        [("now", {})],
        None,
    ),
    Case(
        "nested-json-values",
        call(
            "configure",
            ("opts", '{"retries": 3, "hosts": ["a", "b"], "tls": {"verify": false}}'),
            ("ports", "[80, 443]"),
        ),
        [
            (
                "configure",
                {
                    "opts": {"retries": 3, "hosts": ["a", "b"], "tls": {"verify": False}},
                    "ports": [80, 443],
                },
            )
        ],
        None,
    ),
    Case(
        "content-before",
        "I'll create the file.\n\n" + call("write_file", ("path", "x.py")),
        [("write_file", {"path": "x.py"})],
        "I'll create the file.",
        tools=WRITE,
    ),
    Case(
        "content-before-and-after",
        "Before.\n" + call("write_file", ("path", "x")) + "\nAfter.",
        [("write_file", {"path": "x"})],
        "Before.\n\nAfter.",
        tools=WRITE,
    ),
    Case(
        "several-functions-in-one-wrapper",
        "<tool_call>\n<function=a>\n<parameter=k>\n1\n</parameter>\n</function>\n"
        "<function=b>\n</function>\n<function=c>\n<parameter=k>\nthree\n</parameter>\n</function>\n"
        "</tool_call>",
        [("a", {"k": 1}), ("b", {}), ("c", {"k": "three"})],
        None,
        report={"calls": 3},
    ),
    # ---------------------------------------------------------------- values
    Case(
        "multiline-value-keeps-indentation",
        call(
            "write_file",
            ("path", "m.py"),
            ("content", "def f():\n    return 1\n\n\nclass A:\n    pass"),
        ),
        [
            (
                "write_file",
                {"path": "m.py", "content": "def f():\n    return 1\n\n\nclass A:\n    pass"},
            )
        ],
        None,
        tools=WRITE,
    ),
    Case(
        "trims-one-newline-each-side",
        "<tool_call>\n<function=write_file>\n<parameter=content>\n\n  indented\n\n</parameter>\n"
        "</function>\n</tool_call>",
        [("write_file", {"content": "\n  indented\n"})],
        None,
        tools=WRITE,
    ),
    Case(
        "value-without-newlines",
        "<tool_call><function=write_file><parameter=path>a b</parameter></function></tool_call>",
        [("write_file", {"path": "a b"})],
        None,
        tools=WRITE,
    ),
    Case(
        "value-with-xml-and-quotes",
        call("write_file", ("content", '<a href="x">\\n & "q" </a>\n<tool_call>')),
        [("write_file", {"content": '<a href="x">\\n & "q" </a>\n<tool_call>'})],
        None,
        tools=WRITE,
    ),
    Case(
        "missing-parameter-close-before-next-parameter",
        "<tool_call>\n<function=write_file>\n<parameter=path>\nx.txt\n<parameter=mode>\n600\n"
        "</parameter>\n"
        "</function>\n</tool_call>",
        [("write_file", {"path": "x.txt", "mode": 600})],
        None,
        tools=WRITE,
        report={"repaired": 1},
    ),
    Case(
        "missing-parameter-close-before-function-close",
        "<tool_call>\n<function=write_file>\n<parameter=path>\nx.txt\n</function>\n</tool_call>",
        [("write_file", {"path": "x.txt"})],
        None,
        tools=WRITE,
        report={"repaired": 1},
    ),
    Case(
        "function-without-wrapper",
        "Writing.\n<function=write_file>\n<parameter=path>\nw.txt\n</parameter>\n</function>",
        [("write_file", {"path": "w.txt"})],
        "Writing.",
        tools=WRITE,
    ),
    Case(
        "only-closing-wrapper",
        "<function=write_file>\n<parameter=path>\nw.txt\n</parameter>\n</function>\n</tool_call>",
        [("write_file", {"path": "w.txt"})],
        None,
        tools=WRITE,
    ),
    # ---------------------------------------------------------------- tags inside values
    Case(
        "patch-mentioning-the-tags-inline",
        call("apply_patch", ("input", PATCH)),
        [("apply_patch", {"input": PATCH})],
        None,
        tools=PATCH_TOOL,
        report={"calls": 1, "repaired": 0},
    ),
    Case(
        "close-tag-inline-is-value-text",
        call("edit", ("path", "a </parameter> b"), ("n", "2")),
        [("edit", {"path": "a </parameter> b", "n": 2})],
        None,
        tools=PATCH_TOOL,
    ),
    Case(
        "function-close-inline-is-value-text",
        call("edit", ("path", "x </function> y"), ("n", "2")),
        [("edit", {"path": "x </function> y", "n": 2})],
        None,
        tools=PATCH_TOOL,
    ),
    Case(
        "parameter-tag-inline-invents-no-argument",
        call("edit", ("path", "see <parameter=n>5 here")),
        [("edit", {"path": "see <parameter=n>5 here"})],
        None,
        tools=PATCH_TOOL,
        report={"repaired": 0},
    ),
    Case(
        "close-tag-at-a-line-end-inside-a-value",
        call("edit", ("path", "line one</parameter>\nline two")),
        [("edit", {"path": "line one</parameter>\nline two"})],
        None,
        tools=PATCH_TOOL,
    ),
    Case(
        "every-tag-inline-in-one-value",
        call("edit", ("path", "<tool_call> <function=g> <parameter=n> 1 </parameter>; </function> </tool_call>")),
        [("edit", {"path": "<tool_call> <function=g> <parameter=n> 1 </parameter>; </function> </tool_call>"})],
        None,
        tools=PATCH_TOOL,
    ),
    Case(
        "missing-close-function-close-starts-a-line",
        "<tool_call>\n<function=edit>\n<parameter=path>\nx </function> </tool_call>\n</function>\n</tool_call>",
        [("edit", {"path": "x </function> </tool_call>"})],
        None,
        tools=PATCH_TOOL,
        report={"repaired": 1},
    ),
    Case(
        "close-tag-then-blank-lines-then-next-parameter",
        "<tool_call>\n<function=edit>\n<parameter=path>\na\n</parameter>\n\n\n<parameter=n>\n3\n</parameter>\n"
        "</function>\n</tool_call>",
        [("edit", {"path": "a", "n": 3})],
        None,
        tools=PATCH_TOOL,
    ),
    Case(
        "close-tag-then-the-wrapper-close",
        "<tool_call>\n<function=edit>\n<parameter=path>\na\n</parameter>\n</tool_call>",
        [("edit", {"path": "a"})],
        None,
        tools=PATCH_TOOL,
        report={"repaired": 1},
    ),
    Case(
        "close-tag-ends-the-output",
        "<tool_call>\n<function=edit>\n<parameter=path>\na </parameter> b\n</parameter>",
        [("edit", {"path": "a </parameter> b"})],
        None,
        tools=PATCH_TOOL,
        report={"recovered": [0]},
    ),
    Case(
        "value-never-closed-is-cut",
        "<tool_call>\n<function=edit>\n<parameter=path>\na </parameter> b </function> c",
        [],
        "<tool_call>\n<function=edit>\n<parameter=path>\na </parameter> b </function> c",
        tools=PATCH_TOOL,
        report={"truncated": True, "calls": 0},
    ),
    Case(
        "missing-close-next-parameter-starts-a-line",
        "<tool_call>\n<function=edit>\n<parameter=path>\nx <parameter=n> y\n<parameter=n>\n4\n</parameter>\n"
        "</function>\n</tool_call>",
        [("edit", {"path": "x <parameter=n> y", "n": 4})],
        None,
        tools=PATCH_TOOL,
        report={"repaired": 1},
    ),
    # ---------------------------------------------------------------- schema typing
    Case(
        "schema-typing",
        call(
            "typed",
            ("s", "123"),
            ("zip", "02134"),
            ("i", "42"),
            ("f", "2.5"),
            ("b", "true"),
            ("nothing", "null"),
            ("ids", "[1, 2]"),
            ("obj", '{"n": "5", "tag": "7"}'),
            ("maybe", "null"),
            ("either", "12"),
            ("flag_or_list", '["x"]'),
            ("color", "red"),
            ("level", "2"),
            ("pt", '{"x": 1, "y": 2}'),
            ("path", '[{"x": "3", "y": "0.5"}]'),
        ),
        [
            (
                "typed",
                {
                    "s": "123",
                    "zip": "02134",
                    "i": 42,
                    "f": 2.5,
                    "b": True,
                    "nothing": None,
                    "ids": [1, 2],
                    "obj": {"n": 5, "tag": "7"},
                    "maybe": None,
                    "either": 12,
                    "flag_or_list": ["x"],
                    "color": "red",
                    "level": 2,
                    "pt": {"x": 1, "y": 2},
                    "path": [{"x": 3, "y": 0.5}],
                },
            )
        ],
        None,
        tools=TYPED,
        report={"invalid": 0},
    ),
    Case(
        "schema-typing-union-fallbacks",
        call(
            "typed",
            ("maybe", "7"),
            ("either", "seven"),
            ("flag_or_list", "False"),
            ("f", "3"),
            ("s", "true"),
        ),
        [("typed", {"maybe": 7, "either": "seven", "flag_or_list": False, "f": 3, "s": "true"})],
        None,
        tools=TYPED,
        report={"invalid": 0},
    ),
    Case(
        "untyped-values-without-tools",
        call(
            "anything",
            ("n", "5"),
            ("ok", "true"),
            ("list", '["a"]'),
            ("word", "hello world"),
            ("zip", "02134"),
            ("half", "{not json"),
        ),
        [
            (
                "anything",
                {
                    "n": 5,
                    "ok": True,
                    "list": ["a"],
                    "word": "hello world",
                    "zip": "02134",
                    "half": "{not json",
                },
            )
        ],
        None,
    ),
    # ---------------------------------------------------------------- reasoning
    Case(
        "reasoning-split",
        "<think>\nNeed to write the file.\n</think>\n\n" + call("write_file", ("path", "r.txt")),
        [("write_file", {"path": "r.txt"})],
        None,
        "\nNeed to write the file.\n",
        tools=WRITE,
        options=REASONING,
    ),
    Case(
        "starts-in-reasoning",
        "No tool needed.\n</think>\n\nDone.",
        [],
        "\n\nDone.",
        "No tool needed.\n",
        options=IN_REASONING,
    ),
    Case(
        "tool-call-ends-reasoning",
        "Write it now.\n" + call("write_file", ("path", "r.txt")),
        [("write_file", {"path": "r.txt"})],
        None,
        "Write it now.\n",
        tools=WRITE,
        options=IN_REASONING,
    ),
    # ---------------------------------------------------------------- truncation
    Case(
        "cut-after-complete-parameters",
        "<tool_call>\n<function=write_file>\n<parameter=path>\nt.txt\n</parameter>\n",
        [("write_file", {"path": "t.txt"})],
        None,
        tools=WRITE,
        report={"recovered": [0], "truncated": False},
    ),
    Case(
        "cut-after-function-close",
        "<tool_call>\n<function=write_file>\n<parameter=path>\nt.txt\n</parameter>\n</function>\n",
        [("write_file", {"path": "t.txt"})],
        None,
        tools=WRITE,
        report={"recovered": 1},
    ),
    Case(
        "cut-mid-value",
        "<tool_call>\n<function=write_file>\n<parameter=content>\nhalf a li",
        [],
        "<tool_call>\n<function=write_file>\n<parameter=content>\nhalf a li",
        tools=WRITE,
        report={"truncated": True, "calls": 0},
    ),
    Case(
        "cut-mid-parameter-name",
        "<tool_call>\n<function=write_file>\n<parameter=pa",
        [],
        "<tool_call>\n<function=write_file>\n<parameter=pa",
        tools=WRITE,
        report={"truncated": True},
    ),
    # ---------------------------------------------------------------- names
    Case(
        "dotted-name-to-offered-underscores",
        call("os.fs.read", ("path", "/etc/hosts")),
        [("os__fs__read", {"path": "/etc/hosts"})],
        None,
        tools=FS,
    ),
    Case(
        "underscored-name-to-offered-dots",
        call("os__fs__read", ("path", "p")),
        [("os.fs.read", {"path": "p"})],
        None,
        tools=DOTTED,
    ),
    Case(
        "functions-prefix",
        call("functions.write_file", ("path", "p")),
        [("write_file", {"path": "p"})],
        None,
        tools=WRITE,
    ),
    Case(
        "case-and-dash",
        call("Write-File", ("path", "p")),
        [("write_file", {"path": "p"})],
        None,
        tools=WRITE,
    ),
    Case(
        "ambiguous-name-is-not-a-call",
        call("run-cmd", ("cmd", "ls")),
        [],
        call("run-cmd", ("cmd", "ls")),
        tools=TWINS,
        report={"rejected": 1, "calls": 0},
    ),
    Case(
        "unknown-name-stays-content",
        "Trying.\n" + call("delete_all", ("path", "/")) + "\nOops.",
        [],
        "Trying.\n" + call("delete_all", ("path", "/")) + "\nOops.",
        tools=WRITE,
        report={"rejected": 1},
    ),
    Case(
        "unknown-then-known-is-index-0",
        call("delete_all", ("path", "/")) + "\n" + call("write_file", ("path", "k")),
        [("write_file", {"path": "k"})],
        call("delete_all", ("path", "/")),
        tools=WRITE,
        report={"rejected": 1, "calls": 1},
    ),
    # ---------------------------------------------------------------- prose is prose
    Case("prose-angle-brackets", "a <b> c, and x < y > z", [], "a <b> c, and x < y > z"),
    Case(
        "prose-html",
        "<ul>\n<li><a href='/x'>x</a></li>\n</ul>",
        [],
        "<ul>\n<li><a href='/x'>x</a></li>\n</ul>",
    ),
    Case(
        "prose-code",
        "```rust\nfn max<T: Ord>(a: T, b: T) -> T { if a < b { b } else { a } }\n```\nok",
        [],
        "```rust\nfn max<T: Ord>(a: T, b: T) -> T { if a < b { b } else { a } }\n```\nok",
    ),
    Case(
        "prose-mentions-tags",
        "Calls look like <tool_call> then <function=name> and <parameter=key>.",
        [],
        "Calls look like <tool_call> then <function=name> and <parameter=key>.",
        report={"calls": 0, "truncated": False},
    ),
    Case(
        "tool-call-holding-prose",
        "<tool_call>\nno call here\n</tool_call>\nbye",
        [],
        "<tool_call>\nno call here\n</tool_call>\nbye",
        report={"calls": 0},
    ),
    Case("think-is-content-when-reasoning-off", "<think>x</think>y", [], "<think>x</think>y"),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("qwen3_coder", CASES)
