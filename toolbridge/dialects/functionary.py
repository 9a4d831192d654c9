"""Functionary v3.1 (``functionary_v3_1``) and v3.2 (``functionary_v3_2``), MeetKai.

Samples (the meetkai-functionary-medium-v3.1 and v3.2 chat templates; v3.2's generation prompt
ends with ``>>>``, so its output starts with a recipient)::

    <function=get_weather>{"city": "Oslo"}</function>

    all
    Let me look.>>>get_weather
    {"city": "Oslo"}

v3.1 writes ``<function=NAME>{json}</function>`` (the shared name-then-JSON body) and raw Python
after ``<|python_tag|>``. v3.2 writes ``>>>RECIPIENT\\n`` before each part: ``all`` for visible
text, a tool name for a call whose body is a JSON object, or ``python`` followed by raw code. Raw
code becomes ``{"code": ...}`` and streams as a JSON string until the next ``>>>`` or the end.
"""

from __future__ import annotations

import json
import re

from ..syntax.bodies.json import NameJsonBody, stream_arguments
from ..syntax.jsonscan import JsonScanner
from ..syntax.markers import marker_set, match_at, skip_ws
from ..syntax.dialect import DONE, FAIL, MORE, Body, CallSink, Calls, Dialect, Outcome, register


_encode = json.encoder.encode_basestring
_RECIPIENT = re.compile(r"[A-Za-z_][\w.\-]{0,127}")
END_TOKENS = ("<|eot_id|>", "<|eom_id|>", "<|start_header_id|>")
_CODE_ENDS = marker_set((">>>", *END_TOKENS))


class RecipientBody:
    """One ``RECIPIENT\\n`` part of a v3.2 answer (or v3.1's ``<|python_tag|>`` code)."""

    def __init__(self, sink: CallSink, opened_by: str) -> None:
        self.reason = ""
        self._sink = sink
        self._name = "python" if opened_by == "<|python_tag|>" else ""
        self._code = False  # streaming raw code as a JSON string
        self._scanner: JsonScanner | None = None
        self._bare = opened_by == ""  # the answer's start: the prompt's ">>>" may be repeated

    def fast(self, text: str) -> str | None:
        if self._scanner is not None:
            return text if self._scanner.in_plain_string(text) else None
        return _encode(text)[1:-1] if self._code and _CODE_ENDS.clear(text) else None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        if self._code:
            return self._raw_code(buf, pos, final)
        if self._scanner is not None:
            return self._json(buf, pos, final)
        if self._bare:
            found = match_at(buf, pos, (">>>",), final)
            if found == "":
                return pos, MORE
            pos, self._bare = pos + len(found or ""), False
        if not self._name:
            end = buf.find("\n", pos, pos + 130)
            if end == -1:
                if final or len(buf) - pos > 129 or not _RECIPIENT.fullmatch(buf, pos) and pos < len(buf):
                    return pos, self._fail("truncated" if final else "not a recipient line")
                return pos, MORE
            if not _RECIPIENT.fullmatch(buf, pos, end):
                return pos, self._fail("not a recipient line")
            self._name, pos = buf[pos:end], end + 1
            if self._name == "all":
                return pos, DONE  # visible text follows
        pos = skip_ws(buf, pos)
        if pos >= len(buf):
            return pos, (self._fail("truncated") if final else MORE)
        if buf[pos] != "{" and self._name != "python":
            return pos, self._fail("arguments are not a JSON object")
        why = self._sink.begin(self._name)
        if why:
            return pos, self._fail(why)
        if buf[pos] == "{":
            self._scanner = JsonScanner(self._sink.lenient)
            return self._json(buf, pos, final)
        self._code = True  # raw code, as Functionary writes it for ``python``
        self._sink.args('{"code": "')
        return self._raw_code(buf, pos, final)

    def _json(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        scanner = self._scanner
        assert scanner is not None
        pos, outcome = stream_arguments(self._sink, scanner, buf, pos, final, self._fail)
        if outcome is not None:
            return pos, outcome
        self._sink.end()
        return pos, DONE

    def _raw_code(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        m = _CODE_ENDS.search(buf, pos)
        end = m.start() if m else len(buf) if final else len(buf) - _CODE_ENDS.holdback(buf, pos)
        self._sink.args(_encode(buf[pos:end])[1:-1])
        if m is None and not final:
            return end, MORE
        self._sink.args('"}')
        self._sink.end()
        return end, DONE

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL


def body_v31(sink: CallSink, opened_by: str) -> Body:
    if opened_by == "<|python_tag|>":
        return RecipientBody(sink, opened_by)
    return NameJsonBody(sink, opened_by, name_end=">", close="</function>")


def render_v31(calls: Calls) -> str:
    """Calls as the v3.1 template writes them: ``<function=NAME>{json}</function>`` each."""
    return "".join(f"<function={n}>{json.dumps(a, ensure_ascii=False)}</function>" for n, a in calls)


def render_v32(calls: Calls) -> str:
    """Calls as the v3.2 template writes them, after the prompt's ``>>>``."""
    return ">>>".join(f"{n}\n{json.dumps(a, ensure_ascii=False)}" for n, a in calls)


FUNCTIONARY_V3_1 = register(
    Dialect(
        name="functionary_v3_1",
        aliases=("functionary31", "functionary_v31"),
        call_start=("<function=", "<|python_tag|>"),
        body=body_v31,
        reasoning=None,
        special_markers=True,  # <|python_tag|> and the end tokens are Llama 3.1 specials
        end_tokens=END_TOKENS,
        render=render_v31,
        sample='<function=get_weather>{"city": "Oslo"}</function>',
    )
)

FUNCTIONARY_V3_2 = register(
    Dialect(
        name="functionary_v3_2",
        aliases=("functionary", "functionary32", "functionary_v32"),
        call_start=(">>>",),
        bare_start=("",),  # the prompt ended with ">>>": the answer opens with a recipient line
        body=RecipientBody,
        reasoning=None,
        end_tokens=END_TOKENS,
        render=render_v32,
        sample='all\nLet me look.>>>get_weather\n{"city": "Oslo"}',
    )
)
