"""GLM-4.5 / 4.6: a name then <arg_key>/<arg_value> pairs, one per line.

Outputs follow the GLM-4.6 chat template: ``<tool_call>NAME\\n<arg_key>K</arg_key>\\n``
``<arg_value>V</arg_value>\\n`` per argument, then ``</tool_call>``; string values raw, others JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.harness import Case, make_table_tests, tool


def call(name: str, *pairs: tuple[str, str]) -> str:
    """One call block as the GLM-4.6 template renders it."""
    body = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in pairs)
    return f"<tool_call>{name}\n{body}</tool_call>"


SEARCH = [tool("web_search", query={"type": "string"}, limit={"type": "integer"})]
FS = [tool("os__fs__read", path={"type": "string"}), tool("os__fs__list", path={"type": "string"})]
DOTTED = [tool("os.fs.read", path={"type": "string"})]
TWINS = [tool("web_search"), tool("Web_Search")]
TYPED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "definitions": {
        "Code": {"type": "string"},
        "Range": {"type": "array", "items": {"type": "integer"}},
    },
    "properties": {
        "text": {"type": "string"},
        "code": {"$ref": "#/definitions/Code"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "on": {"type": "boolean"},
        "none": {"type": "null"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "cfg": {"type": "object", "properties": {"depth": {"type": "integer"}}},
        "limit": {"type": ["null", "integer"]},
        "key": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
        "mode": {"enum": ["fast", "slow"]},
        "span": {"$ref": "#/definitions/Range"},
        "rows": {
            "type": "array",
            "items": {"type": "object", "properties": {"id": {"type": "integer"}}},
        },
    },
}
TYPED = [{"type": "function", "function": {"name": "typed", "parameters": TYPED_SCHEMA}}]
REASONING = {"reasoning": True}
IN_REASONING = {"reasoning": True, "in_reasoning": True}

CODE = [tool("python", code={"type": "string"}),
        tool("write_file", path={"type": "string"}, content={"type": "string"})]
# A Codex-style patch that writes the format's own close tag inside a value.
PATCH = ("*** Begin Patch\n*** Update File: fmt.py\n@@\n-END = '</tool_call>'\n"
         "+END = '</tool_call>\\n'  # closes a call\n*** End Patch")


def close_tag_in_value_cases(call: Callable[..., str]) -> list[Case]:
    """The close tag inside a value, written with a GLM version's own ``call`` (GLM 4.7's
    table takes these rows too)."""
    return [
        # ---------------------------------------------------------------- the close tag inside a value
        Case("close-tag-inside-a-value",
             "<tool_call>f<arg_key>a</arg_key><arg_value>x </tool_call> y</arg_value></tool_call>",
             [("f", {"a": "x </tool_call> y"})], None, report={"repaired": 0}),
        Case("patch-mentioning-the-close-tag", call("write_file", ("path", "p.diff"), ("content", PATCH)),
             [("write_file", {"path": "p.diff", "content": PATCH})], None, tools=CODE, report={"calls": 1}),
        Case("close-tags-inside-then-another-pair",
             call("write_file", ("content", "a</tool_call>b</tool_call>c"), ("path", "x")),
             [("write_file", {"content": "a</tool_call>b</tool_call>c", "path": "x"})], None, tools=CODE),
        Case("missing-value-close-then-end", "<tool_call>f<arg_key>a</arg_key><arg_value>x </tool_call>",
             [("f", {"a": "x "})], None, report={"repaired": 1}),
        Case("missing-value-close-then-next-call",
             "<tool_call>f<arg_key>a</arg_key><arg_value>x</tool_call>\n"
             "<tool_call>g<arg_key>b</arg_key><arg_value>2</arg_value></tool_call>",
             [("f", {"a": "x"}), ("g", {"b": 2})], None),
        Case("missing-value-close-then-prose", "<tool_call>f<arg_key>a</arg_key><arg_value>x</tool_call> Done.",
             [("f", {"a": "x"})], " Done."),
        Case("close-tag-then-a-key-before-any-value-close",
             "<tool_call>f<arg_key>a</arg_key><arg_value>x</tool_call>"
             "y<arg_key>b</arg_key><arg_value>1</arg_value></tool_call>",
             [("f", {"a": "x"})], "y<arg_key>b</arg_key><arg_value>1</arg_value></tool_call>"),
        Case("close-tag-far-from-the-value-close",
             "<tool_call>f<arg_key>a</arg_key><arg_value>x</tool_call>" + "y" * 1100 + "</arg_value></tool_call>",
             [("f", {"a": "x</tool_call>" + "y" * 1100})], None),
        Case("close-tag-far-from-anything-is-text-then-cut",
             "<tool_call>f<arg_key>a</arg_key><arg_value>x</tool_call>" + "y" * 1100,
             [], "<tool_call>f<arg_key>a</arg_key><arg_value>x</tool_call>" + "y" * 1100,
             report={"truncated": True, "calls": 0}),
        # A next pair counts only when whole (key, its close, the value's opening): a mention of a
        # key tag after the close tag is value text.
        Case("close-tag-then-a-mentioned-key-tag",
             call("write_file", ("path", "d.md"), ("content", "Wrap in <tool_call> and </tool_call>; keys go in <arg_key>.")),
             [("write_file", {"path": "d.md", "content": "Wrap in <tool_call> and </tool_call>; keys go in <arg_key>."})],
             None, tools=CODE, report={"calls": 1, "repaired": 0}),
        Case("close-tag-then-a-closed-key-without-a-value",
             call("write_file", ("content", "a </tool_call> b <arg_key>k</arg_key> c"), ("path", "x")),
             [("write_file", {"content": "a </tool_call> b <arg_key>k</arg_key> c", "path": "x"})], None, tools=CODE),
        Case("close-tag-then-a-whole-pair-across-whitespace",
             "<tool_call>f<arg_key>a</arg_key><arg_value>x</tool_call>"
             "<arg_key>b</arg_key>\n <arg_value>1</arg_value></tool_call>",
             [("f", {"a": "x"})], "<arg_key>b</arg_key>\n <arg_value>1</arg_value></tool_call>"),
    ]


CASES = [
    *close_tag_in_value_cases(call),
    Case("keys-holding-markup", call("set_item", ("items<0>", "x"), ("a>b", "2")),
         [("set_item", {"items<0>": "x", "a>b": 2})], None),
    Case("a-key-may-not-hold-the-next-pair", call("set_item", ("city<arg_value>x", "y")), [],
         call("set_item", ("city<arg_value>x", "y")), report={"calls": 0}),
    # ---------------------------------------------------------------- calls
    Case(
        "single",
        call("web_search", ("query", "GLM-4.6 release notes"), ("limit", "5")),
        [("web_search", {"query": "GLM-4.6 release notes", "limit": 5})],
        None,
        tools=SEARCH,
        report={"calls": 1},
    ),
    Case(
        "parallel-keeps-order",
        "\n"
        + call("web_search", ("query", "one"))
        + "\n"
        + call("web_search", ("query", "two"))
        + "\n"
        + call("web_search", ("query", "three")),
        [
            ("web_search", {"query": "one"}),
            ("web_search", {"query": "two"}),
            ("web_search", {"query": "three"}),
        ],
        None,
        tools=SEARCH,
        report={"calls": 3},
    ),
    Case("zero-arguments", "<tool_call>get_time</tool_call>", [("get_time", {})], None),
    Case(
        "zero-arguments-template-layout",
        "<tool_call>get_time\n</tool_call>",
        [("get_time", {})],
        None,
    ),
    Case(
        "nested-json-values",
        call(
            "plan",
            ("steps", '[{"do": "a", "args": [1, 2]}, {"do": "b", "args": []}]'),
            ("meta", '{"owner": {"name": "Lí"}, "draft": true}'),
        ),
        [
            (
                "plan",
                {
                    "steps": [{"do": "a", "args": [1, 2]}, {"do": "b", "args": []}],
                    "meta": {"owner": {"name": "Lí"}, "draft": True},
                },
            )
        ],
        None,
    ),
    Case(
        "content-before",
        "Searching now.\n" + call("web_search", ("query", "q")),
        [("web_search", {"query": "q"})],
        "Searching now.",
        tools=SEARCH,
    ),
    Case(
        "content-before-and-after",
        "Before.\n" + call("web_search", ("query", "q")) + "\nAfter.",
        [("web_search", {"query": "q"})],
        "Before.\n\nAfter.",
        tools=SEARCH,
    ),
    # ---------------------------------------------------------------- values keep whitespace
    Case(
        "value-keeps-surrounding-spaces",
        call("web_search", ("query", "  padded query  ")),
        [("web_search", {"query": "  padded query  "})],
        None,
        tools=SEARCH,
    ),
    Case(
        "value-keeps-newlines",
        call("web_search", ("query", "\nline one\n  line two\n")),
        [("web_search", {"query": "\nline one\n  line two\n"})],
        None,
        tools=SEARCH,
    ),
    Case(
        "value-keeps-whitespace-without-tools",
        call("echo", ("s", " \thello \n")),
        [("echo", {"s": " \thello \n"})],
        None,
    ),
    Case(
        "value-with-angle-brackets",
        call("echo", ("s", "a < b && <div>x</div> </arg_key>")),
        [("echo", {"s": "a < b && <div>x</div> </arg_key>"})],
        None,
    ),
    Case(
        "run-together-layout-accepted",
        "<tool_call>web_search<arg_key>query</arg_key><arg_value>x</arg_value></tool_call>",
        [("web_search", {"query": "x"})],
        None,
        tools=SEARCH,
    ),
    Case(
        "missing-value-close-before-call-close",
        "<tool_call>web_search\n<arg_key>query</arg_key>\n<arg_value>q</tool_call>",
        [("web_search", {"query": "q"})],
        None,
        tools=SEARCH,
        report={"repaired": 1},
    ),
    # ---------------------------------------------------------------- schema typing
    Case(
        "schema-typing",
        call(
            "typed",
            ("text", "007"),
            ("code", "02134"),
            ("count", "12"),
            ("ratio", "0.25"),
            ("on", "false"),
            ("none", "null"),
            ("tags", '["a", "b"]'),
            ("cfg", '{"depth": "2"}'),
            ("limit", "null"),
            ("key", "9"),
            ("mode", "slow"),
            ("span", "[1, 5]"),
            ("rows", '[{"id": "4"}]'),
        ),
        [
            (
                "typed",
                {
                    "text": "007",
                    "code": "02134",
                    "count": 12,
                    "ratio": 0.25,
                    "on": False,
                    "none": None,
                    "tags": ["a", "b"],
                    "cfg": {"depth": 2},
                    "limit": None,
                    "key": 9,
                    "mode": "slow",
                    "span": [1, 5],
                    "rows": [{"id": 4}],
                },
            )
        ],
        None,
        tools=TYPED,
        report={"invalid": 0},
    ),
    Case(
        "schema-typing-python-literals",
        call("typed", ("cfg", "{'depth': 3}"), ("on", "True"), ("tags", "['x']"), ("key", "k1")),
        [("typed", {"cfg": {"depth": 3}, "on": True, "tags": ["x"], "key": "k1"})],
        None,
        tools=TYPED,
        report={"invalid": 0},
    ),
    Case(
        "string-schema-never-coerced",
        call("typed", ("text", "[1, 2]"), ("code", "true")),
        [("typed", {"text": "[1, 2]", "code": "true"})],
        None,
        tools=TYPED,
    ),
    Case(
        "untyped-values-without-tools",
        call(
            "anything",
            ("n", "3"),
            ("f", "1.5"),
            ("ok", "false"),
            ("obj", '{"a": null}'),
            ("word", "Paris"),
            ("zip", "02134"),
        ),
        [
            (
                "anything",
                {
                    "n": 3,
                    "f": 1.5,
                    "ok": False,
                    "obj": {"a": None},
                    "word": "Paris",
                    "zip": "02134",
                },
            )
        ],
        None,
    ),
    # ---------------------------------------------------------------- reasoning
    Case(
        "reasoning-split",
        "<think>The user wants a search.</think>\n" + call("web_search", ("query", "q")),
        [("web_search", {"query": "q"})],
        None,
        "The user wants a search.",
        tools=SEARCH,
        options=REASONING,
    ),
    Case(
        "starts-in-reasoning",
        "Just answer.</think>\nHello there.",
        [],
        "\nHello there.",
        "Just answer.",
        options=IN_REASONING,
    ),
    Case(
        "tool-call-ends-reasoning",
        "Search first." + call("web_search", ("query", "q")),
        [("web_search", {"query": "q"})],
        None,
        "Search first.",
        tools=SEARCH,
        options=IN_REASONING,
    ),
    Case(
        "empty-reasoning-then-content",
        "<think></think>\nShort answer.",
        [],
        "\nShort answer.",
        None,
        options=REASONING,
    ),
    # ---------------------------------------------------------------- truncation
    Case(
        "cut-after-complete-pair",
        "<tool_call>web_search\n<arg_key>query</arg_key>\n<arg_value>q</arg_value>\n",
        [("web_search", {"query": "q"})],
        None,
        tools=SEARCH,
        report={"recovered": [0], "truncated": False},
    ),
    Case(
        "cut-mid-value",
        "Looking.\n<tool_call>web_search\n<arg_key>query</arg_key>\n<arg_value>half",
        [],
        "Looking.\n<tool_call>web_search\n<arg_key>query</arg_key>\n<arg_value>half",
        tools=SEARCH,
        report={"truncated": True, "calls": 0},
    ),
    Case(
        "cut-mid-key",
        "<tool_call>web_search\n<arg_key>que",
        [],
        "<tool_call>web_search\n<arg_key>que",
        tools=SEARCH,
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
        call("functions.web_search", ("query", "q")),
        [("web_search", {"query": "q"})],
        None,
        tools=SEARCH,
    ),
    Case(
        "case-and-dash",
        call("WEB-SEARCH", ("query", "q")),
        [("web_search", {"query": "q"})],
        None,
        tools=SEARCH,
    ),
    Case(
        "ambiguous-name-is-not-a-call",
        call("web-search", ("query", "q")),
        [],
        call("web-search", ("query", "q")),
        tools=TWINS,
        report={"rejected": 1, "calls": 0},
    ),
    Case(
        "unknown-name-stays-content",
        "Hm.\n" + call("rm_rf", ("path", "/")) + "\nok",
        [],
        "Hm.\n" + call("rm_rf", ("path", "/")) + "\nok",
        tools=SEARCH,
        report={"rejected": 1},
    ),
    Case(
        "unknown-then-known-is-index-0",
        call("rm_rf", ("path", "/")) + "\n" + call("web_search", ("query", "q")),
        [("web_search", {"query": "q"})],
        call("rm_rf", ("path", "/")),
        tools=SEARCH,
        report={"rejected": 1, "calls": 1},
    ),
    # ---------------------------------------------------------------- prose and malformed blocks
    Case("prose-angle-brackets", "a <b> c, and x < y > z", [], "a <b> c, and x < y > z"),
    Case(
        "prose-html",
        '<table><tr><td class="n">1</td></tr></table>',
        [],
        '<table><tr><td class="n">1</td></tr></table>',
    ),
    Case(
        "prose-code",
        "```java\nList<String> xs = new ArrayList<>(); if (i < n) {}\n```\nok",
        [],
        "```java\nList<String> xs = new ArrayList<>(); if (i < n) {}\n```\nok",
    ),
    Case(
        "prose-mentions-tool-call-tag",
        "GLM wraps calls in <tool_call> tags, then stops.",
        [],
        "GLM wraps calls in <tool_call> tags, then stops.",
        report={"calls": 0, "truncated": False},
    ),
    Case(
        "tool-call-holding-prose",
        "<tool_call>I would search the web</tool_call>",
        [],
        "<tool_call>I would search the web</tool_call>",
        report={"calls": 0},
    ),
    Case(
        "empty-tool-call",
        "<tool_call></tool_call> done",
        [],
        "<tool_call></tool_call> done",
        report={"calls": 0},
    ),
    Case(
        "key-crossing-its-delimiter-is-not-a-call",
        "<tool_call>web_search\n<arg_key>query<arg_key>limit</arg_key>\n<arg_value>3</arg_value>\n"
        "</tool_call>",
        [],
        "<tool_call>web_search\n<arg_key>query<arg_key>limit</arg_key>\n<arg_value>3</arg_value>\n"
        "</tool_call>",
        tools=SEARCH,
        report={"calls": 0},
    ),
    Case("think-is-content-when-reasoning-off", "<think>x</think>y", [], "<think>x</think>y"),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("glm45", CASES)
