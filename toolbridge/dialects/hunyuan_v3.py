"""Hunyuan v3 (``hunyuan_v3``): ``<tool_calls>`` holding ``NAME<tool_sep>`` + GLM-style key/value pairs.

Sample (vLLM's HYV3ToolParser tests)::

    Checking.<tool_calls>
    <tool_call>get_weather<tool_sep>
    <arg_key>city</arg_key>
    <arg_value>Beijing</arg_value>
    </tool_call>
    </tool_calls>

Each ``<tool_call>`` is read by the GLM body (``syntax/bodies/argkey``) once ``<tool_sep>`` has ended its
name; the wrapper holds one or more calls. A call the wrapper holds is settled when it ends, so a
later malformed or unknown call turns only its own text back into content, and the calls after
it open blocks of their own. Tolerated: ``<tool_call>`` without the wrapper (its ``</tool_calls>``
is read when it follows, as when an unknown call before it was returned to content), a missing
``</tool_calls>``.
"""

from __future__ import annotations

from ..syntax.bodies.argkey import ArgKeyBody, ArgKeyTags
from ..syntax.markers import match_at, skip_ws
from ..syntax.dialect import (
    DONE,
    EMPTY_SECTION,
    FAIL,
    MORE,
    UNCLOSED_AT_END,
    CallSink,
    Calls,
    Dialect,
    Outcome,
    raw_value,
    register,
)
from ..syntax.shape import Shape


TAGS = ArgKeyTags()
WRAPPER = ("<tool_calls>", "</tool_calls>")
CALL, SEP = "<tool_call>", "<tool_sep>"
SAMPLE = (
    "Checking.<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n"
    "<arg_value>Beijing</arg_value>\n</tool_call>\n</tool_calls>"
)


class CallsBody:
    """Read ``<tool_calls>`` (or one bare ``<tool_call>``); see the module docstring."""

    def __init__(self, sink: CallSink, opened_by: str) -> None:
        self.reason = ""
        self._sink = sink
        self._wrapped = opened_by == WRAPPER[0]
        self._name_next = not self._wrapped  # the opener was <tool_call>: its name comes first
        self._call: ArgKeyBody | None = None
        self._calls = 0

    def fast(self, text: str) -> str | None:
        return self._call.fast(text) if self._call is not None else None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        outcome: Outcome | None
        while True:
            if self._call is not None:
                pos, outcome = self._call.feed(buf, pos, final)
                if outcome is not DONE:
                    self.reason = self._call.reason
                    return pos, outcome
                self._call, self._calls = None, self._calls + 1
                self._sink.keep(pos)
            elif self._name_next:
                pos, outcome = self._name(buf, pos, final)
                if outcome is not None:
                    return pos, outcome
            else:
                step = self._between if self._wrapped else self._after_bare
                pos, outcome = step(buf, pos, final)
                if outcome is not None:
                    return pos, outcome

    def _name(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        end = buf.find(SEP, pos, pos + 257)
        name = buf[pos:end] if end != -1 else buf[pos : pos + 257]
        cut = name.find("<")  # only a separator still arriving may follow the name
        if (cut != -1 and (end != -1 or not SEP.startswith(name[cut:]))) or "\n" in name.strip() or len(name) > 256:
            return pos, self._fail("malformed call name")
        if end == -1:
            return pos, (self._fail("truncated") if final else MORE)
        self._call = ArgKeyBody(self._sink, CALL, tags=TAGS)
        _, outcome = self._call.feed(name, 0, False)  # the GLM body reads the name, then our text
        self._name_next = False
        return end + len(SEP), (self._fail(self._call.reason) if outcome is FAIL else None)

    def _between(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        pos = skip_ws(buf, pos)
        found = match_at(buf, pos, (CALL, WRAPPER[1]), final) if pos < len(buf) else ""
        if found == CALL:
            self._name_next = True
            return pos + len(CALL), None
        if found == WRAPPER[1]:
            if not self._calls:
                self._sink.repaired(EMPTY_SECTION)
            return pos + len(found), DONE
        if found == "" and not final:
            return pos, MORE
        if not self._calls:
            return pos, self._fail("truncated" if found == "" else "not a call block")
        self._sink.repaired(UNCLOSED_AT_END if found == "" else f"missing {WRAPPER[1]}")
        return (len(buf) if found == "" else pos), DONE

    def _after_bare(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        """After a call opened without the wrapper: another call or the wrapper's close may
        follow (its opening is missing); anything else is content, whitespace included."""
        start = skip_ws(buf, pos)
        found = match_at(buf, start, (CALL, WRAPPER[1]), final) if start < len(buf) else ""
        if found == CALL:
            self._name_next = True
            return start + len(CALL), None
        if found == WRAPPER[1]:
            self._sink.repaired(f"missing {WRAPPER[0]}")
            return start + len(found), DONE
        return pos, (MORE if found == "" and not final else DONE)

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL


def render(calls: Calls) -> str:
    """Calls as the HY v3 parser's examples write them: one wrapper, each element on its own line."""
    blocks = [
        f"{CALL}{name}{SEP}\n"
        + "".join(f"{TAGS.key[0]}{k}{TAGS.key[1]}\n{TAGS.value[0]}{raw_value(v)}{TAGS.value[1]}\n"
                  for k, v in args.items())
        + TAGS.block_close
        for name, args in calls
    ]
    return WRAPPER[0] + "\n" + "\n".join(blocks) + "\n" + WRAPPER[1]


HUNYUAN_V3 = register(
    Dialect(
        name="hunyuan_v3",
        aliases=("hy_v3", "hunyuan3"),
        call_start=(WRAPPER[0], CALL),
        body=CallsBody,
        special_markers=True,  # <tool_sep> and its siblings are tokenizer specials
        render=render,
        shape=Shape(calls=(f"{CALL}{{NAME}}{SEP}\n{{ARGS}}{TAGS.block_close}\n",),
                    args=f"{TAGS.key[0]}{{KEY}}{TAGS.key[1]}\n{TAGS.value[0]}{{VALUE}}{TAGS.value[1]}\n",
                    value_ends=(TAGS.block_close,), section=(WRAPPER[0] + "\n", WRAPPER[1]), trigger=WRAPPER[0]),
        sample=SAMPLE,
    )
)
