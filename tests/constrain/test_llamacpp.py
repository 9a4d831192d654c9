"""Our GBNF, judged by llama.cpp itself (its grammar parser and sampler, via llama-cpp-python).

For every dialect that declares a shape: every grammar we write parses; calls rendered by the
dialect's own renderer are accepted; a wrong-typed or missing argument, an unknown tool, broken
markup, a second call where parallel calls are off, and prose under ``required`` are rejected;
prose then a call is accepted under ``auto``; the lazy grammar does the same in llama.cpp's own
lazy mode with the constraint's triggers; beside a JSON ``response_format`` the answer is a call
or that JSON. End to end, a tiny random-weights model sampling under the grammar writes calls
that toolbridge parses and that validate against the schema.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import toolbridge.dialects  # noqa: F401  (registers the dialects)
from toolbridge.constrain import compile_tools, gbnf
from toolbridge.constrain.gbnf import to_gbnf
from toolbridge.constrain.grammar import Grammar, Lit, Node, Rep, Text, chars, seq, until
from toolbridge.constrain.schema import expand_json
from toolbridge.dialects import get_dialect
from toolbridge.parsing.parser import parse
from toolbridge.syntax.dialect import registered
from toolbridge.syntax.shape import Args

from .llamacpp import Checker, tiny_model

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (`make engines` or `make check` builds it)")
pytest.importorskip("gguf", reason="gguf is not installed: the tiny test model cannot be written")
jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed")

SHAPED = sorted({d.name for d in registered().values() if d.shape is not None})


def function(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


WEATHER = function("get_weather", {"city": {"type": "string"},
                                   "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                   ["city"])
PAINT = function("paint", {
    "color": {"type": "string", "enum": ["red", "green"]},
    "count": {"type": "integer"},
    "ratio": {"type": "number"},
    "glossy": {"type": "boolean"},
    "layers": {"type": "array", "items": {"type": "integer"}, "maxItems": 3},
    "where": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
              "required": ["x", "y"]},
}, ["color", "count"])
NOW = function("now", {}, [])
MOODS = ["a\"b", "ünï ✓", "x\\y", "<tag>", "two\nlines", 7, None]
SAY = function("say", {"mood": {"enum": MOODS}, "times": {"type": "integer"}}, ["mood"])
PATCH = {"type": "custom", "custom": {"name": "apply_patch", "format": {
    "type": "grammar", "syntax": "lark",
    "definition": 'start: "*** Begin Patch\\n" /(.|\\n)*/ "*** End Patch"'}}}
LOOSE = {"type": "function", "function": {"name": "anything", "strict": False, "parameters": {
    "type": "object", "properties": {
        "tags": {"type": "array"}, "meta": {"type": "object"}, "any": {},
        "either": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}}}

TOOLSETS: dict[str, list[dict[str, Any]]] = {
    "weather": [WEATHER],
    "paint+weather": [PAINT, WEATHER],
    "three": [WEATHER, PAINT, NOW],
    "say": [SAY, WEATHER],
    "custom+loose": [WEATHER, PATCH, LOOSE],  # only compiled and parsed: no renderer case
}


@dataclass(frozen=True)
class Case:
    """Calls (tool, arguments) written by the renderer, after ``thought`` in the dialect's
    reasoning block where one is given."""

    toolset: str
    calls: tuple[tuple[str, dict[str, Any]], ...]
    thought: str = ""


VALID = [
    Case("weather", (("get_weather", {"city": "Paris"}),)),
    Case("weather", (("get_weather", {"city": "Zürich \"old\" <town>\n", "unit": "celsius"}),)),
    Case("paint+weather", (("paint", {"color": "red", "count": 3}),)),
    Case("paint+weather", (("paint", {"color": "green", "count": -12, "ratio": 0.5, "glossy": True,
                                      "layers": [1, 2, 3], "where": {"x": 0, "y": 7}}),)),
    Case("paint+weather", (("get_weather", {"city": "東京", "unit": "fahrenheit"}),)),
    Case("three", (("now", {}),)),
    Case("three", (("paint", {"color": "red", "count": 1, "glossy": False}),)),
    Case("weather", (("get_weather", {"city": "Oslo"}),), thought="\nWhich city? Oslo.\n"),
    *(Case("say", (("say", {"mood": mood, "times": 2}),)) for mood in MOODS),
]
# Second calls: accepted with parallel calls, rejected without.
PARALLEL = [
    Case("paint+weather", (("paint", {"color": "red", "count": 1}),
                           ("get_weather", {"city": "Rome"}))),
    Case("three", (("now", {}), ("now", {}), ("get_weather", {"city": "Lima", "unit": "celsius"}))),
]
# Rejected under every tool_choice.
def paint(**args: Any) -> Case:
    return Case("paint+weather", (("paint", args),))


INVALID = {
    "wrong type (integer)": paint(color="red", count="three"),
    "wrong type (boolean)": paint(color="red", count=1, glossy="yes"),
    "wrong type (nested)": paint(color="red", count=1, where={"x": "left", "y": 1}),
    "not in enum": paint(color="blue", count=1),
    "missing required": paint(color="red"),
    "too many items": paint(color="red", count=1, layers=[1, 2, 3, 4]),
    "unknown tool": Case("weather", (("get_time", {"city": "Paris"}),)),
    "unknown argument": Case("weather", (("get_weather", {"city": "Paris", "country": "FR"}),)),
}
PROSE = "Let me look that up for you.\n\n"


def render(dialect: str, case: Case) -> str:
    spec = get_dialect(dialect)
    assert spec.render is not None
    thought = ""
    if case.thought:
        if spec.reasoning is None:
            pytest.skip(f"{dialect} has no reasoning block")
        thought = spec.reasoning[0] + case.thought + spec.reasoning[1]
    return thought + spec.render(list(case.calls))


def triggered(dialect: str) -> bool:
    """Whether the dialect's calls can follow prose (a trigger starts them); where not, the calls
    are the whole answer (bare JSON, pythonic lists)."""
    return bool(written(dialect, "weather").triggers)


@dataclass(frozen=True)
class Written:
    """A constraint's GBNF, whole and lazy, and its lazy triggers."""

    whole: str
    lazy: str
    triggers: tuple[str, ...]


