"""The OpenResponses compliance suite against ``toolbridge serve`` (``tests.openresponses_run``),
as a test: every template in scope passes, and toolbridge's own cases validate. Needs what
``make openresponses`` sets up (bun in ``.agents/bun``, the suite copied into
``.agents/openresponses``); skips, saying why, without it."""

from __future__ import annotations

import pytest

from tests import openresponses_run as suite

pytestmark = pytest.mark.agents


def test_every_template_in_scope_passes() -> None:
    why = suite.missing(suite.PEERS)
    if why is not None:
        pytest.skip(why)
    bun = suite.BUN / "node_modules" / ".bin" / "bun"
    if not bun.exists() or not (suite.WORK / "node_modules" / "zod").is_dir():
        pytest.skip(f"bun or the suite is not set up in {suite.WORK.parent}: run make openresponses")
    results, extra = suite.run(bun)
    failed = {r["id"]: r.get("errors") for r in results
              if suite.out_of_scope(r["id"]) is None and r["status"] != "passed"}
    assert not failed, failed
    assert sum(suite.out_of_scope(r["id"]) is None for r in results) >= 8, "the suite's templates all ran"
    refused = [f for f in extra if f["type"] not in suite.DIVERGENT]
    assert not refused, refused  # toolbridge's own cases (cut, failed, reasoning) against the schemas
