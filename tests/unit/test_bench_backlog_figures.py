"""The report rows of bench_backlog, read from its JSON records."""

from __future__ import annotations

from bench.harness.figures import MET, MISSED, NOT_MEASURED
from bench.harness.figures.backlog import figures_backlog
from bench.harness.records import line


def mode(name: str, workers: int, wall: float, p95: float, **extra: object) -> str:
    machine = {
        "cores": 2,
        "machine_busy_pct": 99.0,
        "load_1m_mean": 3.1,
        "load_1m_max": 4.0,
        "workers": [
            {"name": f"any-{i}", "peak_rss_mib": 600, "cpu_s": 50.0} for i in range(workers)
        ],
    }
    return line(
        "backlog.mode",
        mode=name,
        workers=workers,
        repos=2,
        files=1200,
        chunks=9000,
        wall_s=wall,
        p50_s=p95 / 2,
        p95_s=p95,
        claim_wait_p50_s=10.0,
        claim_wait_p95_s=20.0,
        machine=machine,
        load_1m_start=2.5,
        limit="job time by phase: embed_index 80 %",
        **extra,
    )


def summary(wall: float, base: float) -> str:
    return line(
        "backlog.summary",
        mode="any+any",
        baseline="any",
        wall_s=wall,
        baseline_wall_s=base,
        ratio=round(wall / base, 2),
        p95_s=wall,
        baseline_p95_s=base,
        repos=2,
    )


SOURCES = [
    line(
        "backlog.source",
        name="six",
        registry="pypi",
        version="1.16.0",
        files=6,
        code_files=1,
        language="python",
        code_lines=998,
    ),
    line(
        "backlog.source",
        name="lodash",
        registry="npm",
        version="4.17.21",
        files=1054,
        code_files=1048,
        language="javascript",
        code_lines=44051,
    ),
]


def test_two_workers_faster_than_one_is_met_with_the_ratio_against_one() -> None:
    out = "\n".join(
        [
            "2 repositories ...",
            *SOURCES,
            mode("any", 1, 600.0, 580.0),
            mode("any+any", 2, 400.0, 390.0),
            summary(400.0, 600.0),
        ]
    )
    figs = {f.name: f for f in figures_backlog(out, ["--repos", "2"])}
    backlog = figs["backlog: the repositories enqueued at once"]
    assert "2 repositories (1 pypi, 1 npm" in backlog.value and "6-1054 files" in backlog.value
    two = figs[
        "backlog first index, any+any (2 workers): wall time (2 repositories, 1,200 files, "
        "9,000 chunks)"
    ]
    assert (two.value, two.ratio, two.baseline) == ("400.0 s", "0.67x", "600.0 s with any")
    one = figs[
        "backlog first index, any (1 worker): wall time (2 repositories, 1,200 files, 9,000 chunks)"
    ]
    assert one.ratio == "-" and one.load == "2.50"
    ratio = figs["backlog wall time, any+any / any (same run, 2 repositories)"]
    assert (ratio.ratio, ratio.verdict) == ("0.67x", MET)
    p2s = figs["backlog, any+any (2 workers): push-to-searchable p50 / p95 (claim wait p50 / p95)"]
    assert p2s.value == "195.0 / 390.0 s (10.0 / 20.0 s)" and p2s.ratio == "p95 0.67x"
    rss = figs["backlog, any+any (2 workers): peak RSS and CPU per worker; machine"]
    assert rss.value == "any-0 600 MiB, 50.0 s CPU, any-1 600 MiB, 50.0 s CPU"
    assert "99.0 % busy (2 cores)" in rss.baseline


def test_two_workers_slower_than_one_is_missed() -> None:
    out = "\n".join(
        [mode("any", 1, 600.0, 580.0), mode("any+any", 2, 610.0, 600.0), summary(610.0, 600.0)]
    )
    (ratio,) = [f for f in figures_backlog(out, None) if f.verdict]
    assert (ratio.ratio, ratio.verdict) == ("1.02x", MISSED)


def test_a_mode_asked_for_without_a_result_is_not_measured() -> None:
    out = mode("any", 1, 600.0, 580.0)
    figs = figures_backlog(out, ["--modes", "any,any+any"])
    missing = [f for f in figs if f.verdict == NOT_MEASURED]
    assert [f.name for f in missing] == ["backlog first index, any+any: wall time"]
    assert figures_backlog("", None) == []
