"""bench.run_all's report reads each benchmark's JSON lines (bench.harness.records) into its rows.

The samples are records as the benchmarks print them (bench/bench_*.py, next to their text
lines), with the figures of real runs (bench/results/*.log): a builder that no longer reads
what its benchmark prints fails here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bench import run_all
from bench.harness import records
from bench.harness.benches import BENCHES
from bench.harness.figures import MET, MISSED, NOT_MEASURED, Bench, Figure, arg, ints
from bench.harness.figures.job import figures_embed, figures_memory, figures_parse, figures_reindex
from bench.harness.figures.retrieval import figures_retrieval
from bench.harness.figures.stores import figures_delta, figures_graph, figures_queue
from bench.harness.figures.webhook import figures_webhook
from bench.harness.logs import outcomes_from_log
from bench.harness.render import render
from bench.harness.runner import run_bench


def lines(*recs: tuple[str, dict[str, Any]]) -> str:
    """The records as a benchmark prints them, one JSON line each."""
    return "".join(records.line(kind, **fields) + "\n" for kind, fields in recs)


def _parse(n: int, per_core: float, parent: float, child: float, s: float) -> tuple[str, Any]:
    return (
        "parse.size",
        {
            "files": n,
            "files_per_s": per_core * 2,
            "per_core": per_core,
            "cores": 2,
            "mb_per_s": 0.67,
            "parent_peak_rss_mib": parent,
            "child_peak_rss_mib": child,
            "seconds": s,
            "failed": 0,
        },
    )


# the human line next to each record is kept in the output: the report ignores it
PARSE_OUT = (
    "  1000 files:   167.6 files/s (  83.8/core over 2 cores), ...\n"
    + lines(_parse(1000, 83.8, 44.4, 41.1, 6.0), _parse(20000, 125.0, 66.6, 41.0, 80.0))
    + "parent peak RSS ratio 20000/1000 files: 1.500 (target <= 1.3: OVER TARGET)\n"
)

MEMORY_1K = {
    "chunks": 1380,
    "embedded": 1380,
    "files": 1000,
    "load_1m": 7.09326171875,
    "nodes": 3407,
    "phase_peak_rss_bytes": {
        "after_job": 1019940864,
        "alias_flip": 1023352832,
        "before_publish": 1018191872,
        "checkout": 104607744,
        "embed_index": 1100226560,
        "graph_publish": 1024970752,
        "parse": 112168960,
        "resolve": 113680384,
        "setup": 103362560,
    },
    "phases_s": {
        "alias_flip": 0.1548,
        "checkout": 0.2299,
        "embed_index": 154.7471,
        "graph_publish": 7.1872,
        "parse": 3.0184,
        "resolve": 0.8675,
    },
    "pool_peak_rss_bytes": 107376640,
    "pool_size": 2,
    "rss_start_bytes": 102612992,
    "small_files": True,
    "status": "succeeded",
    "wall_s": 167.9,
    "worker_peak_rss_bytes": 1100070912,
}
MEMORY_5K = {
    "chunks": 6995,
    "embedded": 6995,
    "files": 5000,
    "load_1m": 9.76025390625,
    "nodes": 17103,
    "phase_peak_rss_bytes": {
        "after_job": 1034354688,
        "embed_index": 1140199424,
        "parse": 116387840,
        "resolve": 125218816,
        "setup": 104996864,
    },
    "phases_s": {
        "alias_flip": 0.1965,
        "checkout": 0.7533,
        "embed_index": 526.7438,
        "graph_publish": 14.838,
        "parse": 7.7655,
        "resolve": 1.4916,
    },
    "pool_peak_rss_bytes": 115732480,
    "pool_size": 2,
    "rss_start_bytes": 103305216,
    "small_files": True,
    "status": "succeeded",
    "wall_s": 561.42,
    "worker_peak_rss_bytes": 1540076544,
}


def _start(n: int, at: str, load: float) -> tuple[str, Any]:
    return ("memory.start", {"files": n, "start_utc": at, "load_1m": load})


# bench/results/memory-scale.log: 1k and 5k finished, the 20k job started and left no result
MEMORY_1K_OUT = "# 1000 files: start 02:52:53 UTC, load 7.09 7.22 5.75\n" + lines(
    _start(1000, "02:52:53", 7.09), ("memory.size", MEMORY_1K)
)
MEMORY_OUT = (
    MEMORY_1K_OUT
    + lines(_start(5000, "02:55:47", 9.76), ("memory.size", MEMORY_5K))
    + lines(_start(20000, "03:05:24", 10.04))
)
MEMORY_ARGS = ["--sizes", "1000,5000,20000", "--small-files"]

GRAPH_1K = {
    "call_sites": 66964,
    "callees_p50_ms": 9.56,
    "callees_p99_ms": 73.79,
    "callers_p50_ms": 9.54,
    "callers_p99_ms": 106.46,
    "def_p50_ms": 1.8,
    "def_p99_ms": 76.61,
    "edges": 87354,
    "files": 1000,
    "mean_query_ms": 11.97,
    "nodes": 10480,
    "parse_s": 4.2,
    "publish_load": 9.12,
    "queries": 200,
    "query_load": 9.5,
    "republish_load": 9.3,
    "republish_rows_per_s": 21000,
    "republish_tx_s": 4.66,
    "resolution_rate": 0.9983,
    "resolve_s": 1.85,
    "rows_per_s": 24000,
    "tx_s": 4.08,
}
GRAPH_10K = {
    "call_sites": 669640,
    "callees_p50_ms": 10.25,
    "callees_p99_ms": 79.63,
    "callers_p50_ms": 10.29,
    "callers_p99_ms": 64.23,
    "def_p50_ms": 1.83,
    "def_p99_ms": 18.29,
    "edges": 873540,
    "files": 10000,
    "mean_query_ms": 12.93,
    "nodes": 104800,
    "parse_s": 51.15,
    "publish_load": 11.0,
    "queries": 200,
    "query_load": 11.5,
    "resolution_rate": 0.9983,
    "resolve_s": 26.32,
    "rows_per_s": 6000,
    "tx_s": 163.05,
}
# one record per size as it finishes; the 20,000-file size of the command never finished
GRAPH_OUT = lines(("graph.size", GRAPH_1K), ("graph.size", GRAPH_10K))
GRAPH_ARGS = ["--sizes", "1000,10000,20000", "--queries", "200"]

SERVER_50 = {
    "client_mean_ms": 114.0,
    "ack_mean_ms": 64.1,
    "outside_ms": 49.9,
    "phases": [
        {"phase": "ack (server)", "mean_ms": 64.1, "p99": "200 ms", "n": 500},
        {"phase": "body", "mean_ms": 0.1, "p99": "2.5 ms", "n": 500},
        {"phase": "batch_wait", "mean_ms": 20.7, "p99": "100 ms", "n": 500},
        {"phase": "commit", "mean_ms": 35.5, "p99": "100 ms", "n": 29},
    ],
    "group_commits": 29,
    "mean_batch": 17.2,
}


def _burst(c: int, acks: tuple[float, ...], base: tuple[float, float], **more: Any) -> Any:
    return (
        "webhook.burst",
        {
            "deliveries": 500,
            "concurrency": c,
            "client": None,
            "ack_p50_ms": acks[0],
            "ack_p95_ms": acks[1],
            "ack_p99_ms": acks[2],
            "healthz_p50_ms": base[0],
            "healthz_p99_ms": base[1],
            "load_1m": 16.8,
            "warmup": 50,
            "server": None,
            **more,
        },
    )


# bench/results/webhook-burst.log (a burst with the server's split) and the push part
WEBHOOK_BURSTS = lines(
    _burst(50, (100.3, 228.0, 255.1), (90.7, 257.2), server=SERVER_50),
    _burst(8, (36.1, 74.4, 127.1), (12.0, 89.5)),
)
JOB_FIRST = (
    "job succeeded in 598.2 s: checkout 0.5s, parse 9.0s, embed_index 570.0s; parsed 5001 "
    "files, reused 0; chunks loaded 7001; full staging"
)
JOB_ROUND = (
    "job succeeded in {} s: parse 1.2s, embed_index 3.0s; parsed 1 files, reused 5001; "
    "chunks loaded 7003; cloned staging (1 changed files)"
)
FIRST_INDEX = (
    "webhook.first_index",
    {"what": "first full index", "files": 5000, "seconds": 600.0, "job": JOB_FIRST},
)
WEBHOOK_PUSH = lines(
    FIRST_INDEX,
    ("webhook.round", {"round": 1, "seconds": 12.0, "job": JOB_ROUND.format(10.1)}),
    ("webhook.round", {"round": 2, "seconds": 40.0, "job": JOB_ROUND.format(38.0)}),
    (
        "webhook.push",
        {
            "files": 5000,
            "rounds": 2,
            "p50_s": 12.0,
            "p95_s": 40.0,
            "max_s": 40.0,
            "baseline_s": 600.0,
        },
    ),
)
WEBHOOK_OUT = WEBHOOK_BURSTS + WEBHOOK_PUSH
WEBHOOK_ARGS = ["--burst", "500", "--concurrency", "50,8", "--files", "5000", "--rounds", "2"]


def by_name(figs: list[Figure]) -> dict[str, Figure]:
    names = [f.name for f in figs]
    assert len(names) == len(set(names)), "every row of one run has its own name"
    return {f.name: f for f in figs}


def test_parse_rows_carry_baseline_ratio_and_verdict() -> None:
    figs = by_name(figures_parse(PARSE_OUT, ["--sizes", "1000,20000"]))
    big = figs["parse phase peak RSS, worker (parent), 20,000 files"]
    assert big.value == "66.6 MiB"
    assert big.baseline == "44.4 MiB at 1,000 files"
    assert (big.ratio, big.verdict) == ("1.500", MISSED)
    assert figs["parse phase peak RSS, pool child, 20,000 files"].verdict == MET
    assert figs["parse throughput, 20,000 files (0 failed, 80.0 s)"].verdict == MET
    assert figs["parse throughput, 1,000 files (0 failed, 6.0 s)"].verdict == MISSED
    assert not [f for f in figs.values() if f.verdict == NOT_MEASURED]


def test_memory_at_the_issue_sizes_names_files_and_chunks_and_the_size_not_measured() -> None:
    figs = by_name(figures_memory(MEMORY_OUT, MEMORY_ARGS))
    worker = figs[
        "whole job peak RSS, worker, 5,000 files, 6,995 chunks, 6,995 embedded, small files"
    ]
    assert worker.value == "1,468.7 MiB"
    assert worker.baseline == "1,049.1 MiB at 1,000 files"
    assert (worker.ratio, worker.verdict, worker.load) == ("1.400", MISSED, "9.76")
    pool = figs[
        "whole job peak RSS, pool child, 5,000 files, 6,995 chunks, 6,995 embedded, small files"
    ]
    assert (pool.ratio, pool.verdict) == ("1.078", MET)
    split = figs["end-to-end job by phase, 5,000 files, 6,995 chunks, 6,995 embedded, small files"]
    assert split.value.startswith("561.4 s: checkout 0.8s (0%), parse 7.8s (1%)")
    assert "embed_index 526.7s (94%)" in split.value
    assert split.ratio == "3.34x for 5.0x files"
    phases = figs["peak RSS by phase, worker, 5,000 files"]
    assert phases.value.startswith("setup 100 MiB, parse 111 MiB, resolve 119 MiB")
    assert "resolve 1.10x" in phases.ratio  # against the same phase at 1,000 files
    gone = figs["whole job peak RSS, worker and pool child, 20,000 files"]
    assert gone.verdict == NOT_MEASURED
    assert "started at 03:05:24 UTC (load 10.04)" in gone.value
    assert gone.target == "ratio <= 1.3"


def test_memory_size_asked_for_but_never_started_is_not_measured() -> None:
    figs = figures_memory(MEMORY_1K_OUT, MEMORY_ARGS)
    missing = [f for f in figs if f.verdict == NOT_MEASURED]
    assert [f.name for f in missing] == [
        "whole job peak RSS, worker and pool child, 5,000 files",
        "whole job peak RSS, worker and pool child, 20,000 files",
    ]
    assert "never started" in missing[0].value


def test_graph_rows_for_every_size_with_republish_and_a_missing_size() -> None:
    figs = by_name(figures_graph(GRAPH_OUT, GRAPH_ARGS))
    small = figs[
        "graph publish throughput, 1,000 files (97,834 nodes+edges, one transaction of 4.08 s)"
    ]
    # the target is set for the 20,000-file repository: other sizes are shown, not judged
    assert (small.value, small.verdict, small.load) == ("24,000 rows/s", "", "9.12")
    assert small.target == "- (set for 20,000 files)"
    big = figs[
        "graph publish throughput, 10,000 files (978,340 nodes+edges, one transaction of 163.05 s)"
    ]
    assert (big.value, big.verdict) == ("6,000 rows/s", "")
    assert big.ratio == "0.25x; 0.30x"
    again = figs["graph re-publish over itself (re-index), 1,000 files (one transaction of 4.66 s)"]
    assert (again.value, again.verdict, again.load) == ("21,000 rows/s", "", "9.30")
    q = figs["graph query `def` latency, 10,000-file repo (200 random names)"]
    assert q.value == "p50 1.83 ms, p99 18.29 ms"
    assert q.baseline == "p50 1.8 ms, p99 76.61 ms at 1,000 files"
    assert (q.ratio, q.load) == ("p50 1.02x, p99 0.24x", "11.50")
    assert "graph query `callees` latency, 10,000-file repo (200 random names)" in figs
    res = figs["call resolution, 10,000 files (669,640 call sites; parse 51.15 s, resolve 26.32 s)"]
    assert res.value == "99.8% resolved"
    gone = figs["graph publish throughput and query latency, 20,000 files"]
    assert (gone.verdict, gone.target) == (NOT_MEASURED, ">= 20,000 rows/s")


def test_graph_target_is_judged_at_20000_files() -> None:
    line = records.line(
        "graph.size",
        files=20000,
        nodes=215608,
        edges=1812936,
        tx_s=101.4,
        rows_per_s=20005,
        republish_rows_per_s=19990,
        republish_tx_s=101.5,
    )
    figs = by_name(figures_graph(line, ["--sizes", "20000"]))
    first = figs[
        "graph publish throughput, 20,000 files (2,028,544 nodes+edges, one transaction of 101.4 s)"
    ]
    assert (first.verdict, first.target) == (MET, ">= 20,000 rows/s")
    again = figs[
        "graph re-publish over itself (re-index), 20,000 files (one transaction of 101.5 s)"
    ]
    assert (again.verdict, again.ratio) == (MISSED, "1.00x; 1.00x target")


def test_graph_record_of_the_older_format_still_reads() -> None:
    old = (
        '{"record": "graph.size", '
        '"call_sites": 33482, "callees_p50_ms": 9.56, "callees_p99_ms": 73.79, '
        '"callers_p50_ms": 9.54, "callers_p99_ms": 106.46, "def_p50_ms": 1.8, "def_p99_ms": '
        '76.61, "edges": 43677, "files": 500, "mean_query_ms": 11.97, "nodes": 5240, "parse_s": '
        '4.2, "queries": 100, "resolution_rate": 0.9983, "resolve_s": 1.85, "rows_per_s": 6231, '
        '"tx_s": 7.85}\n'
    )
    figs = figures_graph(old, ["--sizes", "500"])
    assert figs[0].verdict == "" and figs[0].load == ""  # 500 files: not the target size
    assert figs[0].ratio == "1.00x; 0.31x"
    assert len([f for f in figs if "latency" in f.name]) == 3


def test_webhook_bursts_server_split_and_push_rounds() -> None:
    figs = by_name(figures_webhook(WEBHOOK_OUT, WEBHOOK_ARGS))
    what = "burst of 500 deliveries, {} concurrent, after 50 unmeasured"
    p99 = figs[f"webhook ack latency p99 ({what.format(50)})"]
    assert (p99.value, p99.baseline, p99.ratio) == (
        "255.1 ms",
        "257.2 ms GET /healthz p99",
        "0.99x",
    )
    assert (p99.verdict, p99.load) == (MISSED, "16.80")
    assert figs[f"webhook ack latency p99 ({what.format(8)})"].verdict == MET
    assert figs[f"webhook ack latency p95 ({what.format(8)})"].value == "74.4 ms"
    inside = figs[
        "webhook ack time inside the server handler (burst of 500 deliveries, 50 concurrent)"
    ]
    assert inside.value.startswith("64.1 ms server mean, 49.9 ms outside the handler; ")
    assert "batch_wait mean 20.7 ms (p99 <= 100 ms, n 500)" in inside.value
    assert "29 group commits of 17.2 deliveries on average" in inside.value
    assert inside.ratio == "0.56 of the client mean in the handler"
    first = figs["first full index through the webhook, 5,000-file repo (baseline)"]
    assert first.value.startswith("600.0 s (job succeeded in 598.2 s: checkout 0.5s")
    round2 = figs["push-to-searchable, round 2, one-file change, 5000-file repo"]
    assert round2.value.startswith("40.0 s (job succeeded in 38.0 s")
    assert "cloned staging (1 changed files)" in round2.value
    assert round2.ratio == "0.067"
    p95 = figs["push-to-searchable p95, one-file change, 5000-file repo (2 rounds)"]
    assert (p95.value, p95.target, p95.verdict) == ("40.0 s", "p95 <= 30 s", MISSED)
    assert figs["push-to-searchable p50, one-file change, 5000-file repo (2 rounds)"].verdict == ""


def test_webhook_burst_names_its_client() -> None:
    out = WEBHOOK_OUT.replace('"client": null', '"client": "raw"', 1)
    figs = by_name(figures_webhook(out, WEBHOOK_ARGS))
    p99 = figs[
        "webhook ack latency p99 (burst of 500 deliveries, 50 concurrent, raw client, "
        "after 50 unmeasured)"
    ]
    assert (p99.value, p99.verdict) == ("255.1 ms", MISSED)
    assert not [f for f in figs.values() if f.verdict == NOT_MEASURED]


def test_webhook_cut_short_shows_what_it_did_not_measure() -> None:
    cut = WEBHOOK_BURSTS.splitlines(keepends=True)[0] + lines(FIRST_INDEX)
    figs = by_name(figures_webhook(cut, WEBHOOK_ARGS))
    missing = {f.name: f for f in figs.values() if f.verdict == NOT_MEASURED}
    assert set(missing) == {
        "webhook ack latency p99 (burst of 500 deliveries, 8 concurrent)",
        "push-to-searchable p95, one-file change",
    }
    assert "0 round(s) finished" in missing["push-to-searchable p95, one-file change"].value
    # a burst-only run (--skip-push) expects no push figures
    burst_only = figures_webhook(cut, ["--burst", "500", "--concurrency", "50", "--skip-push"])
    assert not [f for f in burst_only if f.verdict == NOT_MEASURED]


def test_embed_reindex_queue_retrieval() -> None:
    embed = figures_embed(
        lines(
            ("embed.texts", {"files": 20, "chunks": 195, "model": "m", "device": "cpu"}),
            (
                "embed.repeat",
                {"repeat": 0, "raw_s": 10.0, "phase_s": 12.0, "reuse_s": 0.5, "hit_rate_pct": 100},
            ),
            (
                "embed.summary",
                {"texts_per_s": 19.5, "ratio": 1.201, "reuse_ratio": 0.0417, "speedup": 24.0},
            ),
        )
    )
    assert embed[0].ratio == "1.201" and embed[0].verdict == MISSED
    assert "19.5 texts/s" in embed[0].baseline
    assert embed[1].ratio == "0.0417 (24.0x faster)"
    reindex = figures_reindex(
        lines(
            ("reindex.repo", {"files": 100, "chunks": 900, "nodes": 1200}),
            (
                "reindex.run",
                {
                    "run": "first",
                    "seconds": 60.0,
                    "status": "succeeded",
                    "phases_s": [["parse", 3.0], ["embed_index", 57.0]],
                },
            ),
            ("reindex.run", {"run": "unchanged", "seconds": 2.0, "status": "noop"}),
            (
                "reindex.run",
                {"run": "forced", "seconds": 20.0, "status": "succeeded", "reused": 900},
            ),
            ("reindex.ratios", {"first_over_unchanged": 30.1, "first_over_forced": 3.0}),
        )
    )
    assert reindex[1].ratio == "first/unchanged 30.1x" and reindex[1].verdict == MET
    assert "embed_index 57.0s (95%)" in reindex[0].value
    assert reindex[2].ratio == "first/forced 3.0x"
    queue = figures_queue(
        records.line(
            "queue.summary",
            jobs=2000,
            enqueue_jobs_per_s=152.2,
            baseline_p50_ms=2.0,
            throughput_jobs_per_s=50.0,
            measured_jobs=500,
            latency=[{"name": "claim", "p50_ms": 10.0, "p99_ms": 20.0}],
        )
    )
    assert (
        queue[0].ratio == "5.0x" and queue[0].name == "queue claim latency p50 (2000 jobs queued)"
    )
    assert [f.ratio for f in queue[-2:]] == ["10.0 round trips per job", "3.3 round trips per job"]

    def row(name: str, half: str, mode: str, r5: float) -> tuple[str, dict[str, object]]:
        fields = {"eval": name, "half": half, "repo": "all", "kind": "all", "mode": mode}
        return "retrieval.eval", {**fields, "n": 300, "recall5": r5, "mrr10": r5 / 2}

    rec = figures_retrieval(
        lines(
            row("own", "all", "bm25", 0.9),
            row("own", "all", "knn", 0.8),
            row("own", "all", "hybrid", 0.95),
            row("outside", "test", "bm25", 0.7),
            row("outside", "test", "knn", 0.8),
            row("outside", "test", "hybrid", 0.78),
            row("outside", "tune", "bm25", 0.7),
            row("outside", "tune", "knn", 0.8),
            (
                "retrieval.bootstrap",
                {
                    "eval": "outside",
                    "half": "test",
                    "best": "knn",
                    "n": 300,
                    "diff": -0.02,
                    "lo": -0.05,
                    "hi": 0.01,
                },
            ),
        )
    )
    assert rec[0].name == "bm25 recall@5 / MRR@10, own (300 queries)"
    assert rec[3].name == "bm25 recall@5 / MRR@10, outside, test half (300 queries)"
    assert len(rec) == 6  # the tuning half lacks its hybrid row: not shown
    own, test = rec[2], rec[5]
    assert own.verdict == MET and own.value == "0.950 / 0.475" and own.target == ">= best single"
    assert test.verdict == MISSED and test.baseline == "0.800 best single"  # below kNN alone
    assert test.ratio == "-0.020 vs knn (95 % CI -0.050 .. +0.010)"
    assert test.target == ">= best single, >= 0.75"

    def csn(half: str, kind: str, mode: str, r5: float) -> tuple[str, dict[str, object]]:
        name, fields = row("csn", half, mode, r5)
        return name, {**fields, "kind": kind, "recall1": r5 / 2, "recall10": r5}

    r5 = (("bm25", 0.5), ("knn", 0.4), ("hybrid", 0.6))
    rec = figures_retrieval(lines(*(csn("test", k, m, r) for k in ("all", "go") for m, r in r5)))
    assert [f.name for f in rec[2::3]] == [
        "hybrid recall@5 / MRR@10, csn (held-out packages), test half (300 queries)",
        "hybrid recall@5 / MRR@10, csn (held-out packages), test half, go (300 queries)",
    ]
    assert rec[2].target == ">= best single" and rec[2].verdict == MET  # no 0.75 bar on csn
    assert rec[5].target == "-"


def test_garbage_output_yields_no_figures_or_only_not_measured_rows() -> None:
    junk = 'Traceback (most recent call last):\n  boom\n{not json}\n{"files": "many"}\n\x00\xff\n'
    for bench in BENCHES:
        assert bench.parse(junk, None) == [], bench.name
        rows = bench.parse(junk, bench.default)
        assert all(f.verdict == NOT_MEASURED for f in rows), bench.name


def test_default_and_quick_arguments_are_the_issue_sizes() -> None:
    benches = {b.name: b for b in BENCHES}
    assert benches["memory"].default == ["--sizes", "1000,5000,20000", "--small-files"]
    assert benches["graph"].default == ["--sizes", "1000,10000,20000", "--queries", "200"]
    hook = benches["webhook"].default
    assert arg(hook, "--burst") == "500" and arg(hook, "--files") == "5000"
    assert arg(hook, "--concurrency") == "50,8"
    assert "files AND chunks" in benches["memory"].note and "small" in benches["memory"].note
    for b in BENCHES:  # --quick stays small
        sizes = ints(arg(b.quick, "--sizes"))
        assert max(sizes, default=0) <= 2000, b.name
        assert int(arg(b.quick, "--files") or 0) <= 100, b.name


def _log(path: Path, text: str) -> None:
    path.write_text(text)


def test_report_from_kept_logs_in_run_all_format(tmp_path: Path) -> None:
    bench = next(b for b in BENCHES if b.name == "parse")
    _log(
        tmp_path / "parse.log",
        "$ python -m bench.firstindex.bench_parse --sizes 1000,20000\n"
        f"# load 3.50, rc 0, 90.0 s\n{PARSE_OUT}"
        "\n----- stderr (tail) -----\n",
    )
    [out] = outcomes_from_log(bench, tmp_path)
    assert (out.rc, out.seconds, out.load_1m) == (0, 90.0, 3.5)
    assert out.args == ["--sizes", "1000,20000"] and not out.error
    info = {"cores available": "2", "CPU": "x"}
    text = render(info, [out], False, 90.0, "## Side by side with peers\n")
    assert "loaded 2-core machine" in text
    assert "| parse phase peak RSS, worker (parent), 20,000 files | 66.6 MiB |" in text
    assert (
        "`python -m bench.firstindex.bench_parse --sizes 1000,20000` — 90 s, load 3.50 at start"
        in text
    )
    assert "**Targets:** 4 met, 2 missed, 0 not measured." in text


def test_failed_bench_is_not_measured_with_its_reason(tmp_path: Path) -> None:
    graph = next(b for b in BENCHES if b.name == "graph")
    _log(
        tmp_path / "graph.log",
        "$ python -m bench.firstindex.bench_graph --sizes 1000,10000\n# load 1.00, rc 1, 2.0 s\n\n"
        "----- stderr (tail) -----\nTraceback (most recent call last):\n  File x\n"
        "semgraph.errors.GraphUnavailable: no server at bolt://127.0.0.1:1\n",
    )
    [bad] = outcomes_from_log(graph, tmp_path)
    assert bad.error == "semgraph.errors.GraphUnavailable: no server at bolt://127.0.0.1:1"
    assert not bad.measured and len(bad.figures) == 2  # both sizes asked for, not measured
    text = render({"cores available": "2"}, [bad], False, 2.0, "")
    assert "0 met, 0 missed, 2 not measured; 1 run(s) failed or incomplete." in text
    assert "- failed or incomplete: graph: semgraph.errors.GraphUnavailable" in text
    assert "exit 1" in text and "**Not measured / failed:**" in text


def test_missing_and_unparseable_logs_do_not_crash_the_report(tmp_path: Path) -> None:
    webhook = next(b for b in BENCHES if b.name == "webhook")
    [none] = outcomes_from_log(webhook, tmp_path)
    assert none.error.startswith("no log: ") and none.rc is None
    (tmp_path / "webhook.log").write_bytes(b"\xff\xfe garbage without a command\n")
    [junk] = outcomes_from_log(webhook, tmp_path)
    assert junk.error == "no figures found in the output" and not junk.figures
    broken = Bench("broken", "bench.bench_broken", [], [], _raising_parser)
    _log(tmp_path / "broken.log", "$ python -m bench.bench_broken\n# rc 0\nsome output\n")
    [out] = outcomes_from_log(broken, tmp_path)
    assert out.error.startswith("could not parse the output: KeyError")
    text = render({}, [none, junk, out], False, 0.0, "")
    assert text.count("**Not measured / failed:**") == 3


def _raising_parser(out: str, args: object) -> list[Figure]:
    raise KeyError("rows_per_s")


def test_hand_kept_log_with_several_runs_and_no_run_all_header(tmp_path: Path) -> None:
    webhook = next(b for b in BENCHES if b.name == "webhook")
    burst, push = WEBHOOK_BURSTS, WEBHOOK_PUSH
    _log(
        tmp_path / "webhook.log",
        "# webhook latency, final tree; 2 cores shared\n\n"
        "## final tree (3e8a3f7)\n### round 1\n"
        "$ python -m bench.push.bench_webhook --burst 500 --concurrency 50,8 --skip-push\n"
        "# uptime at start:  03:14:24 up  3:24,  0 user,  load average: 17.78, 12.98, 10.31\n"
        f"{burst}# rc 0\n"
        "### push part\n"
        "$ python -m bench.push.bench_webhook --skip-burst --files 5000 --rounds 2\n"
        f"# started 03:20 UTC, load 9.50 9.00 8.00\n{push}",
    )
    first, second = outcomes_from_log(webhook, tmp_path)
    assert (first.label, first.rc, first.load_1m) == ("final tree (3e8a3f7) / round 1", 0, 17.78)
    assert first.notes[0] == "webhook latency, final tree; 2 cores shared"
    assert len(first.measured) == 7 and not first.error
    assert (second.label, second.rc, second.load_1m) == (
        "final tree (3e8a3f7) / push part",
        None,
        9.5,
    )
    assert second.args == ["--skip-burst", "--files", "5000", "--rounds", "2"]
    assert any(f.verdict == MISSED and "p95" in f.name for f in second.figures)
    text = render({"cores available": "2"}, [first, second], False, 0.0, "")
    assert "### webhook — final tree (3e8a3f7) / push part" in text
    assert "time not recorded, load 9.50 at start, exit status not recorded" in text
    assert "- missed: webhook (final tree (3e8a3f7) / push part): push-to-searchable p95" in text


def test_hand_kept_log_with_an_inline_traceback_is_failed(tmp_path: Path) -> None:
    memory = next(b for b in BENCHES if b.name == "memory")
    _log(
        tmp_path / "memory.log",
        "$ python -m bench.firstindex.bench_memory --sizes 1000,5000,20000 --small-files\n"
        + MEMORY_1K_OUT
        + "Traceback (most recent call last):\n  File x\nSystemExit: job at 5000 files failed:\n",
    )
    [out] = outcomes_from_log(memory, tmp_path)
    assert out.error == "SystemExit: job at 5000 files failed:"
    assert len(out.measured) == 4 and len(out.figures) - len(out.measured) == 2


def test_run_bench_keeps_the_log_and_reads_a_failed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real run path: a subprocess that prints one graph size and then fails."""
    pkg = tmp_path / "fakebench"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    first_size = GRAPH_OUT.splitlines()[0]
    (pkg / "graphrun.py").write_text(
        f"import sys\nprint({first_size!r}, flush=True)\n"
        "sys.exit('Neo.TransientError: out of memory at 10000 files')\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    logs = tmp_path / "logs"
    logs.mkdir()
    bench = Bench("graph", "fakebench.graphrun", GRAPH_ARGS, [], figures_graph, timeout_s=60)
    out = run_bench(bench, False, logs)
    assert out.rc == 1 and out.error == "Neo.TransientError: out of memory at 10000 files"
    assert [f.verdict for f in out.measured if "publish" in f.name] == ["", ""]
    assert len([f for f in out.figures if f.verdict == NOT_MEASURED]) == 2
    [again] = outcomes_from_log(bench, logs)
    assert (again.rc, again.error) == (1, out.error)
    assert [f.name for f in again.figures] == [f.name for f in out.figures]


def test_from_logs_renders_the_logs_named_as_the_benches(tmp_path: Path) -> None:
    """``--from-logs`` reads graph.log, memory.log and webhook.log, whatever kept them."""
    _log(
        tmp_path / "graph.log",
        f"$ python -m bench.firstindex.bench_graph {' '.join(GRAPH_ARGS)}\n"
        "# load 9.12, rc 0, 500.0 s\n"
        f"{GRAPH_OUT}\n----- stderr (tail) -----\n",
    )
    _log(
        tmp_path / "memory.log",
        f"$ python -m bench.firstindex.bench_memory {' '.join(MEMORY_ARGS)}\n"
        "# started 2026-11-30 02:52 UTC, uptime:  02:52:53 up  3:03,  0 user,  load average: "
        f"7.09, 7.22, 5.75\n{MEMORY_OUT}",
    )
    _log(
        tmp_path / "webhook.log",
        f"$ python -m bench.push.bench_webhook {' '.join(WEBHOOK_ARGS)}\n# rc 0\n{WEBHOOK_OUT}",
    )
    out = tmp_path / "RESULTS.md"
    run_all.main(
        [
            "--from-logs",
            "--logs",
            str(tmp_path),
            "--out",
            str(out),
            "--peers",
            str(tmp_path / "no-peers.json"),
            "--only",
            "graph,memory,webhook",
        ]
    )
    text = out.read_text()
    assert "Re-rendered by `python -m bench.run_all --from-logs`" in text
    assert "| machine | not recorded: no readable machine.json" in text
    for heading in ("### graph", "### memory", "### webhook"):
        assert heading in text
    assert "`python -m bench.firstindex.bench_memory --sizes 1000,5000,20000 --small-files`" in text
    assert "time not recorded, load 7.09 at start, exit status not recorded" in text
    assert "- not measured: memory: whole job peak RSS, worker and pool child, 20,000 files" in text
    assert "- missed: graph: graph publish throughput, 10,000 files" not in text  # context
    assert "- missed: webhook: push-to-searchable p95" in text
    assert (
        "| 1,468.7 MiB | 1,049.1 MiB at 1,000 files | 1.400 | ratio <= 1.3 | **missed** | 9.76 |"
        in text
    )
    assert "Not measured yet: run `python -m bench.firstindex.peers`" in text


def test_an_oversized_noisy_log_still_yields_its_figures(tmp_path: Path) -> None:
    memory = next(b for b in BENCHES if b.name == "memory")
    noise = "burst of 1 deliveries, 1 concurrent:\n  {" + "x" * 200 + "\n"
    _log(
        tmp_path / "memory.log",
        f"$ python -m bench.firstindex.bench_memory {' '.join(MEMORY_ARGS)}\n"
        + noise * 20_000
        + MEMORY_OUT
        + "Z" * 2_000_000,
    )
    [out] = outcomes_from_log(memory, tmp_path)
    assert len(out.measured) == 8 and not out.error


def test_a_traceback_logged_by_a_successful_run_is_not_a_failure(tmp_path: Path) -> None:
    parse = next(b for b in BENCHES if b.name == "parse")
    _log(
        tmp_path / "parse.log",
        f"$ python -m bench.firstindex.bench_parse --sizes 1000,20000\n# rc 0\n{PARSE_OUT}"
        "Traceback (most recent call last):\n  File x\nBrokenPipeError: retried\n",
    )
    [out] = outcomes_from_log(parse, tmp_path)
    assert out.error == "" and len(out.measured) == 6


DELTA_OUT = """\
parsed 20000 files in 85.2 s
{"record": "delta.step", \
"files": 20000, "changed_files": 0, "deleted_edges": 0, "load": 4.9, "mode": "first", \
"resolve_s": 65.0, "rows_written": 2028544, "step": 0, "tx_s": 67.6}
{"record": "delta.step", \
"files": 20000, "changed_files": 1, "load": 3.1, "mode": "delta", "resolve_s": 60.1, \
"rows_written": 431, "step": 1, "tx_s": 1.2}
{"record": "delta.step", \
"files": 20000, "changed_files": 200, "load": 3.2, "mode": "delta", "resolve_s": 61.0, \
"rows_written": 40123, "step": 2, "tx_s": 3.5, "parity_ok": true, "parity_rows": 2028900, \
"parity_s": 80.1}
"""


def test_delta_rows_judge_the_first_publish_and_the_one_file_change_at_20000() -> None:
    figs = by_name(figures_delta(DELTA_OUT, ["--files", "20000"]))
    first = figs[
        "first publish throughput, 20,000 files (2,028,544 rows in one transaction of 67.6 s)"
    ]
    assert (first.value, first.verdict, first.target) == ("30,008 rows/s", MET, ">= 30,000 rows/s")
    one = figs[
        "graph publish of a 1-file change (0.0%) in 20,000 files (delta; resolve phase 60.1 s "
        "apart)"
    ]
    assert (one.verdict, one.target, one.load) == (MET, "<= 2.0 s", "3.10")
    assert one.value == "1.2 s, 431 rows written (431.0 per changed file)"
    big = figs[
        "graph publish of a 200-file change (1.0%) in 20,000 files (delta; resolve phase 61.0 s "
        "apart)"
    ]
    assert (big.verdict, big.target) == ("", "rows proportional to the change")
    parity = figs[
        "parity after the last step: live graph against the model's rows (2,028,900 rows, 80.1 s)"
    ]
    assert (parity.value, parity.verdict) == ("equal", MET)
    slow = DELTA_OUT.replace('"tx_s": 1.2', '"tx_s": 2.5')
    assert by_name(figures_delta(slow, None))[one.name].verdict == MISSED


def test_push_at_20000_files_is_judged_at_15_s_against_a_kept_repository_reindex() -> None:
    kept = "re-index of the kept repository"
    out = lines(
        ("webhook.first_index", {"what": kept, "files": 20000, "seconds": 28.6, "job": ""}),
        ("webhook.round", {"round": 1, "seconds": 12.1, "job": "job succeeded in 9.3 s"}),
        (
            "webhook.push",
            {
                "files": 20000,
                "rounds": 1,
                "p50_s": 12.1,
                "p95_s": 12.1,
                "max_s": 12.1,
                "baseline_s": 28.6,
            },
        ),
    )
    figs = by_name(figures_webhook(out, ["--skip-burst", "--files", "20000"]))
    p95 = figs["push-to-searchable p95, one-file change, 20000-file repo (1 rounds)"]
    assert (p95.target, p95.verdict) == ("p95 <= 15 s", MET)
    assert p95.baseline == "28.6 s re-index of the kept repository (same path)"
    assert (
        "re-index of the kept repository through the webhook, 20,000-file repo (baseline)" in figs
    )
    slow = by_name(figures_webhook(out.replace('"p95_s": 12.1', '"p95_s": 16.0'), None))
    assert slow[p95.name].verdict == MISSED
