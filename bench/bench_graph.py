"""Code-graph benchmark: resolution, one-transaction publish throughput, query latency.

    python -m bench.bench_graph [--sizes 1000,20000] [--queries 200]

For each size, a synthetic repository from ``bench.synth`` is parsed by the real parser into
a spill, resolved, and published to the Bolt server of the current settings
(``SEMGRAPH_BOLT_URI``) in ONE transaction; then ``definitions``/``callers``/``callees`` are
timed on random names. The smallest size is the baseline measured in the same run: the
report prints each size's publish throughput (nodes + edges per second of transaction,
target >= 20,000) and query p50/p99 as ratios to it. Every figure is measured, none assumed.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_ROWS_PER_S = 20_000


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def run_size(n_files: int, n_queries: int, seed: int) -> dict[str, Any]:
    from bench.synth import generate
    from semgraph.config import load_settings
    from semgraph.db import connect_graph
    from semgraph.graph.reader import GraphReader
    from semgraph.graph.resolve import resolve
    from semgraph.graph.schema import SCHEMA
    from semgraph.graph.writer import GraphWriter, RepoInfo
    from semgraph.indexer.parse import parse_repository
    from semgraph.indexer.spill import SpillReader

    repo_key = f"bench-{n_files}"
    with tempfile.TemporaryDirectory(prefix="semgraph-bench-graph-") as tmp:
        settings = load_settings(state_dir=tmp)
        source = generate(Path(tmp) / "repo", n_files, seed=seed)
        spill_path = Path(tmp) / "spill" / "bench.spill"
        t0 = time.monotonic()
        parse_repository(settings, source, spill_path)
        parse_s = time.monotonic() - t0
        spill = SpillReader(spill_path)
        t0 = time.monotonic()
        res = resolve(lambda: iter(spill), repo_key, Path(tmp) / "resolve")
        resolve_s = time.monotonic() - t0
        with res, connect_graph(settings) as graph:
            graph.ensure_schema(SCHEMA)
            stats = GraphWriter(graph, settings).publish(
                RepoInfo(repo_key, "synthetic", "main", "c0"),
                lambda: iter(spill),
                res,
                run_id=f"bench-{n_files}",
                fingerprint="bench",
                now=time.time(),
            )
            names = [
                r["name"]
                for r in graph.query(
                    "bench names",
                    "MATCH (s:Symbol {repo: $repo}) WHERE s.kind <> 'module' "
                    "RETURN s.qualified_name AS name",
                    repo=repo_key,
                )
            ]
            rng = random.Random(seed)
            reader = GraphReader(graph)
            latency: dict[str, list[float]] = {"def": [], "callers": [], "callees": []}
            for _ in range(n_queries):
                name = rng.choice(names)
                for kind, call in (
                    ("def", lambda n=name: reader.definitions(n, repo=repo_key)),
                    ("callers", lambda n=name: reader.callers(n, repo=repo_key)),
                    ("callees", lambda n=name: reader.callees(n, repo=repo_key)),
                ):
                    t0 = time.perf_counter()
                    call()
                    latency[kind].append((time.perf_counter() - t0) * 1000)
            graph.query("bench cleanup", "MATCH (n) WHERE n.repo = $r DETACH DELETE n", r=repo_key)
            graph.query(
                "bench cleanup", "MATCH (n:Repository {key: $r}) DETACH DELETE n", r=repo_key
            )
        rows = stats.total_nodes + stats.total_edges
        return {
            "files": n_files,
            "parse_s": round(parse_s, 2),
            "resolve_s": round(resolve_s, 2),
            "call_sites": res.total_calls,
            "resolution_rate": round(res.rate, 4),
            "nodes": stats.total_nodes,
            "edges": stats.total_edges,
            "tx_s": round(stats.tx_duration_s, 2),
            "rows_per_s": round(rows / stats.tx_duration_s),
            **{f"{k}_p{p}_ms": round(_pct(v, p), 2) for k, v in latency.items() for p in (50, 99)},
            "queries": n_queries,
            "mean_query_ms": round(statistics.mean(v for vs in latency.values() for v in vs), 2),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,20000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results = [run_size(n, args.queries, args.seed + n) for n in sizes]
    base = results[0]
    for r in results:
        print(json.dumps(r, sort_keys=True))
    print(f"\nbaseline: {base['files']} files (same run)")
    for r in results:
        ratio = r["rows_per_s"] / base["rows_per_s"]
        print(
            f"{r['files']:>6} files: publish {r['nodes'] + r['edges']} rows in {r['tx_s']} s = "
            f"{r['rows_per_s']} rows/s ({ratio:.2f}x baseline, "
            f"{r['rows_per_s'] / TARGET_ROWS_PER_S:.2f}x the {TARGET_ROWS_PER_S}/s target); "
            f"resolution rate {r['resolution_rate']:.1%}"
        )
        for kind in ("def", "callers", "callees"):
            p50, p99 = r[f"{kind}_p50_ms"], r[f"{kind}_p99_ms"]
            print(
                f"        {kind:<8} p50 {p50} ms ({p50 / base[f'{kind}_p50_ms']:.2f}x)  "
                f"p99 {p99} ms ({p99 / base[f'{kind}_p99_ms']:.2f}x)"
            )


if __name__ == "__main__":
    main()
