"""A real public repository through the graph side of the job, on the stack of the current
settings (for the issue: a fresh default stack, ``semgraph services up`` with no heap set).

    python -m bench.firstindex.bench_realrepo PATH_OR_URL [--change FILE]

Runs the job's own phase functions, in order, as ``semgraph index`` does: checkout (a mirror
of the source, the commit materialised), the parse pool into a spill (through the parse
cache), resolution, and ONE graph transaction, while a second connection samples Neo4j's
own accounting of that transaction (``SHOW TRANSACTIONS``, see ``bench.push.bench_txmem``). Then
``--change FILE`` commits a one-function addition to FILE of the (local) repository, runs
the same phases for that commit (a delta publish), and resets the commit. Embedding is not
part of this benchmark (it is the job's ``embed_index`` phase, measured by bench_embed and
bench_memory; on this CPU it takes about 1 s per 11 chunks of a real repository). Prints one
JSON line per publish and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any


def _phases(settings: Any, graph: Any, source: str, work: Path, run: str) -> dict[str, Any]:
    from bench.push.bench_txmem import Sampler, _read
    from semgraph.graph.writer import GraphWriter, RepoInfo
    from semgraph.indexer.checkout import checkout
    from semgraph.indexer.parse import parse_repository
    from semgraph.indexer.parsecache import ParseCache
    from semgraph.indexer.spill import SpillReader
    from semgraph.resolve.resolver import resolve

    out: dict[str, Any] = {"run": run}
    t0 = time.monotonic()
    co = checkout(settings, source, None, work / f"ws-{run}")
    out.update(repo=co.repo_key, commit=co.commit, checkout_s=round(time.monotonic() - t0, 1))
    spill = work / f"{run}.spill"
    t0 = time.monotonic()
    with ParseCache.for_repo(settings, co.repo_key, "bench-realrepo") as cache:
        stats = parse_repository(settings, co.workspace, spill, cache=cache)
        cache.commit()
    out["parse_s"] = round(time.monotonic() - t0, 1)
    out["files_by_status"], out["files_reused"] = dict(stats.files_by_status), stats.files_reused
    t0 = time.monotonic()
    res = resolve(lambda: iter(SpillReader(spill)), co.repo_key, work / f"resolve-{run}")
    out["resolve_s"] = round(time.monotonic() - t0, 1)
    with res:
        out["symbols"], out["call_sites"] = res.symbols, res.total_calls
        before = set(_read(graph, set()))
        sampler = Sampler(settings, before)
        sampler.start()
        out["load"] = round(os.getloadavg()[0], 2)
        try:
            pub = GraphWriter(graph, settings).publish(
                RepoInfo(co.repo_key, co.url, co.default_branch or "main", co.commit),
                res,
                run_id=f"{run}-{time.time_ns()}",
                fingerprint="bench-realrepo",
                now=time.time(),
            )
        finally:
            sampler.stop.set()
            sampler.join()
    out.update(
        mode=pub.mode,
        tx_s=round(pub.tx_duration_s, 2),
        rows_written=pub.rows_written,
        nodes_written=pub.total_nodes,
        edges_written=pub.total_edges,
        files_changed=pub.files_changed,
        rows_per_s=round(pub.throughput),
    )
    if sampler.peaks:
        out["peak_tx_mib"] = round(max(sampler.peaks.values()) / 2**20, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("source")
    parser.add_argument("--change", help="a file of the repository to add a function to")
    args = parser.parse_args()

    from bench.push.bench_txmem import _server_heap
    from semgraph.config import load_settings
    from semgraph.db import connect_graph
    from semgraph.graph.schema import SCHEMA

    settings = load_settings()
    print(json.dumps(_server_heap(settings), sort_keys=True), flush=True)
    results = []
    with (
        tempfile.TemporaryDirectory(prefix="semgraph-bench-realrepo-") as tmp,
        connect_graph(settings) as graph,
    ):
        graph.ensure_schema(SCHEMA)
        work = Path(tmp)
        results.append(_phases(settings, graph, args.source, work, "first"))
        print(json.dumps(results[-1], sort_keys=True), flush=True)
        if args.change:  # a commit on the same repository (then undone): a re-index
            repo = Path(args.source)
            path = repo / args.change
            text = path.read_text()
            git = ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=b@b"]
            path.write_text(text + "\n\ndef bench_added(x):\n    return len(x)\n")
            subprocess.run([*git, "commit", "-qam", "bench: one function"], check=True)
            try:
                results.append(_phases(settings, graph, args.source, work, "change"))
            finally:
                subprocess.run([*git, "reset", "-q", "--hard", "HEAD~1"], check=True)
            print(json.dumps(results[-1], sort_keys=True), flush=True)
    first = results[0]
    print(
        f"\n{first['repo']} at {first['commit']}: {first['symbols']:,} symbols, "
        f"{first['call_sites']:,} call sites; parse {first['parse_s']} s, resolve "
        f"{first['resolve_s']} s; first publish ({first['mode']}) {first['rows_written']:,} "
        f"rows in {first['tx_s']} s = {first['rows_per_s']:,} rows/s, peak transaction "
        f"{first.get('peak_tx_mib')} MiB"
    )
    for r in results[1:]:
        print(
            f"one-function change ({r['mode']}): {r['files_changed']} files' rows built, "
            f"{r['rows_written']:,} rows written in {r['tx_s']} s "
            f"({r['tx_s'] / first['tx_s']:.4f}x the first publish); parse {r['parse_s']} s "
            f"(cache), resolve {r['resolve_s']} s"
        )


if __name__ == "__main__":
    main()
