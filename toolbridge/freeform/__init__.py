"""Freeform (``custom``) tools: a tool whose input is raw text, not a JSON object.

OpenAI's ``custom`` tools (Codex's ``apply_patch``) take one string, optionally bound by a Lark or
regex grammar. No open model's dialect has a raw-text call, so a freeform tool is offered to the
model as a function with one string parameter, ``input`` (``declaration``), and a call is read
back through it: its input is the ``input`` member's string, or the only member's string when
the model named it otherwise (``input_of``). While a call streams, ``InputDeltas`` turns the
fragments of its JSON arguments into the pieces of the raw input, so a client sees the text as
the model writes it.

A call's input is checked against the tool's grammar by ``Format.check``, with llguidance: the
engine whose Lark dialect (zero-width regular expressions, ``%import common``...) these
grammars are written in, used here as a matcher over bytes. Without llguidance installed, grammar
checks are skipped and say so once in the log.

A grammar comes from a client, and the engine is native code: ``Format.of`` first holds it to
the bounds of ``bounds`` (size, rules, nesting, depth of references), which keep it well below
where the engine overflows its stack or takes seconds, and compiling is a separate step
(``Format.verify`` here; the gateway first compiles it in a child process, then here: see
``gateway.grammars``). Compiles run on a thread of their own with ``COMPILE_STACK`` of stack, so
their depth does not depend on the stack of the thread that asks. A compiled grammar is kept
(``_Grammars``) and each check matches with a copy of it, so a check never compiles again while
the grammar is kept.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from . import bounds

log = logging.getLogger("toolbridge")

INPUT = "input"
SYNTAXES = ("lark", "regex")
# What the model is shown: one string parameter.
DECLARED = {"type": "object", "properties": {INPUT: {"type": "string", "description": "The tool's raw "
            "input text, exactly as the tool reads it."}}, "required": [INPUT]}
# What a call is read with: any member is a string (the model may name it otherwise).
READ_AS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}}
STRING = {"type": "string"}
GRAMMAR_SHOWN = 4000  # the longest grammar quoted in the declaration's description
# The stack a compile runs with: four times what a grammar at the bounds takes (``bounds``).
COMPILE_STACK = 32 << 20


@dataclass(frozen=True)
class Format:
    """A freeform tool's input format: ``text`` (anything), or a ``lark`` / ``regex`` grammar."""

    syntax: str = "text"
    definition: str = ""
    where: str = field(default="", compare=False, repr=False)  # the request's field, for errors

    @classmethod
    def of(cls, value: Any, where: str) -> Format:
        """The format of a tool's ``format`` field (None: text); ConfigError naming ``where``
        when it is malformed or its grammar passes a bound (``bounds``). The grammar is not
        compiled here: ``verify`` does it."""
        if value is None:
            return cls()
        kind = value.get("type") if isinstance(value, dict) else None
        if kind == "text":
            return cls()
        if kind != "grammar":
            raise ConfigError(f"{where}.type: must be 'text' or 'grammar'")
        if isinstance(value.get("grammar"), dict):  # the Chat Completions shape nests it
            value, where = value["grammar"], f"{where}.grammar"
        syntax, definition = value.get("syntax"), value.get("definition")
        if syntax not in SYNTAXES:
            raise ConfigError(f"{where}.syntax: must be 'lark' or 'regex'")
        if not isinstance(definition, str) or not definition:
            raise ConfigError(f"{where}.definition: the grammar's text is required")
        problem = bounds.problem(syntax, definition)
        if problem:
            raise ConfigError(f"{where}.definition: {problem}")
        return cls(syntax, definition, where)

    def verify(self, budget: float | None = None) -> Format:
        """This format, once its grammar compiles (here, on a thread of its own); ConfigError
        naming the field when it does not, or takes more than ``budget`` seconds."""
        if self.syntax != "text":
            error = GRAMMARS.compile_error(self, budget)
            if error:
                raise ConfigError(self.compile_failure(error))
        return self

    def compile_failure(self, error: str) -> str:
        """The message for a grammar that does not compile because of ``error``."""
        return f"{self.where or 'format'}.definition: the {self.syntax} grammar does not compile: {error}"

    def check(self, text: str) -> tuple[str, ...]:
        """Why ``text`` does not match the grammar (empty when it does, or when unchecked)."""
        if self.syntax == "text":
            return ()
        return GRAMMARS.mismatch(self, text)

    def shown(self) -> str:
        """What the declaration's description adds about the format."""
        if self.syntax == "text":
            return ""
        grammar = self.definition if len(self.definition) <= GRAMMAR_SHOWN else self.definition[:GRAMMAR_SHOWN] + "\n..."
        return f"\n\nThe input must match this {self.syntax} grammar:\n{grammar}"