def written(dialect: str, toolset: str, **options: Any) -> Written:
    return _written(dialect, toolset, json.dumps(options, sort_keys=True))


@functools.cache
def _written(dialect: str, toolset: str, options: str) -> Written:
    constraint = compile_tools(dialect, TOOLSETS[toolset], **json.loads(options))
    return Written(gbnf(constraint), gbnf(constraint, lazy=True), constraint.triggers)


def grammar(dialect: str, toolset: str, **options: Any) -> str:
    return written(dialect, toolset, **options).whole


# -- the checker and the model -----------------------------------------------------------------

@pytest.fixture(scope="session")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_model(tmp_path_factory.mktemp("llamacpp") / "tiny.gguf")


@pytest.fixture(scope="session")
def checker(model_path: Path) -> Iterator[Checker]:
    check = Checker(model_path)
    yield check
    check.close()


HAND_WRITTEN = [  # (grammar, text, accepted)
    ('root ::= "a" [0-9]+ "b"?', "a12b", True),
    ('root ::= "a" [0-9]+ "b"?', "a1", True),
    ('root ::= "a" [0-9]+ "b"?', "ab", False),
    ('root ::= "a" [0-9]+ "b"?', "a1bb", False),
    ('root ::= "a" [0-9]+ "b"?', "", False),
    ('root ::= "a" [0-9]+ "b"?', "a", False),
    ('root ::= x{2,3}\nx ::= "to"', "tototo", True),
    ('root ::= x{2,3}\nx ::= "to"', "to", False),
    ('root ::= x{2,3}\nx ::= "to"', "totototo", False),
    ('root ::= [^<]* "<end>"', "日本 ✓ 🎉 café<end>", True),
    ('root ::= [^<]* "<end>"', "a<b<end>", False),
    ('root ::= "" | "x"', "", True),
    ('root ::= "\\n\\"" [\\x00-\\x1F]', '\n"\x01', True),
    ('root ::= "é"', "e", False),
]


@pytest.mark.parametrize("rules, text, accepted", HAND_WRITTEN)
def test_checker_agrees_on_hand_written_grammars(checker: Checker, rules: str, text: str,
                                                 accepted: bool) -> None:
    assert checker.accepts(rules, text) is accepted


def test_model_vocabulary_round_trips_any_text(checker: Checker) -> None:
    text = 'héllo ✓ 日本 🎉\t\n\x00\x7f<tool_call>\n{"name": "x"}  ok'
    assert checker.detokenize(checker.tokens(text)) == text


