"""Body kind: Python-literal calls, ``[NAME(k=v, ...), NAME2(...)]``, read one call at a time.

    [get_weather(city='Paris', days=3), search(query="hotels", filters=["a", "b"])]
    <function_calls>get_weather(city='Paris')
    search(query='hotels')</function_calls>

Llama 3.2/4 and ToolACE write the bracketed list (Llama 4 optionally inside
``<|python_start|>...<|python_end|>``), LFM2 puts it between ``<|tool_call_start|>`` and
``<|tool_call_end|>`` (and sometimes writes JSON ``{"name": .., "arguments": ..}`` objects as the
elements), OLMo 3 writes the calls one per line, without brackets, inside ``<function_calls>``.

Strategy: the reader tracks only what bounds one element: bracket nesting and string state
(quote character, pending backslash). String contents are skipped with one regex search per
run, so a long argument costs one C-level scan; nothing consumed is scanned again. When an
element's closing parenthesis (or brace) brings the nesting back to zero, that element's text,
and only it, is parsed once with ``ast.parse`` and its values converted by a literal-only walk
(``eval`` is never used; ``true``/``false``/``null`` are accepted beside the Python spellings).
The call is then begun, given its arguments as one JSON fragment and ended, and its text is
settled (``CallSink.keep``) so that a later failure in the same list returns only what follows.
Anything that is not a call (positional arguments, expressions, a bare list of numbers) fails
the block: its text stays content.
"""

from __future__ import annotations

import ast
import itertools
import json
import math
import re
import warnings
from typing import Any

from .json import close_tail
from ..markers import match_at, skip_ws
from ..dialect import DONE, EMPTY_SECTION, FAIL, MORE, UNCLOSED_AT_END, CallSink, Calls, Outcome, to_json


_IDENT_START = re.compile(r"[A-Za-z_]")
_IDENT_RUN = re.compile(r"[\w.]*")
_PLAIN_STOP = re.compile(r"""[()\[\]{}'",]""")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_STRING_STOP = {"'": re.compile(r"[\\']"), '"': re.compile(r'[\\"]')}
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_JSON_NAMES = {"true": True, "false": False, "null": None}
_NAME_LIMIT = 128


class _S:  # states (plain ints: an Enum member's lookup costs several times as much)
    LEAD = 0  # before the list or the first call
    ITEM = 1  # expecting an element
    NAME = 2  # reading a call's name
    BODY = 3  # inside an element's brackets
    SEP = 4  # after an element
    TAIL = 5  # after the list's ``]``: the close marker


