"""Hermes / Qwen2.5 / Qwen3: one JSON object per call inside <tool_call> tags.

Outputs are written the way the Qwen3 and Hermes 3 chat templates render calls:
``<tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call>``, calls separated by a newline.
"""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]
FS = [tool("os__fs__read", path={"type": "string"}), tool("os__fs__write", path={"type": "string"})]
DOTTED = [tool("os.fs.read", path={"type": "string"})]
TWINS = [tool("get_weather"), tool("Get_Weather")]
REASONING = {"reasoning": True}
IN_REASONING = {"reasoning": True, "in_reasoning": True}

CASES = [
    # ---------------------------------------------------------------- calls
    Case(
        "single",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n'
        "</tool_call>",
        [("get_weather", {"city": "Paris", "days": 3})],
        None,
        tools=WEATHER,
        report={"calls": 1},
    ),
    Case(
        "two-objects-one-wrapper",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}},\n'
        '{"name": "get_weather", "arguments": {"city": "Rome", "days": 1}}\n</tool_call>',
        [("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Rome", "days": 1})],
        None,
        tools=WEATHER,
        report={"calls": 2, "repaired": 1},
    ),
    Case(
        "second-object-unknown-tool-stays-content",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}\n{"name": "nope", "arguments": {}}</tool_call>',
        [("get_weather", {"city": "Oslo"})],
        '{"name": "nope", "arguments": {}}</tool_call>',
        tools=WEATHER,
        report={"calls": 1, "rejected": 1},
    ),
    Case(
        "parallel-keeps-order",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lima"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pune", "days": 2}}\n'
        "</tool_call>",
        [
            ("get_weather", {"city": "Oslo"}),
            ("get_weather", {"city": "Lima"}),
            ("get_weather", {"city": "Pune", "days": 2}),
        ],
        None,
        tools=WEATHER,
        report={"calls": 3},
    ),
    Case(
        "zero-arguments",
        '<tool_call>\n{"name": "list_files", "arguments": {}}\n</tool_call>',
        [("list_files", {})],
        None,
    ),
    Case("no-arguments-key", '<tool_call>\n{"name": "now"}\n</tool_call>', [("now", {})], None),
    Case(
        "nested-arguments",
        '<tool_call>\n{"name": "create_issue", "arguments": {"title": "Crash on \\"save\\"", '
        '"labels": ["bug", "p1"], "meta": {"owner": {"login": "zoë", "id": 7}, "links": [], '
        '"weights": [0.5, -1e3], "draft": false, "due": null}}}\n</tool_call>',
        [
            (
                "create_issue",
                {
                    "title": 'Crash on "save"',
                    "labels": ["bug", "p1"],
                    "meta": {
                        "owner": {"login": "zoë", "id": 7},
                        "links": [],
                        "weights": [0.5, -1000.0],
                        "draft": False,
                        "due": None,
                    },
                },
            )
        ],
        None,
    ),
    Case(
        "content-before",
        "Let me check the forecast.\n\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>',
        [("get_weather", {"city": "Rome"})],
        "Let me check the forecast.",
        tools=WEATHER,
    ),
    Case(
        "content-before-and-after",
        'First.\n<tool_call>\n{"name": "ping", "arguments": {"host": "a"}}\n</tool_call>\n'
        "Then more.",
        [("ping", {"host": "a"})],
        "First.\n\nThen more.",
    ),
    # ---------------------------------------------------------------- reasoning
    Case(
        "reasoning-split",
        "<think>\nThe user wants the weather in Paris.\n</think>\n\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        [("get_weather", {"city": "Paris"})],
        None,
        "\nThe user wants the weather in Paris.\n",
        tools=WEATHER,
        options=REASONING,
    ),
    Case(
        "starts-in-reasoning",
        "Simple greeting, no tool needed.\n</think>\n\nHello!",
        [],
        "\n\nHello!",
        "Simple greeting, no tool needed.\n",
        options=IN_REASONING,
    ),
    Case(
        "reasoning-unclosed",
        "Still weighing the options",
        [],
        "",
        "Still weighing the options",
        options=IN_REASONING,
    ),
    Case(
        "tool-call-ends-reasoning",
        "I should look it up.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Kyiv"}}\n</tool_call>',
        [("get_weather", {"city": "Kyiv"})],
        None,
        "I should look it up.\n",
        tools=WEATHER,
        options=IN_REASONING,
    ),
    Case("think-is-content-when-reasoning-off", "<think>hm</think>Hi.", [], "<think>hm</think>Hi."),
    # ---------------------------------------------------------------- tolerated variants
    Case(
        "parameters-key",
        '<tool_call>\n{"name": "get_weather", "parameters": {"city": "Bern"}}\n</tool_call>',
        [("get_weather", {"city": "Bern"})],
        None,
        tools=WEATHER,
    ),
    Case(
        "arguments-as-json-string",
        "<tool_call>\n"
        '{"name": "get_weather", "arguments": '
        '"{\\"city\\": \\"Nice\\", \\"days\\": 1}"}\n</tool_call>',
        [("get_weather", {"city": "Nice", "days": 1})],
        None,
        tools=WEATHER,
        report={"repaired": 1},
    ),
    Case(
        "arguments-before-name",
        '<tool_call>\n{"arguments": {"city": "Graz"}, "name": "get_weather"}\n</tool_call>',
        [("get_weather", {"city": "Graz"})],
        None,
        tools=WEATHER,
    ),
    Case(
        "close-tag-in-string",
        '<tool_call>\n{"name": "write", "arguments": {"s": "a</tool_call>b", "t": "<tool_call>"}}\n'
        "</tool_call>",
        [("write", {"s": "a</tool_call>b", "t": "<tool_call>"})],
        None,
    ),
    Case(
        "raw-newline-in-string",
        '<tool_call>\n{"name": "write", "arguments": {"text": "line one\nline two\tend"}}\n'
        "</tool_call>",
        [("write", {"text": "line one\nline two\tend"})],
        None,
        report={"repaired": 1},
    ),
    Case(
        "no-space-layout",
        '<tool_call>{"name":"f","arguments":{"a":[1,{"b":2}]}}</tool_call>',
        [("f", {"a": [1, {"b": 2}]})],
        None,
    ),
    Case(
        "fenced-json-call",
        'Calling:\n```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```',
        [("get_weather", {"city": "Oslo"})],
        "Calling:",
        tools=WEATHER,
    ),
    Case(
        "fence-holding-a-tagged-call",
        '```\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rabat"}}\n'
        "</tool_call>\n```",
        [("get_weather", {"city": "Rabat"})],
        None,
        tools=WEATHER,
    ),
    # ---------------------------------------------------------------- truncation
    Case(
        "missing-close-at-end",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Baku"}}\n',
        [("get_weather", {"city": "Baku"})],
        None,
        tools=WEATHER,
        report={"recovered": [0], "truncated": False},
    ),
    Case(
        "close-tag-cut-at-end",
        'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Baku"}}\n</tool_',
        [("get_weather", {"city": "Baku"})],
        "Checking.",
        tools=WEATHER,
        report={"recovered": 1},
    ),
    Case(
        "cut-mid-arguments",
        'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Ba',
        [],
        'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Ba',
        tools=WEATHER,
        report={"truncated": True, "calls": 0},
    ),
    Case(
        "cut-mid-name",
        '<tool_call>\n{"name": "get_wea',
        [],
        '<tool_call>\n{"name": "get_wea',
        report={"truncated": True},
    ),
    # ---------------------------------------------------------------- names
    Case(
        "dotted-name-to-offered-underscores",
        '<tool_call>\n{"name": "os.fs.read", "arguments": {"path": "/etc/hosts"}}\n</tool_call>',
        [("os__fs__read", {"path": "/etc/hosts"})],
        None,
        tools=FS,
    ),
    Case(
        "underscored-name-to-offered-dots",
        '<tool_call>\n{"name": "os__fs__read", "arguments": {"path": "a"}}\n</tool_call>',
        [("os.fs.read", {"path": "a"})],
        None,
        tools=DOTTED,
    ),
    Case(
        "functions-prefix",
        '<tool_call>\n{"name": "functions.get_weather", "arguments": {"city": "Quito"}}\n'
        "</tool_call>",
        [("get_weather", {"city": "Quito"})],
        None,
        tools=WEATHER,
    ),
    Case(
        "case-and-dash",
        '<tool_call>\n{"name": "Get-Weather", "arguments": {"city": "Lagos"}}\n</tool_call>',
        [("get_weather", {"city": "Lagos"})],
        None,
        tools=WEATHER,
    ),
    Case(
        "ambiguous-name-is-not-a-call",
        '<tool_call>\n{"name": "get-weather", "arguments": {}}\n</tool_call>',
        [],
        '<tool_call>\n{"name": "get-weather", "arguments": {}}\n</tool_call>',
        tools=TWINS,
        report={"rejected": 1, "calls": 0},
    ),
    Case(
        "unknown-name-stays-content",
        'Sure.\n<tool_call>\n{"name": "send_email", "arguments": {"to": "x@y.z"}}\n</tool_call>\n'
        "Done.",
        [],
        'Sure.\n<tool_call>\n{"name": "send_email", "arguments": {"to": "x@y.z"}}\n</tool_call>\n'
        "Done.",
        tools=WEATHER,
        report={"rejected": 1},
    ),
    Case(
        "unknown-then-known-is-index-0",
        '<tool_call>\n{"name": "send_email", "arguments": {}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Turin"}}\n</tool_call>',
        [("get_weather", {"city": "Turin"})],
        '<tool_call>\n{"name": "send_email", "arguments": {}}\n</tool_call>',
        tools=WEATHER,
        report={"rejected": 1, "calls": 1},
    ),
    # ---------------------------------------------------------------- prose is prose
    Case("prose-angle-brackets", "a <b> c, and x < y > z", [], "a <b> c, and x < y > z"),
    Case(
        "prose-html",
        '<div class="tip"><p>Use <em>bold</em> &lt;b&gt;</p></div>\n',
        [],
        '<div class="tip"><p>Use <em>bold</em> &lt;b&gt;</p></div>\n',
    ),
    Case(
        "prose-code-with-angle-brackets",
        "Example:\n```cpp\ntemplate <typename T> bool lt(T a, T b) { return a < b; }\n```\n"
        "That is all.",
        [],
        "Example:\n```cpp\ntemplate <typename T> bool lt(T a, T b) { return a < b; }\n```\n"
        "That is all.",
    ),
    Case(
        "prose-mentions-tool-call-tag",
        "Wrap each call in <tool_call> tags, like the docs say.",
        [],
        "Wrap each call in <tool_call> tags, like the docs say.",
        report={"calls": 0, "truncated": False},
    ),
    Case(
        "tool-call-holding-prose",
        "<tool_call>\nI cannot call tools here.\n</tool_call>\nSorry.",
        [],
        "<tool_call>\nI cannot call tools here.\n</tool_call>\nSorry.",
        report={"calls": 0},
    ),
    Case(
        "tool-call-holding-plain-json",
        '<tool_call>\n{"city": "Paris"}\n</tool_call>',
        [],
        '<tool_call>\n{"city": "Paris"}\n</tool_call>',
        report={"calls": 0},
    ),
    Case("bare-json-that-is-not-a-call", '{"answer": 42}', [], '{"answer": 42}'),
    Case(
        "name-not-a-string",
        '<tool_call>\n{"name": 42, "arguments": {}}\n</tool_call>',
        [],
        '<tool_call>\n{"name": 42, "arguments": {}}\n</tool_call>',
        report={"calls": 0},
    ),
    Case(
        "form-feed-is-not-json-whitespace",
        '<tool_call>\n{"name"\x0c: "get_weather", "arguments": {}}\n</tool_call>',
        [],
        '<tool_call>\n{"name"\x0c: "get_weather", "arguments": {}}\n</tool_call>',
        report={"calls": 0},
    ),
    Case(
        "head-with-escapes-cut-anywhere",
        '<tool_call>\n{"name": "get_\\u0077eather", "arguments": {"city": "a\\"b"}}\n</tool_call>',
        [("get_weather", {"city": 'a"b'})],
        None,
        tools=WEATHER,
    ),
    Case(
        "key-written-twice-each-typed",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": 5, "city": "Oslo"}}\n</tool_call>',
        [("get_weather", {"city": "Oslo"})],
        None,
        tools=WEATHER,
        report={"calls": 1, "repaired": 1},
    ),
    Case(
        "nested-value-spelled-its-own-way",
        '<tool_call>\n{"name": "get_weather", "arguments": {"days": 2, "city": {"a" :1}}}\n</tool_call>',
        [("get_weather", {"days": 2, "city": {"a": 1}})],
        None,
        tools=WEATHER,
    ),
]