@pytest.mark.parametrize("rules", [
    'root ::= "a', "root ::= missing", 'start ::= "a"', "root ::= (", 'root ::= [a-',
])
def test_llamacpp_rejects_malformed_gbnf(checker: Checker, rules: str) -> None:
    assert not checker.parses(rules)


# -- the GBNF writer's spelling of characters ----------------------------------------------------

def node_gbnf(node: Node) -> str:
    return to_gbnf(Grammar(root=node), expand_json)


AWKWARD = '"\\\n\r\t\x01a\x7f^-[]|()*.é✓🎉'
WRITTEN = [  # (node, text, accepted)
    (Lit(AWKWARD), AWKWARD, True),
    (Lit(AWKWARD), AWKWARD[:-1], False),
    (Lit("\x01a"), "\x1a", False),
    (Rep(chars("^a-c"), 1, None), "^ab^c", True),
    (Rep(chars("^a-c"), 1, None), "d", False),
    (Rep(chars("-^]["), 1, None), "-^][", True),
    (Rep(chars("\\\n\x00-\x1f"), 1, None), "\\\n\x05", True),
    (Rep(chars("^\\", True), 1, None), "ab✓", True),
    (Rep(chars("^\\", True), 1, None), "a^", False),
    (seq(until("^]"), Lit("!")), "x^^[]^]!", True),
    (seq(until("^]"), Lit("!")), "^]x^]!", False),
    (seq(Lit("<"), Rep(chars("0-9"), 2, 3), Lit(">")), "<123>", True),
    (seq(Lit("<"), Rep(chars("0-9"), 2, 3), Lit(">")), "<1234>", False),
    (Text(("<a>",)), "any text but the marker", True),
    (Text(("<a>",)), "any <a> text", False),
]


@pytest.mark.parametrize("node, text, accepted", WRITTEN, ids=repr)
def test_writer_spells_characters_as_llamacpp_reads_them(checker: Checker, node: Node, text: str,
                                                         accepted: bool) -> None:
    assert checker.accepts(node_gbnf(node), text) is accepted, node_gbnf(node)


# -- every dialect with a shape: our grammar against llama.cpp's parser ---------------------------

OPTIONS = [
    {"tool_choice": "auto"},
    {"tool_choice": "required"},
    {"tool_choice": "required", "parallel_tool_calls": False},
    {"tool_choice": "auto", "reasoning": "off"},
    {"tool_choice": "required", "reasoning": "open"},
    {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
    {"tool_choice": "auto", "response_format": {"type": "json_object"}},
    {"tool_choice": "required", "strict": False, "response_format": {
        "type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": {
            "type": "object", "required": ["answer"],
            "properties": {"answer": {"type": "string"}, "score": {"type": "number"}}}}}},
]


@pytest.mark.parametrize("dialect", SHAPED)
@pytest.mark.parametrize("toolset", sorted(TOOLSETS))
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: json.dumps(o, sort_keys=True))
def test_every_grammar_parses(checker: Checker, dialect: str, toolset: str,
                              options: dict[str, Any]) -> None:
    rules = written(dialect, toolset, **options)
    assert checker.parses(rules.whole), rules.whole
    assert checker.parses(rules.lazy), rules.lazy


@pytest.mark.parametrize("dialect", SHAPED)
@pytest.mark.parametrize("case", VALID + PARALLEL, ids=repr)
def test_rendered_calls_are_accepted(checker: Checker, dialect: str, case: Case) -> None:
    text = render(dialect, case)
    for choice in ("auto", "required"):
        rules = grammar(dialect, case.toolset, tool_choice=choice)
        assert checker.accepts(rules, text), (choice, text)
    if not case.thought:
        assert checker.accepts(written(dialect, case.toolset).lazy, text)


@pytest.mark.parametrize("dialect", SHAPED)
@pytest.mark.parametrize("case", VALID, ids=repr)
def test_named_tool_accepts_its_own_call_only(checker: Checker, dialect: str, case: Case) -> None:
    text = render(dialect, case)
    for tool in TOOLSETS[case.toolset]:
        name = tool["function"]["name"]
        named = {"type": "function", "function": {"name": name}}
        rules = grammar(dialect, case.toolset, tool_choice=named)
        assert checker.accepts(rules, text) is (name == case.calls[0][0]), (name, text)


