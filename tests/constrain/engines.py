"""The grammar engines of the constraint tests, on CPU over a byte-level vocabulary.

Each engine sees the text as its UTF-8 bytes, one token per byte (plus an end token), so a test
asks exactly "does the grammar accept this text": xgrammar for the GBNF (read as EBNF) and the
structural tag, llguidance for the Lark. With ``special`` markers, the llguidance tokenizer also
has the dialect's special tokens, and a text's markers are fed as those tokens (the Lark written
with ``special=True``). Compiled grammars are cached by their text, since many tests compile the
same constraint. An engine that is not installed skips the tests that ask for it.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from toolbridge.constrain import Constraint, gbnf, lark, special_tokens, structural_tag

END = 256  # the end token of both vocabularies


class Xgrammar:
    """xgrammar (vLLM's and SGLang's library) over the 256 bytes."""

    def __init__(self) -> None:
        self.xgr = pytest.importorskip("xgrammar", reason="xgrammar is not set up (`make engines` or `make check` installs it)")
        vocab = [bytes([b]) for b in range(256)] + [b"</s>"]
        self.info = self.xgr.TokenizerInfo(vocab, vocab_type=self.xgr.VocabType.RAW, stop_token_ids=[END])
        self.compiler = self.xgr.GrammarCompiler(self.info, max_threads=2)
        self.ebnf = functools.lru_cache(maxsize=512)(self._ebnf)
        self._tags = functools.lru_cache(maxsize=512)(self._tag)

    def _ebnf(self, text: str) -> Any:
        return self.compiler.compile_grammar(self.xgr.Grammar.from_ebnf(text))

    def _tag(self, text: str) -> Any:
        return self.compiler.compile_grammar(self.xgr.Grammar.from_structural_tag(text))

    def tag(self, tag: dict[str, Any]) -> Any:
        return self._tags(json.dumps(tag, ensure_ascii=False))  # key order matters: properties are written in order

    def matcher(self, compiled: Any) -> Any:
        return self.xgr.GrammarMatcher(compiled)

    def accepts(self, compiled: Any, text: str) -> bool:
        matcher = self.matcher(compiled)
        return matcher.accept_string(text.encode()) and matcher.is_completed()


class Llguidance:
    """llguidance (vLLM's guidance backend) over the 256 bytes and ``special`` tokens."""

    def __init__(self, special: Iterable[str] = ()) -> None:
        self.ll = pytest.importorskip("llguidance")
        self.special = tuple(sorted(set(special), key=len, reverse=True))
        ids = {token: END + 1 + i for i, token in enumerate(self.special)}
        self.ids = {"<|end_of_text_test|>": END, **ids}
        self.tokenizer = self.ll.LLTokenizer.from_tiktoken(
            encoder={bytes([b]): b for b in range(256)}, special_tokens=self.ids, pattern=r"[\s\S]",
            eos_token=END, n_vocab=END + 1 + len(self.special), slices=[])
        self.grammar = functools.lru_cache(maxsize=512)(self._grammar)
        self._split = re.compile("(" + "|".join(map(re.escape, self.special)) + ")") if self.special else None

    def _grammar(self, text: str) -> Any:
        """A matcher of the Lark ``text`` (made once: making one costs milliseconds), which
        ``accepts`` resets for each text."""
        grammar = self.ll.LLMatcher.grammar_from_lark(text)
        failed, warnings = self.ll.LLMatcher.validate_grammar_with_warnings(grammar, self.tokenizer)
        assert not failed, warnings
        return self.ll.LLMatcher(self.tokenizer, grammar)

    def tokens(self, text: str) -> list[int]:
        """The text's tokens: its special markers as their tokens, the rest as bytes."""
        if self._split is None:
            return list(text.encode())
        out: list[int] = []
        for part in self._split.split(text):
            out += [self.ids[part]] if part in self.ids else list(part.encode())
        return out

    def accepts(self, matcher: Any, text: str) -> bool:
        matcher.reset()
        tokens = self.tokens(text)
        return matcher.try_consume_tokens(tokens) == len(tokens) and matcher.is_accepting()


@functools.cache
def xgrammar() -> Xgrammar:
    """The shared xgrammar engine (skips the test when xgrammar is not installed)."""
    return Xgrammar()


@functools.cache
def llguidance(special: tuple[str, ...] = ()) -> Llguidance:
    """The shared llguidance engine for a set of special tokens (skips without llguidance)."""
    return Llguidance(special)


TARGETS = ("gbnf", "structural-tag", "lark")


def acceptor(constraint: Constraint, target: str) -> Callable[[str], bool]:
    """Whether ``target``'s engine accepts a whole answer under ``constraint``: ``gbnf`` and
    ``structural-tag`` through xgrammar, ``lark`` (markers as text) and ``lark-special``
    (special tokens as tokens) through llguidance."""
    if target == "gbnf":
        engine = xgrammar()
        compiled = engine.ebnf(gbnf(constraint))
        return lambda text: engine.accepts(compiled, text)
    if target == "structural-tag":
        engine = xgrammar()
        compiled = engine.tag(structural_tag(constraint))
        return lambda text: engine.accepts(compiled, text)
    if target == "lark":
        ll = llguidance()
        grammar = ll.grammar(lark(constraint))
        return lambda text: ll.accepts(grammar, text)
    assert target == "lark-special"
    ll = llguidance(special_tokens(constraint.dialect))
    grammar = ll.grammar(lark(constraint, special=True))
    return lambda text: ll.accepts(grammar, text)


def verdicts(constraint: Constraint, texts: Iterable[str], targets: Iterable[str] = TARGETS) -> dict[str, list[bool]]:
    """Each target's verdict on each text."""
    texts = list(texts)
    out = {}
    for target in targets:
        accepts = acceptor(constraint, target)
        out[target] = [accepts(t) for t in texts]
    return out
