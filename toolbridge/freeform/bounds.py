"""The bounds a client's grammar must keep before any grammar engine sees it.

llguidance compiles a Lark grammar by recursion over its rules: a rule's frame is on the native
stack while the rules it refers to are compiled, and each group (``(...)``, ``[...]``,
``{...}``) around a reference adds frames of its own. Measured on llguidance 1.9 (x86-64): about
3.2 KB of stack per rule on the path and 1.9 KB per enclosing group, linear in both, so a chain
of 2,667 rules overflows an 8 MB stack (a segfault that takes the process), and a chain whose
references sit 28 groups deep overflows after 136 rules. Compile time grows faster than the size
(alternatives: 160 KB take 0.2 s, 320 KB 1.5 s, 1 MB 28 s).

``problem`` reads the grammar once, with one regular expression over its tokens (strings,
regular expressions and comments are passed over whole), and bounds:

- its size (``MAX_BYTES``);
- its definitions (``MAX_RULES``): every ``:`` outside strings, regular expressions, comments
  and braces ends a rule's or terminal's name, so counting them counts no fewer definitions
  than the engine sees;
- the nesting of its groups (``MAX_NESTING``; regex syntax: of its ``(`` groups);
- ``depth``: the sum, over definitions, of one plus the deepest group nesting within it. A
  path of references visits each definition at most once (the engine keeps a set of the rules
  it is compiling: a cycle does not recurse forever, shared rules are not compiled twice), so
  this sum bounds the stack any path can take, whatever order the engine follows, where the
  longest path itself would cost a search over every path (``MAX_DEPTH``).

The limits are well below the break (``MAX_DEPTH`` 2,000 with ``MAX_RULES`` 1,000 is
at most about 5 MB; compiles run on threads with an 8 MB stack in the gateway's
child process and 32 MB in the gateway: ``freeform.COMPILE_STACK``), and well above what
grammars for tools are (the ``apply_patch`` grammar of tests/test_freeform.py: 479 bytes,
12 rules, depth 15).
"""

from __future__ import annotations

import re

MAX_BYTES = 64 << 10
MAX_RULES = 1000
MAX_NESTING = 32
MAX_DEPTH = 2000

# One token of Lark text that matters to the bounds: a comment, a string, a regular expression
# (passed over whole), a bracket, a colon. The strings and regular expressions stop at a line's
# end, as Lark's do; an unclosed one leaves its brackets to be counted (more, never fewer).
_LARK = re.compile(r'//[^\n]*|"(?:[^"\\\n]|\\.)*"|/(?:[^/\\\n]|\\.)+/|[()\[\]{}:]')
# In a regular expression: an escape, a character class (whose brackets are literal), a group.
_REGEX = re.compile(r"\\.|\[(?:\\.|[^\]\\])*\]|[()]", re.DOTALL)
_OPEN = frozenset("([{")
_CLOSE = frozenset(")]}")


def lark_shape(text: str) -> tuple[int, int, int]:
    """(definitions, deepest group nesting, depth) of a Lark grammar's text (see the module)."""
    rules = nesting = depth = 0
    level = braces = deepest = 0  # ``deepest``: within the current definition
    for token in _LARK.findall(text):
        c = token[0]
        if len(token) > 1:
            continue
        if c in _OPEN:
            level += 1
            braces += c == "{"
            deepest = max(deepest, level)
        elif c in _CLOSE:
            level = max(level - 1, 0)
            braces = max(braces - (c == "}"), 0)
        elif braces == 0:  # ":" ends a name: a definition begins
            rules += 1
            depth += 1 + deepest
            nesting, deepest = max(nesting, deepest), level
    return rules, max(nesting, deepest), depth + deepest


def regex_nesting(text: str) -> int:
    """The deepest group nesting of a regular expression."""
    level = deepest = 0
    for token in _REGEX.findall(text):
        if token == "(":
            level += 1
            deepest = max(deepest, level)
        elif token == ")":
            level = max(level - 1, 0)
    return deepest


def problem(syntax: str, text: str) -> str | None:
    """What bound ``text``, a ``lark`` or ``regex`` grammar, passes (None: none)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        return f"the grammar is {size} bytes long; at most {MAX_BYTES}"
    if syntax == "regex":
        nesting = regex_nesting(text)
        if nesting > MAX_NESTING:
            return f"the grammar's groups nest {nesting} deep; at most {MAX_NESTING}"
        return None
    rules, nesting, depth = lark_shape(text)
    if rules > MAX_RULES:
        return f"the grammar has {rules} rules; at most {MAX_RULES}"
    if nesting > MAX_NESTING:
        return f"the grammar's groups nest {nesting} deep; at most {MAX_NESTING}"
    if depth > MAX_DEPTH:
        return (f"the grammar's rules reach {depth} levels deep (each rule one, and one for each "
                f"group within it); at most {MAX_DEPTH}")
    return None