@pytest.mark.parametrize("dialect", SHAPED)
@pytest.mark.parametrize("case", PARALLEL, ids=repr)
def test_second_call_rejected_without_parallel_calls(checker: Checker, dialect: str,
                                                     case: Case) -> None:
    rules = grammar(dialect, case.toolset, tool_choice="required", parallel_tool_calls=False)
    assert not checker.accepts(rules, render(dialect, case))
    assert checker.accepts(rules, render(dialect, Case(case.toolset, case.calls[:1])))


@pytest.mark.parametrize("dialect", SHAPED)
@pytest.mark.parametrize("what", sorted(INVALID))
@pytest.mark.parametrize("choice", ["auto", "required"])
def test_invalid_calls_are_rejected(checker: Checker, dialect: str, what: str, choice: str) -> None:
    """Under ``auto``, a dialect whose calls have no trigger takes other text as prose, but
    not text that starts as a call does (its reader would take it for calls)."""
    case = INVALID[what]
    text = render(dialect, case)
    rules = grammar(dialect, case.toolset, tool_choice=choice)
    shape = get_dialect(dialect).shape
    assert shape is not None
    opens = {(shape.section[0] + template)[:1] for template in shape.calls}
    prose = choice == "auto" and not triggered(dialect) and text.lstrip()[:1] not in opens
    assert checker.accepts(rules, text) is prose, text


@pytest.mark.parametrize("dialect", SHAPED)
@pytest.mark.parametrize("cut", [1, 5, 12])
def test_broken_markup_is_rejected(checker: Checker, dialect: str, cut: int) -> None:
    text = render(dialect, VALID[0])
    rules = grammar(dialect, "weather", tool_choice="required")
    assert not checker.accepts(rules, text[:-cut])
    assert not checker.accepts(rules, text[cut:])


@pytest.mark.parametrize("dialect", SHAPED)
@pytest.mark.parametrize("case", VALID[:3], ids=repr)
def test_prose_before_a_call(checker: Checker, dialect: str, case: Case) -> None:
    """(Where the calls have no trigger, the whole answer is then prose.)"""
    text = PROSE + render(dialect, case)
    assert checker.accepts(grammar(dialect, case.toolset, tool_choice="auto"), text)
    assert not checker.accepts(grammar(dialect, case.toolset, tool_choice="required"), text)


REASONING = [d for d in SHAPED if get_dialect(d).reasoning is not None]


@pytest.mark.parametrize("dialect", REASONING)
@pytest.mark.parametrize("choice", ["auto", "required"])
def test_reasoning_first(checker: Checker, dialect: str, choice: str) -> None:
    """The thinking block is free and the grammar begins after its end; with
    ``reasoning="open"`` the prompt opened it, so the answer must close it. A call in the
    thinking is text there, unless the dialect's reader takes it for a call
    (``calls_in_reasoning``): then the grammar refuses it, as the parser would not agree."""
    spec = get_dialect(dialect)
    start, end = spec.reasoning  # type: ignore[misc]
    call = render(dialect, VALID[0])
    plain, with_call = f"Hm, {start} nested; not yet.\n", f"Maybe {call} but not yet.\n"
    opened = grammar(dialect, "weather", tool_choice=choice, reasoning="open")
    assert checker.accepts(opened, plain + end + call)
    assert checker.accepts(opened, with_call + end + call) is not spec.calls_in_reasoning
    assert not checker.accepts(opened, call)
    closed = grammar(dialect, "weather", tool_choice=choice)
    assert checker.accepts(closed, start + plain + end + call)
    assert checker.accepts(closed, start + with_call + end + call) is not spec.calls_in_reasoning
    off = grammar(dialect, "weather", tool_choice="required", reasoning="off")
    assert not checker.accepts(off, start + plain + end + call)


TRIGGERED = [d for d in SHAPED if triggered(d)]


@pytest.mark.parametrize("dialect", TRIGGERED)
@pytest.mark.parametrize("case", VALID + PARALLEL, ids=repr)
def test_lazy_grammar_takes_over_at_a_trigger(checker: Checker, dialect: str, case: Case) -> None:
    """llama.cpp's own lazy mode (``grammar_lazy``): free until one of ``constraint.triggers``,
    then the lazy grammar from the trigger on."""
    rules, triggers = written(dialect, case.toolset).lazy, written(dialect, case.toolset).triggers
    call = render(dialect, case)
    assert checker.accepts(rules, call, triggers)
    assert checker.accepts(rules, PROSE + call, triggers)
    assert checker.accepts(rules, PROSE, triggers)


