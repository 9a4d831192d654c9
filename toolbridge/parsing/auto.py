"""``dialect="auto"``: recognise the dialect from the output itself, as it streams.

Strategy: until a dialect is known, one MarkerSet holds every candidate dialect's call-start
markers (and the reasoning openers that belong to one family, such as ``[THINK]``). Text that
cannot start a marker is emitted at once, exactly as a StreamParser would; only a tail that could
still grow into a marker is held back. When a marker appears, every dialect that claims it gets a
trial: a real StreamParser fed from the marker on. In priority order, the first trial whose
block turns out to be its own (a call begins, or the block emits content or reasoning it
recognised) wins once every trial before it has refused the block, so the choice does not
depend on how the output was chunked; the winner's events so far are the events, and from
then on ``feed`` goes straight to it. Only the first trial not yet refused reads (its parser
is made when it first reads): the next one reads the block only once it has refused, so when
the first candidate is the answer's dialect, recognising it costs one parser, not one per
dialect that claims the marker. A trial stops at the end of a block it refuses, and once the
trials have been handed TRIAL_BUDGET times the output, they read the rest a window at a time
(TRIAL_WINDOW, then twice as much each time), so however densely markers repeat, a marker costs
its block, not all the rest of the output. When every trial rejects the block, the marker was
prose: it is emitted as text and the scan resumes just after it. A bare opener (``{`` or ``[``) is tried only
where the answer starts, as the dialects that use one do.

Hints narrow the choice: a model name (``MODEL_HINTS``, a pattern table of families) puts its
dialect first among the trials of every marker it claims (``<tool_call>`` is read as Qwen3-Coder
XML first for a Qwen3.6 model; inside reasoning it stays reasoning for a family that never calls
there); ``candidates`` restricts the dialects considered.
"""

from __future__ import annotations

import fnmatch
import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..syntax.markers import WHOLE_NEAR, cut_off, marker_set, skip_ws
from ..syntax.dialect import THINK, Dialect
from ..dialects import dialect_names, get_dialect
from ..errors import ConfigError
from ..events import CallAborted, CallRejected, Event, Reasoning, Text, ToolCallBegin
from .stream import CALL, CONTENT, REASONING, START, DialectParser, Phase, final_text, random_call_id
from ..tools import Toolset

AUTO = "auto"
_SPACE = re.compile(r"\s*")
# The first piece of a buffer the trials of a marker read once the budget is spent (then twice
# as much each time): more than a short tagged block a body holds whole (HOLD_TAGGED_BLOCK),
# small beside a long answer. The budget: what the trials may be handed whole, in characters
# per character of output (an answer with a few markers never spends it).
TRIAL_WINDOW = 1024
# A trial refused for these reasons read a call to a name the request did not offer (the
# stream's CallSink.begin words them): the block is a call, reported, not prose.
NAMED_REFUSALS = ("unknown tool ", "ambiguous tool ")
TRIAL_BUDGET = 8

# Trial order where several dialects claim the same marker: the common families first.
PRIORITY = (
    "hermes", "qwen3_coder", "glm47", "glm45", "llama3_json", "pythonic", "mistral", "kimi_k2",
    "deepseek_v31", "deepseek_r1", "deepseek_v3", "deepseek_v32", "deepseek_v4", "gpt_oss",
    "minimax_m2", "minimax_m1", "seed_oss", "gemma4", "granite4", "granite", "json_array",
)

