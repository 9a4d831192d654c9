"""Conformance against the shared corpus of peers' parse cases (skipped when it is absent).

Every dialect with a module in ``tests/known/`` is held to the corpus: each of its cases must agree
with the peer's expectation, except the ones that module lists, each with the reason toolbridge's
answer is the right one. A new disagreement fails the run, and so does a listed one that starts
agreeing (update the list). No held dialect may fall below ``MIN_DIALECT``, nor the whole run
below ``MIN_OVERALL``.
"""

from __future__ import annotations

import pytest

from tests.corpus_run import DEFAULT_CORPUS, report, run
from tests.known import known

MIN_DIALECT = 0.85
MIN_OVERALL = 0.925
HELD = known()
# Dialects whose agreement stays below MIN_DIALECT although every disagreement is listed with a
# reason in tests/known: matching the peer there would break the rules or a promise, or
# the peer's own tests contradict each other (minimax_m1). A dialect leaving or joining this set
# fails the run, so the set is always the truth.
BELOW_FLOOR = {"minimax_m1", "step3", "json_array", "poolside_v1", "gpt_oss", "generic_json_test_detector"}


@pytest.mark.skipif(not DEFAULT_CORPUS.exists(), reason="shared corpus not present")
def test_corpus_agreement(capsys: pytest.CaptureFixture[str]) -> None:
    by_dialect = run(DEFAULT_CORPUS, set(HELD))
    share = report(by_dialect, listing=True)
    out = capsys.readouterr().out
    listed = {case: why for cases in HELD.values() for case, why in cases.items()}
    disagreements = {v.case["id"]: v.why for vs in by_dialect.values() for v in vs if not v.ok}
    unexpected = {k: v for k, v in disagreements.items() if k not in listed}
    assert not unexpected, f"new disagreements:\n{unexpected}\n{out}"
    fixed = set(listed) - set(disagreements)
    assert not fixed, f"listed disagreements that now agree (remove them from tests/known): {fixed}"
    shares = {d: sum(v.ok for v in vs) / len(vs) for d, vs in by_dialect.items()}
    assert {d for d, s in shares.items() if s < MIN_DIALECT} == BELOW_FLOOR, shares
    assert share >= MIN_OVERALL, out


MIN_AUTO = 0.90


@pytest.mark.skipif(not DEFAULT_CORPUS.exists(), reason="shared corpus not present")
def test_corpus_agreement_with_auto(capsys: pytest.CaptureFixture[str]) -> None:
    """The same run with dialect "auto" (no hint) instead of each case's label."""
    share = report(run(DEFAULT_CORPUS, None, auto=True), listing=False)
    assert share >= MIN_AUTO, capsys.readouterr().out
