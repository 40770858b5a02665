"""``semgraph runs list`` prints times as ISO-8601 UTC and durations, not epoch floats."""

from __future__ import annotations

from semgraph.commands.graph import duration, iso_utc


def test_run_times_print_as_iso_utc_and_durations() -> None:
    assert iso_utc(1796134792.696) == "2026-12-01T14:19:52Z"
    assert iso_utc(None) == iso_utc("x") == "-"
    assert duration(10.0, 14.5) == "4.5s"
    assert duration(0.0, 64.0) == "1m 4s"
    assert duration(0.0, 7200.0) == "2.0h"
    assert duration(5.0, None) == "-" and duration(5.0, 1.0) == "0.0s"