# Model-name patterns (matched case-insensitively against the model id, with and without its
# organisation prefix) -> dialect. The first match wins, so specific patterns come first.
MODEL_HINTS: tuple[tuple[str, str], ...] = (
    ("*qwen3*coder*", "qwen3_coder"), ("*qwen3.5*", "qwen3_coder"), ("*qwen3.6*", "qwen3_coder"),
    ("*qwen3_5*", "qwen3_coder"), ("*qwen3_6*", "qwen3_coder"), ("*qwen3-5*", "qwen3_coder"),
    ("*qwen3-6*", "qwen3_coder"), ("*qwen*", "hermes"), ("*qwq*", "hermes"), ("*hermes*", "hermes"),
    ("*glm-4.5*", "glm45"), ("*glm-4.6*", "glm45"), ("*glm4.5*", "glm45"), ("*glm4.6*", "glm45"),
    ("*glm-4.7*", "glm47"), ("*glm4.7*", "glm47"), ("*glm-5*", "glm47"), ("*glm5*", "glm47"),
    ("*kimi-k3*", "kimi_k3"), ("*kimi*", "kimi_k2"),
    ("*deepseek*r1*", "deepseek_r1"), ("*deepseek*v3.1*", "deepseek_v31"),
    ("*deepseek*v3.2*", "deepseek_v32"), ("*deepseek*v4*", "deepseek_v4"),
    ("*deepseek*v3*", "deepseek_v3"),
    ("*gpt-oss*", "gpt_oss"), ("*gpt_oss*", "gpt_oss"),
    ("*llama-4*", "pythonic"), ("*llama4*", "pythonic"), ("*llama-3*", "llama3_json"),
    ("*llama3*", "llama3_json"), ("*olmo-3*", "olmo3"), ("*olmo3*", "olmo3"), ("*lfm2*", "lfm2"),
    ("*magistral*", "mistral"), ("*devstral*", "mistral"), ("*ministral*", "mistral"),
    ("*mistral*", "mistral"), ("*mixtral*", "mistral"),
    ("*minimax-m1*", "minimax_m1"), ("*minimax-m2*", "minimax_m2"), ("*minimax-m3*", "minimax_m3"), ("*minimax_m3*", "minimax_m3"),
    ("*seed-oss*", "seed_oss"), ("*functiongemma*", "functiongemma"), ("*gemma-4*", "gemma4"),
    ("*gemma4*", "gemma4"), ("*granite-4*", "granite4"), ("*granite-20b-functioncalling*", "granite_20b_fc"),
    ("*granite*", "granite"), ("*internlm*", "internlm"), ("*jamba*", "jamba"),
    ("*hunyuan*a13b*", "hunyuan"), ("*hy3*", "hunyuan_v3"), ("*hunyuan*", "hunyuan_v3"),
    ("*phi-4-mini*", "phi4_mini"), ("*firefunction*", "firefunction_v2"), ("*xlam*", "xlam"),
    ("*command-r7b*", "command_r7b"), ("*command-a*", "command_r7b"), ("*command-r*", "command_r_plus"),
    ("*apertus*", "apertus"), ("*gigachat*", "gigachat3"), ("*longcat*", "longcat"),
    ("*step-3.5*", "step3p5"), ("*step3.5*", "step3p5"), ("*step-3*", "step3"), ("*step3*", "step3"),
    ("*minicpm*", "minicpm5"), ("*nemotron*nano*v2*", "nemotron_v2"), ("*nemotron*", "nemotron_v3"),
    ("*functionary*v3.1*", "functionary_v3_1"), ("*functionary*", "functionary_v3_2"),
    ("*ernie*", "ernie45"), ("*apriel*", "apriel"), ("*reka*", "reka"), ("*poolside*", "poolside_v1"),
    ("*inkling*", "inkling"), ("*muse*", "muse"),
)


@lru_cache(maxsize=1024)
def dialect_for_model(model: str | None) -> Dialect | None:
    """The dialect a model id's family writes (``MODEL_HINTS``), or None when unknown."""
    if not model:
        return None
    name = model.lower()
    for pattern, dialect in MODEL_HINTS:
        if fnmatch.fnmatchcase(name, pattern):
            try:
                return get_dialect(dialect)
            except ConfigError:  # a family whose dialect this build does not have
                return None
    return None


def model_for(dialect: str) -> str:
    """A model id whose name hints at ``dialect`` (the first pattern of MODEL_HINTS naming it)."""
    return next((p.strip("*").replace("*", "-") for p, d in MODEL_HINTS if d == dialect), dialect)


def needs_hint(dialect: Dialect) -> bool:
    """True for a dialect auto tries only when the model's name hints at it (every answer of
    it may be a call: an empty bare opener)."""
    return "" in dialect.bare_start


def candidate_dialects(model: str | None = None, names: Iterable[str] | None = None,
                       hinted: Dialect | None = None) -> list[Dialect]:
    """The dialects auto considers, in trial order: the hinted one (given, or the model's family)
    first, then PRIORITY."""
    found = {d.name: d for d in map(get_dialect, names if names is not None else dialect_names())}
    rank = {name: i for i, name in enumerate(PRIORITY)}
    ordered = sorted(found.values(), key=lambda d: (rank.get(d.name, len(rank)), d.name))
    hinted = hinted or dialect_for_model(model)
    if hinted is not None and hinted.name in found:
        ordered.remove(hinted)
        ordered.insert(0, hinted)
    return ordered



# DialectParser's keyword options and their defaults; and those of the options auto passes on
# but the dropped tokens, in AutoParser's order (requests that change none are the most).
_PARSER_DEFAULTS = {name: p.default for name, p in inspect.signature(DialectParser).parameters.items()
                    if p.kind is inspect.Parameter.KEYWORD_ONLY}
_USUAL = tuple(_PARSER_DEFAULTS[k]
               for k in ("reasoning", "validate", "reject_invalid", "call_id", "coerce", "repair"))