@pytest.mark.parametrize("dialect", TRIGGERED)
@pytest.mark.parametrize("what", sorted(INVALID))
def test_lazy_grammar_rejects_invalid_calls(checker: Checker, dialect: str, what: str) -> None:
    case = INVALID[what]
    rules = written(dialect, case.toolset)
    assert not checker.accepts(rules.lazy, PROSE + render(dialect, case), rules.triggers)


ANSWER_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}},
                 "required": ["answer"]}
ANSWER_FORMAT = {"type": "json_schema",
                 "json_schema": {"name": "answer", "strict": True, "schema": ANSWER_SCHEMA}}


@pytest.mark.parametrize("dialect", SHAPED)
@pytest.mark.parametrize("text, accepted", [
    ('{"answer": "It is sunny."}', True),
    ('\n{ "answer" : "" }', True),
    ('{"score": 1}', False),
    ('{"answer": "sunny", "score": 1}', False),
    (PROSE, False),
    (PROSE + '{"answer": "x"}', False),
])
def test_json_format_beside_tools(checker: Checker, dialect: str, text: str,
                                  accepted: bool) -> None:
    """With a JSON response_format, the answer is a call or that JSON, and nothing else."""
    rules = grammar(dialect, "weather", tool_choice="auto", response_format=ANSWER_FORMAT)
    assert checker.accepts(rules, text) is accepted
    assert checker.accepts(rules, render(dialect, VALID[0]))


@pytest.mark.parametrize("dialect", SHAPED)
def test_prose_alone(checker: Checker, dialect: str) -> None:
    assert checker.accepts(grammar(dialect, "weather", tool_choice="auto"), PROSE)
    assert not checker.accepts(grammar(dialect, "weather", tool_choice="required"), PROSE)


def json_args(dialect: str) -> bool:
    return get_dialect(dialect).shape.args is Args.JSON  # type: ignore[union-attr]


@pytest.mark.parametrize("dialect", SHAPED)
def test_numbers_a_double_holds(checker: Checker, dialect: str) -> None:
    """The grammar takes numbers a double holds, which every reader types as numbers, and
    refuses one beyond its range (1e400: JSON's syntax, but a raw-text or Python reader cannot
    read it as a number, and random weights write such exponents readily)."""
    tools = [function("scale", {"by": {"type": "number"}}, ["by"])]
    rules = gbnf(compile_tools(dialect, tools, tool_choice="required"))
    written = get_dialect(dialect).render([("scale", {"by": 1.25})])
    for number in ("1e99", "-12345678901234567.5", "2.5E-7", "6.5e+175", "1.5e308", "-5e-324"):
        text = written.replace("1.25", number)
        assert checker.accepts(rules, text), text
        calls = parse(text, dialect, tools).message.get("tool_calls") or []
        assert len(calls) == 1, text
        jsonschema.validate(json.loads(calls[0]["function"]["arguments"]), tools[0]["function"]["parameters"])
    for number in ("1e400", "1" * 40):
        assert not checker.accepts(rules, written.replace("1.25", number)), number


# -- end to end: random weights, sampling under our grammar ---------------------------------------

E2E_SEEDS = (1, 2, 3, 4, 5)


def e2e_tools(dialect: str) -> list[dict[str, Any]]:
    """Tools whose every argument ends within a few tokens even when sampled at random: enums,
    integers, booleans, arrays of those with few items; bounded strings where they are JSON (an
    XML dialect's string is raw text up to the closing tag, which random sampling never writes)."""
    light = {"room": {"type": "string", "enum": ["kitchen", "hall", "attic"]},
             "level": {"type": "integer"}, "on": {"type": "boolean"},
             "scenes": {"type": "array", "items": {"type": "string", "enum": ["day", "night"]},
                        "maxItems": 2},
             "at": {"type": "object", "required": ["x"],
                    "properties": {"x": {"type": "integer"}, "y": {"type": "null"}}}}
    if json_args(dialect):
        light["label"] = {"type": "string", "maxLength": 6}
        light["dim"] = {"type": "number"}  # elsewhere see test_numbers_a_double_holds
    return [function("set_light", light, ["room", "level"]),
            function("get_time", {"zone": {"type": "string", "enum": ["utc", "local"]}}, ["zone"])]


