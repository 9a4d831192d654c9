"""Smoke test of the store row in ``toolbridge bench --gateway``: measured and checked; no
timing asserted (machines are shared and noisy)."""

from __future__ import annotations

from toolbridge.bench import store


def test_the_store_row_is_measured_and_checked() -> None:
    figures = store.measure(quick=True)
    assert figures["problems"] == []
    assert all(figures["us"][k] > 0 for k in ("unstored", "stored", "put", "get"))
    assert figures["stored"] == 256, "the store was full"
    # Accounted: the request twice (the conversation and the input items kept) and the response's
    # JSON twice (the object and the conversation).
    assert figures["bytes_accounted"] == 2 * figures["request_bytes"] + 2 * figures["json_bytes"]
    assert "GET" in store.report(figures)
    rows = figures["backends"]
    assert set(rows) == {"memory", "sqlite", "redis"}
    for name, row in rows.items():
        if "skipped" not in row:
            assert all(row["us"][k] > 0 for k in ("unstored", "stored", "get")), name
            assert name in store.report(figures)
    assert "skipped" not in rows["memory"] and "skipped" not in rows["sqlite"]