class _Trial:
    """One candidate dialect reading a block from its marker on."""

    __slots__ = ("_make", "_parser", "dialect", "events", "named", "reach", "read", "settled", "verdict")

    def __init__(self, dialect: Dialect, make: Callable[[Dialect], DialectParser],
                 verdict: bool | None = None) -> None:
        self.dialect = dialect
        self._make = make  # the parser is made when the trial first reads
        self._parser: DialectParser | None = None
        self.events: list[Event] = []
        self.verdict = verdict  # True: the block is this dialect's; False: it is not
        self.reach = 0  # once refused: how much of the text from the marker the block took
        self.settled: int | None = None  # how many of ``events`` the first block's are
        self.read = 0  # how many of the pending pieces it was fed
        self.named = False  # refused for naming a tool not offered: the block is a call all the same

    @property
    def parser(self) -> DialectParser:
        if self._parser is None:
            self._parser = self._make(self.dialect)
            # Until judged, the parser stops at a refused first block: nothing after it is wanted.
            self._parser.halt_on_reject = self.verdict is None
        return self._parser

    def feed(self, text: str, final: bool, cut: bool = False, marker: str = "") -> None:
        """Read ``text``; ``marker``: it is the block's beginning, which starts with that marker."""
        parser = self._parser or self.parser
        events = parser.feed_block(text, marker) if marker else parser.feed(text)
        if self.settled is None and parser.first_settled is not None:  # (_note, inline: once per delta)
            self.settled = len(self.events) + parser.first_settled
        if final and not self._refused(events):
            before = len(self.events) + len(events)
            events += parser.close(cut)
            self._note(parser, before)
        self.events += events
        # A trial given nothing new inside its block keeps its open verdict (no need to judge).
        changed = events or self.settled is not None or parser.phase is not CALL
        if self.verdict is None and changed:
            # Only the block at the marker is judged, not what follows it in the same text.
            judged = self.events[: self.settled] if self.settled is not None else self.events
            self.verdict = _judge(judged, parser.phase, self.settled is not None)
            parser.halt_on_reject = self.verdict is None
            if self.verdict is False:
                refusal = next((ev for ev in events if isinstance(ev, CallRejected)), None)
                self.reach = len(refusal.text) if refusal is not None else 0
                self.named = refusal is not None and refusal.reason.startswith(NAMED_REFUSALS)

    def _refused(self, events: list[Event]) -> bool:
        """Whether the first block, read to its end (its parser stopped there), is refused: then
        nothing after it is wanted, and closing the parser would read all the rest of the text
        (once per refused trial: quadratic on an answer dense with markers)."""
        if self.verdict is not None or self.settled is None:
            return False
        return _judge((self.events + events)[: self.settled], CALL, True) is False

    def _note(self, parser: DialectParser, base: int) -> None:
        if self.settled is None and parser.first_settled is not None:
            self.settled = base + parser.first_settled


def _judge(events: list[Event], phase: Phase, settled: bool) -> bool | None:
    for ev in events:
        if isinstance(ev, (CallRejected, CallAborted)):
            return False
        if isinstance(ev, (ToolCallBegin, Text, Reasoning)):
            return True
    return True if settled or phase is not CALL else None