class PythonicBody:
    """Read a list (or line sequence) of Python-literal calls; see the module docstring."""

    def __init__(self, sink: CallSink, opened_by: str, *, close: str = "", objects: bool = False) -> None:
        self.reason = ""
        self._sink = sink
        self._close = close  # "" when opened by a bare "[" at the answer start: the list is the block
        self._objects = objects  # elements may be JSON call objects {"name":.., "arguments":..}
        self._bare = opened_by == "["
        self._list = False  # the elements sit inside [...]
        self._state = _S.LEAD
        self._name_parts: list[str] = []  # the current call's name
        self._text: list[str] = []  # the current element's text, from its "(" or "{"
        self._size = 0  # the length of that text so far
        self._commas: list[int] = []  # offsets of the commas between the call's arguments
        self._stack: list[str] = []
        self._quote = ""  # inside a string: its quote character
        self._escape = False  # a backslash ended the last chunk
        self._calls = 0

    def fast(self, text: str) -> str | None:
        return None  # arguments leave whole, once their call closes

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        while True:
            state = self._state
            if state == _S.BODY:
                pos, outcome = self._body(buf, pos)
            elif state == _S.NAME:
                pos, outcome = self._name(buf, pos)
            else:
                pos = skip_ws(buf, pos)
                if pos >= len(buf):
                    return pos, self._at_end(buf, final)
                if state == _S.TAIL:
                    return close_tail(self._sink, buf, pos, final, self._close)
                pos, outcome = self._between(buf, pos, final)
            if outcome is not None:
                if outcome is MORE and final:
                    return pos, self._at_end(buf, final)
                return pos, outcome

    # ---------------------------------------------------------------- between elements

    def _between(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        state, ch = self._state, buf[pos]
        if state == _S.LEAD:
            self._state, self._list = _S.ITEM, ch == "["
            return pos + self._list, None
        if self._close and not self._list:  # a line sequence ends at the close marker
            found = match_at(buf, pos, (self._close,), final)
            if found == "":
                return pos, MORE
            if found:
                if not self._calls:
                    self._sink.repaired(EMPTY_SECTION)  # no call, and no markup left in content
                return pos + len(found), DONE
        if state == _S.SEP:
            if ch == "]" and self._list:
                self._state = _S.TAIL
                return pos + 1, DONE if not self._close else None
            if ch == "," or not self._list:
                self._state = _S.ITEM
                return pos + (ch == ","), None
            return pos, self._fail("expected ',' or ']' after a call")
        return self._item(buf, pos)

    def _item(self, buf: str, pos: int) -> tuple[int, Outcome | None]:
        ch = buf[pos]
        if ch == "]" and self._list and not self._calls:
            return pos, self._fail("empty call list")
        if ch == "{" and self._objects:
            self._stack, self._state = [], _S.BODY
            return pos, None
        if _IDENT_START.match(ch) is None:
            return pos, self._fail("not a call list")
        self._stack, self._state = [], _S.NAME
        return pos, None

    def _name(self, buf: str, pos: int) -> tuple[int, Outcome | None]:
        end = _IDENT_RUN.match(buf, pos).end()  # type: ignore[union-attr]  # a starred pattern always matches
        end = min(end, pos + _NAME_LIMIT + 1 - sum(map(len, self._name_parts)))  # fail where it crosses
        self._name_parts.append(buf[pos:end])
        if sum(map(len, self._name_parts)) > _NAME_LIMIT:
            return end, self._fail("not a call list")
        if end >= len(buf):
            return end, MORE
        if buf[end] != "(":
            return end, self._fail("not a call list")
        self._state = _S.BODY
        return end, None

    # ---------------------------------------------------------------- inside an element

    def _body(self, buf: str, pos: int) -> tuple[int, Outcome | None]:
        """Scan to the bracket that closes the element; strings are skipped whole, and the
        commas between a call's arguments are noted (as offsets into the element's text)."""
        start, end, stack = pos, len(buf), self._stack
        while pos < end:
            if self._escape:
                pos, self._escape = pos + 1, False
                continue
            if self._quote:
                m = _STRING_STOP[self._quote].search(buf, pos)
                if m is None:
                    pos = end
                    break
                pos = m.end()
                if m.group() == "\\":
                    self._escape = True
                else:
                    self._quote = ""
                continue
            m = _PLAIN_STOP.search(buf, pos)
            if m is None:
                pos = end
                break
            pos, ch = m.end(), m.group()
            if ch == ",":
                if len(stack) == 1 and stack[0] == "(":
                    self._commas.append(self._size + pos - 1 - start)
            elif ch in "'\"":
                self._quote = ch
            elif ch in "([{":
                stack.append(ch)
            elif not stack or stack.pop() != _CLOSERS[ch]:
                return pos, self._fail("unbalanced brackets in a call")
            elif not stack:
                self._text.append(buf[start:pos])
                return pos, self._emit(pos)
        self._text.append(buf[start:pos])
        self._size += pos - start
        return pos, MORE

    def _emit(self, pos: int) -> Outcome | None:
        text, name = "".join(self._text), "".join(self._name_parts)
        parsed = evaluate_object(text) if not name else evaluate_call(name, text, self._commas)
        self._text, self._name_parts, self._commas, self._size = [], [], [], 0
        if isinstance(parsed, str):
            return self._fail(parsed)
        name, arguments = parsed
        why = self._sink.begin(name)
        if why:
            return self._fail(why)
        self._sink.args(to_json(arguments))
        self._sink.end()
        self._sink.keep(pos)
        self._calls += 1
        self._state = _S.SEP
        return None

    def _at_end(self, buf: str, final: bool) -> Outcome:
        if not final:
            return MORE
        if self._calls and self._state in (_S.SEP, _S.ITEM, _S.TAIL):
            self._sink.repaired(UNCLOSED_AT_END)
            return DONE
        if self._bare and self._state in (_S.LEAD, _S.ITEM):
            return self._fail("not a call list")
        return self._fail("truncated")

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL


def evaluate_call(name: str, text: str, commas: list[int]) -> tuple[str, dict[str, Any]] | str:
    """A call ``name`` + ``text`` (``(k=v, ...)``, top-level commas at ``commas``) as (name,
    arguments), or why it is not a call. Keys are split off by hand, so that a name or key that
    is a Python keyword (``from=``) is still read; each value is parsed on its own."""
    if _DOTTED.fullmatch(name) is None:
        return "malformed call name"
    bounds = [0, *commas, len(text) - 1]
    arguments: dict[str, Any] = {}
    for i, (a, b) in enumerate(itertools.pairwise(bounds)):
        piece = text[a + 1 : b]
        if not piece.strip():
            if len(bounds) == 2 or i == len(bounds) - 2:
                continue  # "f()" or a trailing comma
            return "malformed call"
        key, eq, value = piece.partition("=")
        if not eq or not key.strip().isidentifier():
            return "positional arguments in a call"
        try:
            arguments[key.strip()] = _literal(_parse(value))
        except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
            return "malformed call"
    return name, arguments


def evaluate_object(text: str) -> tuple[str, dict[str, Any]] | str:
    """A JSON call object ``{"name": .., "arguments": ..}`` as (name, arguments), or why not."""
    try:
        value = _literal(_parse(text))
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return "malformed call"
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return "not a call object"
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return "arguments string is not JSON"
    return (value["name"], arguments) if isinstance(arguments, dict) else "arguments are not an object"


def _parse(text: str) -> ast.expr:
    with warnings.catch_warnings():  # an invalid escape ("\\/") is kept as written, not an error
        warnings.simplefilter("ignore")
        return ast.parse(text.strip(), mode="eval").body


def _literal(node: ast.expr) -> Any:
    """A literal's value: constants, lists, tuples, dicts, signed numbers, JSON's three names."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, type(None))):
        if isinstance(node.value, float) and not math.isfinite(node.value):
            raise ValueError("non-finite number")
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        keys = [_literal(k) if k is not None else None for k in node.keys]
        if not all(isinstance(k, str) for k in keys):
            raise ValueError("non-string key")
        return dict(zip(keys, (_literal(v) for v in node.values)))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError("sign on a non-number")
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    raise ValueError("not a literal")


def render_pythonic(calls: Calls, *, start: str = "", end: str = "", sep: str = ", ", brackets: bool = True) -> str:
    """Calls as Python source: ``NAME(k=v, ...)`` with Python literals, in a list by default."""
    body = sep.join(f"{name}({', '.join(f'{k}={_python(v)}' for k, v in args.items())})" for name, args in calls)
    return start + ("[" + body + "]" if brackets else body) + end


def _python(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_python(k)}: {_python(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_python(v) for v in value) + "]"
    return repr(value)