def declaration(name: str, description: str | None, fmt: Format) -> dict[str, Any]:
    """The OpenAI function tool a freeform tool is offered to the model as."""
    text = (description or "") + fmt.shown()
    function: dict[str, Any] = {"name": name, "parameters": DECLARED}
    if text:
        function["description"] = text.strip()
    return {"type": "function", "function": function}


def input_of(arguments: Any) -> str | None:
    """A call's raw input from its arguments (JSON text or decoded): the ``input`` member's
    string, or the only member's string; None when the call carries neither."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    value = arguments.get(INPUT)
    if isinstance(value, str):
        return value
    if len(arguments) == 1:
        (only,) = arguments.values()
        return only if isinstance(only, str) else None
    return None


def raw_input(arguments: str) -> str:
    """The input a freeform call gives its client: ``input_of`` its arguments, or their text
    when they carry no one string (as streamed and whole alike)."""
    text = input_of(arguments)
    return text if text is not None else arguments


def arguments_of(text: str) -> str:
    """The JSON arguments a freeform call with raw input ``text`` is to the model."""
    return json.dumps({INPUT: text}, ensure_ascii=False)


def check_call(fmt: Format, arguments: Any) -> tuple[str, ...]:
    """The errors of a freeform call's arguments: its raw input missing, or not matching."""
    text = input_of(arguments)
    if text is None:
        return (f"(root): a freeform tool takes its raw input as one string argument ({INPUT!r})",)
    return fmt.check(text)


class InputDeltas:
    """The raw input of a freeform call, piece by piece, from its JSON arguments' fragments.

    Reads ``{"key": value, ...}`` as it arrives and gives the ``input`` member's string as it
    comes, escapes decoded (one split across fragments is held until complete); other members
    are passed over. ``close`` gives what the whole arguments say beyond what was given: all of
    the input when the model named its one argument otherwise, or wrote a value that is not a
    string (then the input is the arguments' text, as ``text`` says, as a whole answer has it).
    """

    def __init__(self) -> None:
        self._state = "key"  # key -> in_key -> colon -> value -> string -> key ...; or done
        self._key: list[str] = []
        self._streaming = False  # the string being read is the input
        self._held = ""  # an escape not yet complete
        self._given: list[str] = []
        self._raw: list[str] = []

    def feed(self, fragment: str) -> str:
        self._raw.append(fragment)
        if self._state == "done":
            return ""
        out: list[str] = []
        text, i = self._held + fragment, 0
        self._held = ""
        n = len(text)
        while i < n and self._state != "done":
            if self._state == "string":
                i = self._string(text, i, out)
                continue
            c, state = text[i], self._state
            i += 1
            if state == "in_key":
                if c == '"' and not (self._key and self._key[-1] == "\\"):
                    self._state = "colon"
                else:
                    self._key.append(c)
            elif c.isspace():
                continue
            elif state == "key":
                if c == '"':
                    self._state, self._key = "in_key", []
                elif c not in "{,":
                    self._state = "done"  # the end, or not an object of members: close() settles it
            elif state == "colon":
                self._state = "value" if c == ":" else "done"
            elif c == '"':  # value
                self._state, self._streaming = "string", "".join(self._key) == INPUT
            else:
                self._state = "done"  # a value that is not a string
        piece = "".join(out)
        if piece:
            self._given.append(piece)
        return piece

    def _string(self, text: str, i: int, out: list[str]) -> int:
        """Read string content from ``i``; where reading stopped."""
        j = _next_special(text, i)
        if self._streaming:
            out.append(text[i:j])
        if j >= len(text):
            return j
        if text[j] == '"':
            self._state = "key"
            return j + 1
        decoded, used = _escape(text, j)
        if used == 0:
            self._held = text[j:]
            return len(text)
        if self._streaming:
            out.append(decoded)
        return j + used

    def close(self) -> str:
        """The rest of the input once the arguments are complete ("" when all was given)."""
        whole = self.text
        given = "".join(self._given)
        return whole[len(given):] if whole.startswith(given) else ""

    @property
    def text(self) -> str:
        """The whole input (once the arguments are complete): as ``input_of`` reads them, or
        the arguments' text when they carry no one string."""
        return raw_input("".join(self._raw))


_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _next_special(text: str, i: int) -> int:
    q, b = text.find('"', i), text.find("\\", i)
    ends = [x for x in (q, b) if x >= 0]
    return min(ends) if ends else len(text)


def _escape(text: str, i: int) -> tuple[str, int]:
    """The character of the escape at ``text[i]`` (a backslash) and its length; 0 when the
    escape is not complete yet."""
    if i + 1 >= len(text):
        return "", 0
    c = text[i + 1]
    if c != "u":
        return _ESCAPES.get(c, c), 2
    if i + 6 > len(text):
        return "", 0
    code = int(text[i + 2:i + 6], 16)
    if 0xD800 <= code < 0xDC00:  # a surrogate pair: both halves are needed
        if i + 12 > len(text):
            return "", 0
        if text[i + 6:i + 8] == "\\u":
            low = int(text[i + 8:i + 12], 16)
            if 0xDC00 <= low < 0xE000:
                return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), 12
    return chr(code), 6