class AutoParser:
    """A StreamParser whose dialect is recognised from the output (``dialect="auto"``).

    Args:
        tools: as StreamParser.
        model: the model id, when known; its family (``MODEL_HINTS``) is tried first.
        hint: a dialect name known another way (the chat template's own call format, see
            ``toolbridge.render.hint``); it takes the model's place.
        candidates: the dialect names to consider (all registered dialects by default).
        **options: StreamParser's keyword options (reasoning, in_reasoning, validate,
            reject_invalid, call_id, drop_tokens).

    ``dialect`` is None until a dialect is recognised, then that Dialect; ``detected`` its name.
    """

    # Slots, as DialectParser's (their reads take one fixed path); ``__dict__`` only holds the
    # winner's own ``feed`` and ``close`` once a dialect is recognised.
    __slots__ = ("__dict__", "_bare", "_base", "_block", "_block_at", "_buf", "_claims", "_closed", "_cut",
                 "_answers", "_drop", "_fed", "_guarded", "_handed", "_hinted", "_kept_from", "_marker", "_mid", "_openers", "_options", "_out",
                 "_parser", "_pending", "_phase", "_reach", "_restart", "_scan", "_spare", "_think",
                 "_tools", "_trials", "_wait", "_waiting", "dialect")

    def __init__(
        self,
        tools: list[dict[str, Any]] | Toolset | None = None,
        *,
        model: str | None = None,
        hint: str | None = None,
        candidates: Iterable[str] | None = None,
        reasoning: bool = False,
        in_reasoning: bool = False,
        validate: bool = True,
        reject_invalid: bool = False,
        call_id: Callable[[int], str] = random_call_id,
        drop_tokens: tuple[str, ...] = (),
        coerce: bool = True,
        repair: bool = False,
    ) -> None:
        self._tools = tools if isinstance(tools, Toolset) or tools is None else Toolset(tools)
        self._think = THINK if reasoning else None
        # With reasoning off, thoughts stay content, but the answer still starts after "</think>".
        self._restart = () if reasoning else (THINK[1],)
        hinted = get_dialect(hint) if hint else dialect_for_model(model)
        # End tokens never reach the client: the hinted family's, or every family's.
        drop_tokens = tuple(drop_tokens) + _end_tokens(hinted.name if hinted else None)
        # The trials' parsers are given only what differs from the defaults (each keyword
        # passed costs their construction some 50 ns); most requests change none but the tokens.
        if (reasoning, validate, reject_invalid, call_id, coerce, repair) == _USUAL:
            self._options: dict[str, Any] = {"drop_tokens": drop_tokens}
        else:
            options = {"reasoning": reasoning, "validate": validate, "reject_invalid": reject_invalid,
                       "call_id": call_id, "drop_tokens": drop_tokens, "coerce": coerce, "repair": repair}
            self._options = {k: v for k, v in options.items() if v is not _PARSER_DEFAULTS[k]}
        table = _table_of(hinted.name if hinted else None,
                          tuple(candidates) if candidates is not None else None,
                          reasoning, in_reasoning, drop_tokens)
        self._hinted, self._claims, self._bare, self._scan = table.hinted, table.claims, table.bare, table.scan
        self._drop, self._openers, self._guarded = table.drop, table.openers, table.guarded
        self._answers = table.answer_opens
        self._phase = REASONING if reasoning and in_reasoning else START
        self.dialect: Dialect | None = None
        self._parser: DialectParser | None = None
        self._trials: list[_Trial] = []
        # While the deciding trial (the first not refused) holds its block unread: the block's
        # text so far, what tells whether more only waits (DialectParser.held_block), and how
        # much of the block the trial holds (the rest is kept here, not yet in ``_pending``).
        self._block = ""
        self._wait: Callable[[str], bool] | None = None
        self._kept_from = 0
        self._waiting: tuple[Dialect, ...] = ()  # claimants whose trials are not made yet, in order
        self._mid = (False, False)  # where the block began: (in reasoning, mid-answer)
        self._spare: DialectParser | None = None  # a parser read_plain made and left unread
        self._marker = ""  # the marker the trials read from (where ``_pending`` starts)
        self._pending: list[str] = []  # the text the trials have read, while they decide
        self._buf = ""
        # Positions count characters from the start of the output: ``_base`` is where the text
        # being scanned starts, ``_fed`` how much was fed, ``_block_at`` where the trials began.
        self._base = self._fed = self._block_at = 0
        self._handed = 0  # characters handed to trials whole so far (TRIAL_BUDGET)
        # A dialect whose trial refused a block does not claim a marker inside that block again
        # (its own parser would not look there either): every dialect reads each stretch of the
        # output at most once, so the work stays linear however many markers the output repeats.
        self._reach: dict[str, int] = {}
        self._cut = False
        self._out: list[Event] = []
        self._closed = False

    @property
    def detected(self) -> str | None:
        """The recognised dialect's name, None while (or when) none is recognised."""
        return self.dialect.name if self.dialect is not None else None

    # ------------------------------------------------------------------ public API

    def feed(self, text: str) -> list[Event]:
        """Consume the next piece of output; return the events it completes."""
        wait = self._wait
        if wait is not None and text:
            # The trial that decides holds its block unread: while the text only waits with it,
            # it is kept here (the trial reads it once it no longer waits, as it would have).
            block = self._block + text
            if wait(block):
                self._block = block  # (counted in _fed and _pending when the trials go on)
                return []
        if self._parser is not None:
            return self._parser.feed(text)
        if self._closed:
            raise ConfigError("feed() called after close()")
        if self._trials:
            return self._resume(text, final=False)
        buf = self._buf
        if not buf:  # the common cases first: a delta of plain content or reasoning
            phase = self._phase
            if phase is not START:
                if self._scan.clear(text):
                    self._fed += len(text)
                    return [Text(text) if phase is CONTENT else Reasoning(text)] if text else []
            elif self._plain_start(text):
                self._fed, self._phase = self._fed + len(text), CONTENT
                return [Text(text)]
        elif self._phase is not START and self._scan.waits(buf + text):
            self._buf += text  # still the start of a marker: held back whole, as _scan_text would
            self._fed += len(text)
            return []
        self._base, self._fed = self._fed - len(buf), self._fed + len(text)
        self._out = []
        self._run(buf + text, final=False)
        return self._out

    def feed_plain(self, text: str) -> bool:
        """As ``DialectParser.feed_plain``: ``feed(text)`` when it would give exactly
        ``[Text(text)]``, done without making the event (True); else False, nothing read."""
        if self._parser is not None:
            return self._parser.feed_plain(text)
        if (self._phase is not CONTENT or self._buf or self._trials or self._wait is not None or self._closed
                or text == "" or not self._scan.clear(text)):
            return False
        self._fed += len(text)
        return True

    def _plain_start(self, text: str) -> bool:
        """Whether ``text``, where the answer starts, is plain content: no marker can begin in
        it, and its first non-space character opens no bare call (as ``_at_start`` finds)."""
        openers = self._openers
        if openers is None or not self._scan.clear(text):
            return False
        start = _SPACE.match(text).end()  # type: ignore[union-attr]
        return start < len(text) and text[start] not in openers

    def close(self, cut: bool = False) -> list[Event]:
        """Signal the end of output; flush held text and settle an unfinished call (``cut``:
        the output stopped at a length limit, as StreamParser's)."""
        if self._parser is not None:
            return self._parser.close(cut)
        if self._closed:
            return []
        self._closed, self._cut = True, cut
        if self._trials:
            return self._resume("", final=True)
        self._out = []
        self._base = self._fed - len(self._buf)
        self._run(self._buf, final=True)
        return self._out

    def parse_whole(self, text: str, cut: bool = False) -> list[Event]:
        """``feed(text) + close(cut)``: the events of a whole output, as
        ``DialectParser.parse_whole``. Prose with no marker is read at C speed, and so is an
        answer whose first block's first claimant reads it and all that follows as plain calls
        (``DialectParser.read_plain``): that claimant wins, as its trial would. Anything else
        is read by ``feed`` and ``close``."""
        events = self.read_plain(text, cut)
        return self.feed(text) + self.close(cut) if events is None else events

    def read_plain(self, text: str, cut: bool = False) -> list[Event] | None:
        """As ``DialectParser.read_plain``: the events of ``feed(text) + close(cut)`` when
        read at C speed, the parser then closed; None otherwise, the parser unchanged."""
        if self._phase is not START or self._closed or self._buf or self._parser is not None or self._trials:
            return None
        scan = self._scan
        start = _SPACE.match(text).end()  # type: ignore[union-attr]
        if start == len(text) or scan.at(text, start) is None and self._bare_at(text, start):
            return None  # all space, or a bare opener may start a call
        m = scan.search(text, start, near=WHOLE_NEAR)
        if m is None:
            self._phase, self._closed, self._cut = CONTENT, True, cut
            return final_text(scan, text, 0)
        marker = m.group()
        claims = self._claims.get(marker, ())
        if marker in self._guarded:
            claims = self._passed_over(claims, marker, text, m.end(), note=False)
        if not claims or marker in self._drop:
            return None
        self._mid = (False, True)  # (set again before any trial is made)
        winner = self._make_parser(claims[0])
        # (a marker the winner claims by a shorter one of its own: its own search finds that)
        opened = marker if marker in winner.dialect.call_start else ""
        events = winner.read_plain(text, cut, m.start(), opened)
        if events is None:
            self._spare = winner  # unchanged: the trial of this marker's first claimant takes it
            return None
        self._parser, self.dialect, self._phase, self._closed = winner, winner.dialect, CONTENT, True
        return [Text(text[: m.start()]), *events] if m.start() else events

    def _bare_at(self, text: str, start: int) -> bool:
        """Whether a bare opener begins (or may begin) at ``start``, where the answer starts."""
        openers = self._openers
        if openers is not None and text[start] not in openers:
            return False
        return any(o.startswith(text[start : start + len(o)]) for o, _ in self._bare)

    # ------------------------------------------------------------------ before a dialect is known

    def _run(self, buf: str, final: bool, pos: int = 0) -> None:
        while pos is not None:
            pos = self._scan_text(buf, pos, final)

    def _scan_text(self, buf: str, pos: int, final: bool) -> int | None:
        """Scan from ``pos``; return where to go on, or None when the buffer is settled."""
        if self._phase is START:
            return self._at_start(buf, pos, final)
        scan = self._scan
        m = scan.search(buf, pos)
        if m is None:
            end = len(buf) if final else len(buf) - scan.holdback(buf, pos)
            self._emit(buf[pos:end])
            self._buf = buf[end:]
            return None
        held = None if final else scan.held_from(buf, pos, m.start())
        if held is not None:  # "```" may still become "```json", or be inside "Action: ```json"
            self._emit(buf[pos:held])
            self._buf = buf[held:]
            return None
        if m.start() > pos:
            self._emit(buf[pos : m.start()])
        marker = m.group()
        if marker in self._drop:
            if self._phase is REASONING and marker in self._answers:
                self._phase = START  # the answer's channel opened (Dialect.answer_opens): reasoning is over
            return m.end()
        if self._think and marker == self._think[0] and self._phase is CONTENT:
            self._phase = REASONING
            return m.end()
        if self._think and marker == self._think[1] and self._phase is REASONING:
            self._phase = START
            return m.end()
        if marker in self._restart:
            self._emit(marker)
            self._phase = START
            return m.end()
        claims = self._claims.get(marker, ())
        if self._reach:
            claims = self._unread(claims, m.start())
        if marker in self._guarded:
            claims = self._passed_over(claims, marker, buf, m.end())
        if self._phase is REASONING:
            hinted = self._hinted
            if hinted in claims and not hinted.calls_in_reasoning and marker in hinted.call_start:
                claims = ()  # the model's family never calls inside reasoning: this is reasoning
            claims = tuple(d for d in claims if d.calls_in_reasoning or marker not in d.call_start)
        if not claims:
            self._emit(marker)
            return m.end()
        return self._start_trials(claims, marker, buf, m.start(), final)

    def _at_start(self, buf: str, pos: int, final: bool) -> int | None:
        """Before the answer's first non-space character a bare opener may start a call."""
        start = _SPACE.match(buf, pos).end()  # type: ignore[union-attr]  # (no copy of the rest)
        rest = len(buf) - start
        scan = self._scan
        if not final and (rest == 0 or rest < scan.longest and scan.holdback(buf, start) == rest):
            self._buf = buf[pos:]  # nothing yet, or what may still become a marker
            return None
        if self._scan.at(buf, start) is None:
            for opener, claims in self._bare:
                if buf.startswith(opener, start) and (claims := self._unread(claims, start)):
                    self._emit(buf[pos:start])
                    return self._start_trials(claims, opener, buf, start, final)
                if not final and len(buf) - start <= len(opener) and cut_off(buf, start, opener):
                    self._buf = buf[pos:]
                    return None
        self._phase = CONTENT
        return pos

    def _start_trials(self, claims: tuple[Dialect, ...], marker: str, buf: str, start: int,
                      final: bool) -> int | None:
        """Give the block at ``start`` to each claimant; where to scan on when none takes it."""
        self._mid = (self._phase is REASONING, self._phase is CONTENT)
        self._marker, self._pending, self._block_at = marker, [], self._base + start
        # A trial is made when the one before it refuses the block (most are never made).
        self._trials, self._waiting = [self._trial(claims[0])], claims[1:]
        # Handing the trials all the rest of a long buffer at every marker cost its length each
        # time (a marker-dense answer read whole was quadratic): once the rest handed so far
        # passes TRIAL_BUDGET times the output, they read a window at a time, each twice the
        # last, as a stream would give it (a block is most often judged within its first
        # characters; doubling keeps a long one linear). Until then they get all of it, so a
        # long block is read in one piece, as its own parser reads it whole.
        rest = len(buf) - start
        size = rest if self._handed + rest <= TRIAL_BUDGET * self._fed else TRIAL_WINDOW
        self._handed += min(rest, size)
        at = start
        while True:
            stop = len(buf) if len(buf) - at <= 2 * size else at + size
            last = stop == len(buf)
            events = self._try(buf[at:stop], final and last)
            if events is None:
                return start + len(marker)
            self._out += events
            if self._parser is not None:  # a winner: the rest is its own
                if not last:
                    self._out += self._parser.feed(buf[stop:])
                    if final:
                        self._out += self._parser.close(self._cut)
                return None
            if last:
                return None
            at, size = stop, 2 * size

    def _trial(self, dialect: Dialect) -> _Trial:
        # A family's own reasoning marker is its evidence by itself: what follows it is judged
        # as the family's parser judges it, not as part of this block.
        marker = self._marker
        own = marker not in dialect.call_start and marker in (dialect.reasoning or ())
        return _Trial(dialect, self._make_parser, True if own else None)

    def _make_parser(self, dialect: Dialect) -> DialectParser:
        spare, self._spare = self._spare, None
        if spare is not None and spare.dialect is dialect and self._mid == (False, True):
            return spare  # made by read_plain for the same block, as this one would be
        in_reasoning, mid_answer = self._mid
        parser = DialectParser(dialect, self._tools, in_reasoning=in_reasoning, **self._options)
        if mid_answer:
            parser.phase = CONTENT  # mid-answer: a bare opener is not one here
        return parser

    def _passed_over(self, claims: tuple[Dialect, ...], marker: str, buf: str, end: int,
                     note: bool = True) -> tuple[Dialect, ...]:
        """``claims`` without the first ones, in trial order, whose body refuses the block
        ``marker`` opens (ending at ``end``) at its first character (as ``Dialect.refuses_block``
        tells): the trials that would be made first, and refuse. ``note``: each is noted as its
        refused trial would be (it reached the character it refused), without reading it. (A
        later claimant is left to its trial: the block is most often an earlier one's.)"""
        openings, skipped = self._guarded[marker], 0
        for d in claims:
            opening = openings.get(d.name)
            if opening is None or opening.match(buf, end) is not None:
                break
            skipped += 1
        if not skipped:
            return claims
        if note:
            reach = self._base + skip_ws(buf, end)
            for d in claims[:skipped]:
                self._reach[d.name] = max(self._reach.get(d.name, 0), reach)
        return claims[skipped:]

    def _unread(self, claims: tuple[Dialect, ...], pos: int) -> tuple[Dialect, ...]:
        """The claimants of a marker at ``pos`` that have not refused a block holding it."""
        if not self._reach:
            return claims
        at = self._base + pos
        return tuple(d for d in claims if self._reach.get(d.name, 0) <= at)

    def _try(self, text: str, final: bool) -> list[Event] | None:
        """Feed the trials ``text`` (only the leading one reads; one that refuses stops at the
        block it refused): the winner's events, [] while undecided, None when all refuse.

        The winner is the first trial in order that recognises the block once those before it
        have refused it, so the choice does not depend on the chunking. Only the first trial not
        yet refused reads: the one after it reads the pending text only once it has refused, so
        where the first candidate is the answer's dialect (the common case) it is the only one
        that reads the block."""
        pending, trials = self._pending, self._trials
        kept = self._block[self._kept_from :]  # what the deciding trial has not read yet
        if kept:
            pending.append(kept)
            self._fed += len(kept)
        self._block, self._wait = "", None
        pending.append(text)  # kept for later trials, and to scan again should every trial refuse
        i = 0
        while i < len(trials) or self._waiting:
            if i == len(trials):
                trials.append(self._trial(self._waiting[0]))
                self._waiting = self._waiting[1:]
            trial = trials[i]
            i += 1
            if trial.verdict is False:
                continue
            if trial.read < len(pending):
                read = trial.read
                unread = pending[read] if read == len(pending) - 1 else "".join(pending[read:])
                trial.read = len(pending)
                trial.feed(unread, final, self._cut, "" if read else self._marker)
            if trial.verdict is None:  # the trial that decides: it has read all that is pending
                held = trial.parser.held_block()
                if held is not None:
                    self._block, self._wait = held
                    self._kept_from = len(self._block)
                return []
            if trial.verdict:
                winner = self._parser = trial.parser
                self.dialect = winner.dialect
                # From now on feed and close are the winner's own (no call through this one).
                self.feed, self.close = winner.feed, winner.close  # type: ignore[method-assign]
                self._trials, self._waiting, self._pending = [], (), []
                return trial.events
            name = trial.dialect.name
            self._reach[name] = max(self._reach.get(name, 0), self._block_at + trial.reach)
        named = next((t.dialect for t in trials if t.named), None)
        if named is not None:
            return self._adopt(named, final)
        self._trials = []
        if self._phase is START:
            self._phase = CONTENT
        self._emit(self._marker)  # no candidate reads the block: the marker is prose
        return None

    def _adopt(self, dialect: Dialect, final: bool) -> list[Event]:
        """Every claimant refused the block, and ``dialect``'s (the first such) for naming a tool
        that was not offered: the block is that dialect's call all the same, so it wins and
        reports the refusal exactly as the dialect pinned would (a call to an unoffered name is
        never silent). Its parser reads the block again from the marker, as its trial did."""
        winner = self._parser = self._make_parser(dialect)
        self.dialect = dialect
        events = winner.feed_block("".join(self._pending), self._marker)
        if final:
            events += winner.close(self._cut)
        self.feed, self.close = winner.feed, winner.close  # type: ignore[method-assign]
        self._trials, self._waiting, self._pending = [], (), []
        return events

    def _resume(self, text: str, final: bool) -> list[Event]:
        """Feed pending trials; when all refuse, scan on just after the marker."""
        self._out = []  # (only what every trial refused is emitted here)
        self._fed += len(text)
        events = self._try(text, final)
        if events is not None:
            return events
        buf, self._pending = "".join(self._pending), []
        self._base = self._block_at
        self._run(buf, final, len(self._marker))
        return self._out

    def _emit(self, text: str) -> None:
        if text:
            self._out.append(Reasoning(text) if self._phase is REASONING else Text(text))


