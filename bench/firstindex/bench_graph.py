"""Code-graph benchmark: resolution, one-transaction publish throughput, query latency.

    python -m bench.firstindex.bench_graph [--sizes 1000,20000] [--queries 200] [--republish]

For each size, a synthetic repository from ``bench.synth`` is parsed by the real parser into
a spill, resolved, and published to the Bolt server of the current settings
(``SEMGRAPH_BOLT_URI``) in ONE transaction; then ``definitions``/``callers``/``callees`` are
timed on random names. With ``--republish`` the same model is then published again over
itself (a re-index: every edge replaced, every node upserted in place) and timed too. The
smallest size is the baseline measured in the same run: the report prints each size's
publish throughput (nodes + edges per second of transaction, target >= 20,000) and query
p50/p99 as ratios to it, with the 1-minute load average taken as each publish started (the
machine is shared). Every figure is measured, none assumed.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench.harness import records
from bench.harness.records import emit

TARGET_ROWS_PER_S = 20_000


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def run_size(n_files: int, n_queries: int, seed: int, republish: bool) -> dict[str, Any]:
    from bench.synth import generate
    from semgraph.config import load_settings
    from semgraph.db import connect_graph
    from semgraph.graph.reader import GraphReader
    from semgraph.graph.schema import SCHEMA
    from semgraph.graph.writer import GraphWriter, RepoInfo
    from semgraph.indexer.parse import parse_repository
    from semgraph.indexer.spill import SpillReader
    from semgraph.resolve.resolver import resolve

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

            def publish(run: str) -> Any:
                return GraphWriter(graph, settings).publish(
                    RepoInfo(repo_key, "synthetic", "main", "c0"),
                    res,
                    run_id=run,
                    fingerprint="bench",
                    now=time.time(),
                )

            load = os.getloadavg()[0]
            stats = publish(f"bench-{n_files}")
            again: dict[str, Any] = {}
            if republish:
                again["republish_load"] = round(os.getloadavg()[0], 2)
                re = publish(f"bench-{n_files}-again")
                again["republish_tx_s"] = round(re.tx_duration_s, 2)
                again["republish_rows_per_s"] = round(
                    (re.total_nodes + re.total_edges) / re.tx_duration_s
                )
            query_load = os.getloadavg()[0]
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
                calls: tuple[tuple[str, Callable[[], object]], ...] = (
                    ("def", partial(reader.definitions, name, repo=repo_key)),
                    ("callers", partial(reader.callers, name, repo=repo_key)),
                    ("callees", partial(reader.callees, name, repo=repo_key)),
                )
                for kind, call in calls:
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
            "publish_load": round(load, 2),
            "query_load": round(query_load, 2),
            **again,
            **{f"{k}_p{p}_ms": round(_pct(v, p), 2) for k, v in latency.items() for p in (50, 99)},
            "queries": n_queries,
            "mean_query_ms": round(statistics.mean(v for vs in latency.values() for v in vs), 2),
        }


def report(results: list[dict[str, Any]]) -> None:
    """Ratios of every size to the first (the baseline, measured in the same run)."""
    done = [r for r in results if "error" not in r]
    if not done:
        return
    base = done[0]
    print(f"\nbaseline: {base['files']} files (same run)")
    for r in results:
        if "error" in r:
            print(f"{r['files']:>6} files: FAILED: {r['error']}")
            continue
        ratio = r["rows_per_s"] / base["rows_per_s"]
        print(
            f"{r['files']:>6} files: publish {r['nodes'] + r['edges']} rows in {r['tx_s']} s = "
            f"{r['rows_per_s']} rows/s ({ratio:.2f}x baseline, "
            f"{r['rows_per_s'] / TARGET_ROWS_PER_S:.2f}x the {TARGET_ROWS_PER_S}/s target) "
            f"at load {r['publish_load']}; resolution rate {r['resolution_rate']:.1%}"
        )
        if "republish_rows_per_s" in r:
            rate = r["republish_rows_per_s"]
            print(
                f"        re-publish over itself: {r['republish_tx_s']} s = {rate} rows/s "
                f"({rate / TARGET_ROWS_PER_S:.2f}x the target) at load {r['republish_load']}"
            )
        print(f"        queries at load {r['query_load']}:")
        for kind in ("def", "callers", "callees"):
            p50, p99 = r[f"{kind}_p50_ms"], r[f"{kind}_p99_ms"]
            print(
                f"        {kind:<8} p50 {p50} ms ({p50 / base[f'{kind}_p50_ms']:.2f}x)  "
                f"p99 {p99} ms ({p99 / base[f'{kind}_p99_ms']:.2f}x)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,20000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--republish", action="store_true", help="also time a re-index")
    parser.add_argument(
        "--report", metavar="FILE", help="only print the report of the JSON lines in FILE"
    )
    args = parser.parse_args()
    if args.report:
        report(records.read(Path(args.report).read_text(), "graph.size"))
        return
    results: list[dict[str, Any]] = []
    for n in [int(s) for s in args.sizes.split(",")]:
        try:  # each size's figures are printed as soon as they are measured
            results.append(run_size(n, args.queries, args.seed + n, args.republish))
        except Exception as exc:  # a failed size is reported, the others still are
            results.append({"files": n, "error": f"{type(exc).__name__}: {exc}"})
        emit("graph.size", **dict(sorted(results[-1].items())))
    report(results)


if __name__ == "__main__":
    main()
