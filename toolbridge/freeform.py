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
checks are skipped and say so once in the log. A grammar that does not compile is reported by
the front that received it (400), never at answer time.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError

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


@dataclass(frozen=True)
class Format:
    """A freeform tool's input format: ``text`` (anything), or a ``lark`` / ``regex`` grammar."""

    syntax: str = "text"
    definition: str = ""

    @classmethod
    def of(cls, value: Any, where: str) -> Format:
        """The format of a tool's ``format`` field (None: text); ConfigError naming ``where``."""
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
        fmt = cls(syntax, definition)
        error = _GRAMMARS.compile_error(fmt)
        if error:
            raise ConfigError(f"{where}.definition: the {syntax} grammar does not compile: {error}")
        return fmt

    def check(self, text: str) -> tuple[str, ...]:
        """Why ``text`` does not match the grammar (empty when it does, or when unchecked)."""
        if self.syntax == "text":
            return ()
        return _GRAMMARS.mismatch(self, text)

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
    tools every turn), and the byte-level tokenizer llguidance matches text with."""

    SIZE = 64

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._compiled: dict[Format, Any] = {}
        self._tokenizer: Any = None
        self._missing = False  # llguidance is not installed (said once)

    def _engine(self) -> Any:
        if self._missing:
            return None
        try:
            import llguidance
        except ImportError:
            self._missing = True
            log.warning("llguidance is not installed: freeform tools' grammars are not checked "
                        "(pip install 'toolbridge[serve]')")
            return None
        if self._tokenizer is None:
            # Every byte one token, and an end token: a matcher over the text's UTF-8 bytes.
            self._tokenizer = llguidance.LLTokenizer.from_tiktoken(
                encoder={bytes([b]): b for b in range(256)}, special_tokens={"<|end|>": 256},
                pattern=r"[\s\S]", eos_token=256, n_vocab=257, slices=[])
        return llguidance

    def _grammar(self, fmt: Format) -> tuple[Any, str]:
        """(the compiled grammar or None, the compile error or "")."""
        with self._lock:
            found = self._compiled.get(fmt)
            if found is not None:
                return found
            engine = self._engine()
            if engine is None:
                return None, ""
            matcher = engine.LLMatcher
            grammar = (matcher.grammar_from_lark(fmt.definition) if fmt.syntax == "lark"
                       else matcher.grammar_from_regex(fmt.definition))
            failed, warnings = matcher.validate_grammar_with_warnings(grammar, self._tokenizer)
            entry = (None, "; ".join(w.strip() for w in warnings)[:500] or "invalid") if failed else (grammar, "")
            if len(self._compiled) >= self.SIZE:
                self._compiled.pop(next(iter(self._compiled)))
            self._compiled[fmt] = entry
            return entry

    def compile_error(self, fmt: Format) -> str:
        return self._grammar(fmt)[1]

    def mismatch(self, fmt: Format, text: str) -> tuple[str, ...]:
        grammar, error = self._grammar(fmt)
        if grammar is None:
            return (f"the tool's {fmt.syntax} grammar cannot be applied: {error}",) if error else ()
        import llguidance

        matcher = llguidance.LLMatcher(self._tokenizer, grammar)
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


_GRAMMARS = _Grammars()