@dataclass(frozen=True)
class _Table:
    """What a parser with these settings looks for before it knows the dialect (shared)."""

    hinted: Dialect | None
    claims: dict[str, tuple[Dialect, ...]]
    bare: list[tuple[str, tuple[Dialect, ...]]]
    scan: Any  # the MarkerSet of every claimed marker, the reasoning tags and the dropped tokens
    drop: frozenset[str]  # the dropped tokens
    openers: str | None  # the bare openers' first characters (None: any answer may be a call)
    # Marker -> the names of its claimants that read its block only when it opens as they
    # declare (``Dialect.block_opens``), each with what matches such an opening
    # (``Dialect.opening_of``), for the markers that have such claimants.
    guarded: dict[str, dict[str, re.Pattern[str]]]
    answer_opens: frozenset[str]  # dropped tokens that end reasoning (``Dialect.answer_opens``)


_TABLES: dict[tuple[Any, ...], tuple[tuple[str, ...], _Table]] = {}


def _table_of(hint: str | None, candidates: tuple[str, ...] | None, reasoning: bool,
              in_reasoning: bool, drop_tokens: tuple[str, ...]) -> _Table:
    """``_table``, found by the identity of the dropped tokens (by default every family's, some
    80: hashing them for the cache's key, with their strings out of the CPU's caches after a
    long answer, cost several microseconds per parser). The entry keeps its tuple."""
    if candidates is not None:
        return _table(hint, candidates, reasoning, in_reasoning, drop_tokens)
    key = (hint, reasoning, in_reasoning, id(drop_tokens))
    found = _TABLES.get(key)
    if found is not None and found[0] is drop_tokens:
        return found[1]
    if len(_TABLES) >= 256:
        _TABLES.clear()
    table = _table(hint, None, reasoning, in_reasoning, drop_tokens)
    _TABLES[key] = (drop_tokens, table)
    return table