# A length stop (``close(cut=True)``) always wins: a call whose close tag never came is cut,
# never a call, however complete its object; without the stop it is repaired.
_WHOLE_OBJECT = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}'
CASES += [
    Case("length-stop-before-close-tag", _WHOLE_OBJECT + "\n</tool", [], _WHOLE_OBJECT + "\n</tool", tools=WEATHER,
         cut=True, report={"truncated": True, "aborted": 1, "calls": 0}),
    Case("length-stop-right-after-the-object", _WHOLE_OBJECT, [], _WHOLE_OBJECT, tools=WEATHER, cut=True,
         report={"truncated": True, "aborted": 1}),
    Case("length-stop-before-the-envelope-brace", _WHOLE_OBJECT[:-1], [], _WHOLE_OBJECT[:-1], tools=WEATHER, cut=True,
         report={"truncated": True, "aborted": 1}),
    Case("length-stop-after-the-close-tag-keeps-the-call", _WHOLE_OBJECT + "\n</tool_call>\nMore",
         [("get_weather", {"city": "Paris"})], "\nMore", tools=WEATHER, cut=True, report={"truncated": False}),
    Case("length-stop-keeps-the-calls-before-the-cut-one", _WHOLE_OBJECT + "\n</tool_call>\n" + _WHOLE_OBJECT + "\n</",
         [("get_weather", {"city": "Paris"})], "\n" + _WHOLE_OBJECT + "\n</", tools=WEATHER, cut=True,
         report={"truncated": True, "aborted": 1}),
    Case("close-tag-missing-at-a-clean-end-is-repaired", _WHOLE_OBJECT + "\n</tool",
         [("get_weather", {"city": "Paris"})], None, tools=WEATHER, report={"recovered": 1}),
    Case("named-function-length-stop-before-close", '<function=get_weather>{"city": "Paris"}</func', [],
         '<function=get_weather>{"city": "Paris"}</func', tools=WEATHER, cut=True, report={"truncated": True}),
    Case("bare-object-closed-by-its-brace-stands-at-a-length-stop",
         '{"name": "get_weather", "arguments": {"city": "Paris"}}', [("get_weather", {"city": "Paris"})], None,
         tools=WEATHER, cut=True),
    Case("bare-object-without-its-brace-is-cut-at-a-length-stop",
         '{"name": "get_weather", "arguments": {"city": "Paris"}', [],
         '{"name": "get_weather", "arguments": {"city": "Paris"}', tools=WEATHER, cut=True, report={"truncated": True}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("hermes", CASES)