@pytest.fixture(scope="session")
def llama(model_path: Path) -> Iterator[Any]:
    import llama_cpp

    # One thread: ggml's spinning workers stall when the CPU is busy (15 s instead of 0.2 s).
    model = llama_cpp.Llama(model_path=str(model_path), n_ctx=1024, n_threads=1,
                            n_threads_batch=1, verbose=False)
    yield model
    model.close()


E2E_RUNS = [("required", False), ("get_time", False), ("required", True)]  # (tool_choice, parallel)


@pytest.mark.parametrize("dialect", SHAPED)
@pytest.mark.parametrize("choice, parallel", E2E_RUNS)
def test_random_weights_write_valid_calls(llama: Any, dialect: str, choice: str,
                                          parallel: bool) -> None:
    """Reasoning off: a random sampler never closes a thinking block."""
    import llama_cpp

    tools = e2e_tools(dialect)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    named = {"type": "function", "function": {"name": choice}}
    constraint = compile_tools(dialect, tools, parallel_tool_calls=parallel, reasoning="off",
                               tool_choice=choice if choice == "required" else named)
    rules = llama_cpp.LlamaGrammar.from_string(gbnf(constraint), verbose=False)
    texts = set()
    for seed in E2E_SEEDS[:3] if parallel else E2E_SEEDS:
        out = llama.create_completion("Call a tool.\n", grammar=rules, temperature=1.0, seed=seed,
                                      max_tokens=600 if parallel else 400)
        text, cut = out["choices"][0]["text"], out["choices"][0]["finish_reason"] == "length"
        # One call ends within max_tokens; parallel calls go on while the sampler picks another
        # (about three in four in some dialects), so there the last may be cut.
        assert parallel or not cut, text
        result = parse(text, dialect, tools, cut=cut)
        calls = result.message.get("tool_calls") or []
        assert len(calls) == 1 or (parallel and calls), (text, result.report)
        cut_off = [r for r in result.report.rejected if cut and r.get("reason") == "truncated"]
        assert not result.report.invalid, (text, result.report)
        assert result.report.rejected == cut_off, (text, result.report)
        for call in calls:
            name = call["function"]["name"]
            assert name == choice or choice == "required", text
            jsonschema.validate(json.loads(call["function"]["arguments"]), schemas[name])
        texts.add(text)
    assert len(texts) > 1, "every seed wrote the same text: the sampler is not sampling"


VERDICT = {"type": "object", "required": ["verdict"], "properties": {
    "verdict": {"enum": ["yes", "no"]}, "score": {"type": "integer"}}}


@pytest.mark.parametrize("dialect", SHAPED)
def test_random_weights_answer_a_call_or_the_json_format(llama: Any, dialect: str) -> None:
    """Under ``auto`` with a JSON response_format, whatever is sampled is a valid call or JSON
    that follows the format, and both are sampled (the format does not make calls impossible)."""
    import llama_cpp

    tools = e2e_tools(dialect)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    answer_format = {"type": "json_schema",
                     "json_schema": {"name": "verdict", "strict": True, "schema": VERDICT}}
    constraint = compile_tools(dialect, tools, tool_choice="auto", reasoning="off",
                               parallel_tool_calls=False, response_format=answer_format)
    rules = llama_cpp.LlamaGrammar.from_string(gbnf(constraint), verbose=False)
    kinds = set()
    for seed in range(1, 17):
        out = llama.create_completion("Answer.\n", grammar=rules, temperature=1.0, seed=seed,
                                      max_tokens=1200)
        text = out["choices"][0]["text"]
        assert out["choices"][0]["finish_reason"] == "stop", text
        result = parse(text, dialect, tools)
        calls = result.message.get("tool_calls") or []
        assert len(calls) <= 1 and not result.report.invalid, (text, result.report)
        for call in calls:
            jsonschema.validate(json.loads(call["function"]["arguments"]),
                                schemas[call["function"]["name"]])
        if not calls:
            jsonschema.validate(json.loads(result.message["content"]), VERDICT)
        kinds.add("call" if calls else "json")
    assert kinds == {"call", "json"}