class _Grammars:
    """Compiled grammars, shared by every request offering the same one (agents resend their
    tools every turn), and the byte-level tokenizer llguidance matches text with. A kept
    grammar is a matcher at its start, copied for each check (a copy costs microseconds)."""

    SIZE = 64

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._compiled: dict[Format, tuple[Any, str]] = {}
        self._tokenizer: Any = None
        self._missing = False  # llguidance is not installed (said once)

    def engine(self) -> Any:
        """The llguidance module (None when it is not installed)."""
        if self._missing:
            return None
        try:
            import llguidance
        except ImportError:
            self._missing = True
            log.warning("llguidance is not installed: freeform tools' grammars are not checked "
                        "(pip install 'toolbridge[serve]')")
            return None
        with self._lock:
            if self._tokenizer is None:
                # Every byte one token, and an end token: a matcher over the text's UTF-8 bytes.
                self._tokenizer = llguidance.LLTokenizer.from_tiktoken(
                    encoder={bytes([b]): b for b in range(256)}, special_tokens={"<|end|>": 256},
                    pattern=r"[\s\S]", eos_token=256, n_vocab=257, slices=[])
        return llguidance

    def build(self, fmt: Format) -> tuple[Any, str]:
        """(a matcher at the grammar's start or None, the compile error or ""), compiled on the
        calling thread."""
        engine = self.engine()
        if engine is None:
            return None, ""
        matcher = engine.LLMatcher
        grammar = (matcher.grammar_from_lark(fmt.definition) if fmt.syntax == "lark"
                   else matcher.grammar_from_regex(fmt.definition))
        built = matcher(self._tokenizer, grammar, log_level=0)
        if built.is_error():
            return None, built.get_error().strip()[:500] or "invalid"
        return built, ""

    def kept(self, fmt: Format) -> tuple[Any, str] | None:
        """What compiling ``fmt`` gave, when it is kept."""
        return self._compiled.get(fmt)

    def remember(self, fmt: Format, entry: tuple[Any, str]) -> tuple[Any, str]:
        with self._lock:
            if len(self._compiled) >= self.SIZE:
                self._compiled.pop(next(iter(self._compiled)))
            self._compiled[fmt] = entry
        return entry

    def compiled(self, fmt: Format, budget: float | None = None) -> tuple[Any, str]:
        """(the kept matcher or None, the compile error or ""): compiled on a thread of its own
        when not kept; past ``budget`` seconds, (None, why) and not kept."""
        found = self._compiled.get(fmt)
        if found is not None:
            return found
        entry = on_own_stack(lambda: self.build(fmt), COMPILE_STACK, budget)
        if entry is None:
            return None, f"compiling it took more than {budget:g} s"
        return self.remember(fmt, entry)

    def compile_error(self, fmt: Format, budget: float | None = None) -> str:
        return self.compiled(fmt, budget)[1]

    def mismatch(self, fmt: Format, text: str) -> tuple[str, ...]:
        start, error = self.compiled(fmt)
        if start is None:
            return (f"the tool's {fmt.syntax} grammar cannot be applied: {error}",) if error else ()
        matcher = start.deep_copy()
        data = text.encode()
        taken = matcher.try_consume_tokens(list(data))
        if taken == len(data) and matcher.is_accepting():
            return ()
        if taken < len(data):
            where = data[:taken].decode("utf-8", "replace")
            line = where.count("\n") + 1
            return (f"(root): the input does not match the tool's {fmt.syntax} grammar at line {line}, "
                    f"byte {taken}: {data[taken:taken + 40].decode('utf-8', 'replace')!r}",)
        return (f"(root): the input ends before the tool's {fmt.syntax} grammar is complete",)


GRAMMARS = _Grammars()  # the process's compiled grammars (the gateway fills it: ``gateway.grammars``)
_STACK_SIZE = threading.Lock()  # threading.stack_size is one setting for the process


def on_own_stack(work: Callable[[], Any], stack: int, budget: float | None = None) -> Any:
    """``work()`` on a new thread with ``stack`` bytes of stack (a compile's recursion depth
    then does not depend on the caller's thread); None when it takes more than ``budget``
    seconds (the thread goes on to its end, its result dropped). Its exception is raised here."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append((work(), None))
        except BaseException as exc:  # noqa: BLE001  # handed to the caller, raised there
            out.append((None, exc))

    with _STACK_SIZE:
        before = threading.stack_size(stack)
        try:
            thread = threading.Thread(target=run, name="toolbridge-grammar", daemon=True)
            thread.start()
        finally:
            threading.stack_size(before)
    thread.join(budget)
    if not out:
        return None
    result, exc = out[0]
    if exc is not None:
        raise exc
    return result