@lru_cache(maxsize=256)
def _table(hint: str | None, candidates: tuple[str, ...] | None, reasoning: bool, in_reasoning: bool,
           drop_tokens: tuple[str, ...]) -> _Table:
    hinted = get_dialect(hint) if hint is not None else None
    ordered = candidate_dialects(names=candidates, hinted=hinted)
    hinted = hinted if hinted in ordered else None
    claims, bare = _claims(ordered, reasoning, in_reasoning, hinted)
    think = THINK if reasoning else (THINK[1],)
    scan = marker_set(tuple(claims) + think + drop_tokens)
    openers = None if any(not o for o, _ in bare) else "".join(sorted({o[0] for o, _ in bare}))
    guarded = {m: picky for m, ds in claims.items()
               if (picky := {d.name: p for d in ds if (p := d.opening_of(m)) is not None})}
    answers = frozenset(t for d in ordered for t in d.answer_opens if t in drop_tokens) if reasoning else frozenset()
    return _Table(hinted, claims, bare, scan, frozenset(drop_tokens), openers, guarded, answers)


# Where the answer starts, a bare JSON object is first of all Llama 3's way of calling.
BARE_PRIORITY = ("llama3_json", "pythonic")


def _claims(dialects: list[Dialect], reasoning: bool, in_reasoning: bool, hinted: Dialect | None = None,
            ) -> tuple[dict[str, tuple[Dialect, ...]], list[tuple[str, tuple[Dialect, ...]]]]:
    """Marker -> the dialects that claim it (trial order), and the bare openers likewise.

    A marker's claimants include those of every shorter marker it starts with (``<function
    name="`` is also ``<function name=``). A dialect whose every answer may be a call (an empty
    bare opener: Functionary's ``NAME\n{...}``) is tried at the answer's start only when the
    model's name hints at it: otherwise every answer's first word would wait for it.
    """
    claims: dict[str, list[Dialect]] = {}
    bare: dict[str, list[Dialect]] = {}
    anywhere: list[Dialect] = []
    for d in dialects:
        own = list(d.call_start)
        if reasoning and d.reasoning and d.reasoning != THINK:
            own.append(d.reasoning[0])  # a family's own reasoning opener names the family
            if in_reasoning:
                own.append(d.reasoning[1])
        for marker in own:
            if marker and marker not in THINK:
                claims.setdefault(marker, []).append(d)
        for opener in d.bare_start:
            if opener:
                bare.setdefault(opener, []).append(d)
            elif d is hinted:
                anywhere.append(d)
    rank = {d.name: i for i, d in enumerate(dialects)}
    full = {m: tuple(sorted({d for p, ds in claims.items() if m.startswith(p) for d in ds},
                            key=lambda d: rank[d.name])) for m in claims}
    bare_rank = {name: i for i, name in enumerate(BARE_PRIORITY)}
    openers = [(o, tuple(sorted(ds, key=lambda d: (bare_rank.get(d.name, len(bare_rank)), rank[d.name])))
                + tuple(anywhere)) for o, ds in sorted(bare.items(), key=lambda kv: -len(kv[0]))]
    if anywhere:
        openers.append(("", tuple(anywhere)))
    return full, openers


@lru_cache(maxsize=128)
def _end_tokens(hint: str | None) -> tuple[str, ...]:
    if hint is not None:
        return get_dialect(hint).own_end_tokens
    dialects = candidate_dialects()
    markers = {m for d in dialects for m in (*d.call_start, *(d.reasoning or ()), *d.stray_tokens)}
    return tuple(sorted({t for d in dialects for t in d.end_tokens} - markers))


def special_tokens(model: str | None = None) -> tuple[bool, tuple[str, ...]]:
    """For a gateway reading ``auto``: whether to ask the upstream to keep special tokens, and
    the end-of-turn tokens to drop from content when it does. The model's family decides when
    known; otherwise special tokens are kept (most families' markers are special tokens) and
    every family's end tokens are dropped, except those another family uses as a marker."""
    hinted = dialect_for_model(model)
    if hinted is not None:
        return hinted.special_markers, hinted.end_tokens
    return True, _end_tokens(None)
