"""The soak runner stays working: a short run of every kind of request against the real gateway
process, through the command line, reporting its figures."""

from __future__ import annotations

import json

import pytest

from toolbridge.bench.soak import KINDS, LARGE
from toolbridge.cli.main import main

SHORT = ["bench", "--soak", "--json", "--requests", "300", "--clients", "8", "--sample-every", "50",
         "--large", "4", "--large-mb", "1", "--upstream-timeout", "1.5", "--time-limit", "60",
         "--max-rss-growth-mb", "32"]  # a few hundred requests say nothing about a slow leak
# (The gateway's upstream timeout leaves the test's own upstream, which runs in this process,
# room for a pause of over a second: at 0.5 s, two full runs of the suite in five saw one, and
# an upstream that answers at once timed out.)


def test_a_short_soak_runs_every_kind_and_reports_rss_and_fds(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(SHORT)
    report = json.loads(capsys.readouterr().out)
    assert report["requests"] == 300 and report["unexpected"] == {}, report["unexpected"]
    assert code == 0
    for kind in KINDS + LARGE:  # every kind was sent and answered as it must be
        tally = report["outcomes"][kind.name]
        assert tally and set(tally) <= kind.expect, (kind.name, tally)
    rss, fds = report["rss_mb"], report["fds"]
    assert 0 < rss["start"] <= rss["peak"] and rss["after"] <= rss["peak"]
    assert fds["after"] - fds["start"] <= report["limits"]["fd_growth"]
    assert [s["requests"] for s in report["samples"]][-1] == 300
