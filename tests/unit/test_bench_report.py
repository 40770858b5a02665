"""bench.run_all reads each benchmark's printed figures into the report's rows."""

from __future__ import annotations

import json
from pathlib import Path

from bench import run_all
from bench.run_all import (
    BENCHES,
    parse_embed,
    parse_graph,
    parse_memory,
    parse_parse,
    parse_queue,
    parse_reindex,
    parse_retrieval,
    parse_webhook,
)

PARSE_OUT = """\
  1000 files:   167.6 files/s (  83.8/core over 2 cores),  0.67 MB/s, parent peak RSS   44.4 MiB, \
child peak RSS   41.1 MiB, 6.0s, failed 0
 20000 files:   250.0 files/s ( 125.0/core over 2 cores),  0.70 MB/s, parent peak RSS   66.6 MiB, \
child peak RSS   41.0 MiB, 80.0s, failed 0
parent peak RSS ratio 20000/1000 files: 1.500 (target <= 1.3: OVER TARGET)
"""


def test_parse_rows_carry_baseline_ratio_and_verdict() -> None:
    figs = {f.name: f for f in parse_parse(PARSE_OUT)}
    big = figs["parse phase peak RSS, worker (parent), 20,000 files"]
    assert big.value == "66.6 MiB"
    assert big.baseline == "44.4 MiB at 1,000 files"
    assert big.ratio == "1.500"
    assert big.verdict == "**missed**"
    child = figs["parse phase peak RSS, pool child, 20,000 files"]
    assert child.verdict == "met"
    assert figs["parse throughput, 20,000 files"].verdict == "met"
    assert figs["parse throughput, 1,000 files"].verdict == "**missed**"


def test_memory_rows_from_json_lines() -> None:
    rows = [
        {
            "files": n,
            "chunks": n * 10,
            "embedded": n * 9,
            "wall_s": n / 10,
            "phases_s": {"parse": n / 100, "embed_index": n / 20},
            "worker_peak_rss_bytes": rss,
            "pool_peak_rss_bytes": 40 * 2**20,
        }
        for n, rss in ((50, 1000 * 2**20), (200, 1100 * 2**20))
    ]
    out = "\n".join(json.dumps(r) for r in rows) + "\nworker peak RSS ratio 200/50 files: 1.100\n"
    figs = {f.name: f for f in parse_memory(out)}
    worker = figs["whole job peak RSS, worker, 200 files (2000 chunks, 1800 embedded)"]
    assert (worker.value, worker.ratio, worker.verdict) == ("1,100.0 MiB", "1.100", "met")
    split = figs["end-to-end job by phase, 200 files"]
    assert "embed_index 10.0s" in split.value and split.ratio == "4.00x for 4.0x files"


def test_embed_reindex_graph_queue_webhook_retrieval() -> None:
    embed = parse_embed(
        "20 files, 195 chunks, model m on cpu\n"
        "repeat 0: raw encode 10.00s, embedding phase 12.00s (bulk 1s), unchanged re-run "
        "embedding phase 0.50s (lookup 0.5s, hit rate 100%)\n"
    )
    assert embed[0].ratio == "1.200" and embed[0].verdict == "**missed**"
    reindex = parse_reindex(
        "repository: 100 files, 900 chunks, 1200 nodes\n"
        "first index      60.00 s  status=succeeded\n"
        "    parse              3.00 s\n    embed_index       50.00 s\n"
        "unchanged         2.00 s  status=noop\n"
        "forced           20.00 s  status=succeeded embedded=0 reused=900\n"
    )
    assert reindex[1].ratio == "first/unchanged 30.0x" and reindex[1].verdict == "met"
    assert "embed_index 50.0s (83%)" in reindex[0].value
    graph = parse_graph(
        json.dumps({"files": 10, "nodes": 1, "edges": 1, "rows_per_s": 25000}).replace(
            "}",
            ', "def_p50_ms": 1, "def_p99_ms": 2, "callers_p50_ms": 1, '
            '"callers_p99_ms": 2, "callees_p50_ms": 1, "callees_p99_ms": 2}',
        )
    )
    assert graph[0].verdict == "met"
    queue = parse_queue(
        "queued jobs 10\nbaseline round trip p50 2.00 ms\n"
        "claim+complete throughput 50.0 jobs/s  (10 jobs)\n"
        "claim           p50   10.00 ms (  5.0x baseline)   p99   20.00 ms ( 10.0x baseline)\n"
    )
    assert queue[0].ratio == "5.0x" and queue[-1].ratio == "10.0 round trips per job"
    hook = parse_webhook(
        "burst of 300 deliveries, 50 concurrent:\n"
        "  ack latency  p50 50.0 ms  p95 150.0 ms  p99 250.0 ms (target p99 <= 200 ms)\n"
        "  baseline GET /healthz  p50 10.0 ms  p99 50.0 ms\n"
    )
    assert hook[1].verdict == "**missed**" and hook[1].ratio == "5.00x"
    rec = parse_retrieval(
        "70 files, 800 chunks, 36 queries, k=5\nrecall@5 bm25  : 0.500 (18/36)\n"
        "recall@5 knn   : 0.600 (22/36)\nrecall@5 hybrid: 0.700 (25/36)\n"
    )
    assert rec[-1].verdict == "met" and rec[-1].ratio == "1.40x"


def test_garbage_output_yields_no_figures() -> None:
    junk = "Traceback (most recent call last):\n  boom\n{not json}\n"
    for bench in BENCHES:
        assert bench.parse(junk) == [], bench.name


def test_report_from_kept_logs(tmp_path: Path) -> None:
    bench = next(b for b in BENCHES if b.name == "parse")
    (tmp_path / "parse.log").write_text(
        f"$ python -m bench.bench_parse --sizes 1000,20000\n# load 3.50, rc 0, 90.0 s\n{PARSE_OUT}"
        "\n----- stderr (tail) -----\n"
    )
    out = run_all.outcome_from_log(bench, tmp_path)
    assert out is not None and out.rc == 0 and out.args == ["--sizes", "1000,20000"]
    info = {"cores available": "2", "CPU": "x"}
    text = run_all.render(info, [out], False, 90.0, "## Side by side with peers\n")
    assert "loaded 2-core machine" in text
    assert "| parse phase peak RSS, worker (parent), 20,000 files | 66.6 MiB |" in text
    assert "python -m bench.bench_parse --sizes 1000,20000" in text
    failed = tmp_path / "failed"
    failed.mkdir()
    (failed / "parse.log").write_text(
        "$ python -m bench.bench_parse\n# load 1.00, rc 1, 2.0 s\n\n"
        "----- stderr (tail) -----\nRuntimeError: no server\n"
    )
    bad = run_all.outcome_from_log(bench, failed)
    assert bad is not None and bad.error == "RuntimeError: no server" and not bad.figures
