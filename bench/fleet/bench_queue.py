"""Queue throughput on the local stack: with N queued jobs, claim+complete jobs/s and the
latency of claim and of claim+complete (p50/p99). The baseline, measured in the same run, is
one trivial auto-commit Bolt round trip, so the figures read as "round trips per job".

    python bench/fleet/bench_queue.py [--jobs 10000] [--measure 2000]

Uses the Bolt server from SEMGRAPH_BOLT_URI and DELETES every :JobQueue node there first.
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench.harness.records import emit
from semgraph.config import load_settings
from semgraph.db import connect_graph
from semgraph.graph.schema import SCHEMA
from semgraph.queue.store import JobStore


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--measure", type=int, default=2_000, help="claims to time")
    opts = parser.parse_args()
    settings = load_settings()
    with connect_graph(settings) as graph:
        graph.ensure_schema(SCHEMA)
        graph.query("reset", "MATCH (n) WHERE n:JobQueue OR n:RepoLock DETACH DELETE n")
        store = JobStore(graph, settings)
        t0 = time.perf_counter()
        for i in range(opts.jobs):
            store.enqueue(f"bench/repo-{i}", now=float(i), commit=f"c{i}")
        enqueue_s = time.perf_counter() - t0

        base: list[float] = []
        for _ in range(500):
            t = time.perf_counter()
            graph.query("baseline", "RETURN 1 AS x")
            base.append(time.perf_counter() - t)

        claim_lat: list[float] = []
        total_lat: list[float] = []
        t0 = time.perf_counter()
        for _ in range(min(opts.measure, opts.jobs)):
            t = time.perf_counter()
            job = store.claim("bench", ["reindex"], now=1e9)
            claim_lat.append(time.perf_counter() - t)
            assert job is not None
            assert store.complete(job.id, job.claim_token or "", now=1e9)
            total_lat.append(time.perf_counter() - t)
        run_s = time.perf_counter() - t0
    n = len(total_lat)
    b50 = statistics.median(base)
    print(f"queued jobs                 {opts.jobs}")
    print(f"enqueue throughput          {opts.jobs / enqueue_s:8.1f} jobs/s")
    print(f"baseline round trip p50     {b50 * 1000:8.2f} ms")
    print(f"claim+complete throughput   {n / run_s:8.1f} jobs/s  ({n} jobs)")
    latency = []
    for name, lat in (("claim", claim_lat), ("claim+complete", total_lat)):
        p50, p99 = pct(lat, 0.50), pct(lat, 0.99)
        print(
            f"{name:<15} p50 {p50 * 1000:7.2f} ms ({p50 / b50:5.1f}x baseline)   "
            f"p99 {p99 * 1000:7.2f} ms ({p99 / b50:5.1f}x baseline)"
        )
        latency.append(
            {"name": name, "p50_ms": round(p50 * 1000, 2), "p99_ms": round(p99 * 1000, 2)}
        )
    emit(
        "queue.summary",
        jobs=opts.jobs,
        enqueue_jobs_per_s=round(opts.jobs / enqueue_s, 1),
        baseline_p50_ms=round(b50 * 1000, 2),
        throughput_jobs_per_s=round(n / run_s, 1),
        measured_jobs=n,
        latency=latency,
    )


if __name__ == "__main__":
    main()
