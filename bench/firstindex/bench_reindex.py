"""Reindex benchmark: the whole job, phase by phase, and unchanged content against the first
index, measured in one run on one synthetic repository.

    python -m bench.firstindex.bench_reindex [--files 200]

Runs the real reindex pipeline (checkout, parse pool, spill, resolve, embed + staging index,
one graph transaction, alias flip) against the stack named by ``SEMGRAPH_*`` (start it with
``semgraph services up``):

1. first index of a fresh synthetic repository (``bench.synth``): the baseline;
2. reindex of the same commit: detected as unchanged (commit + fingerprint) — a no-op;
3. forced reindex of the same commit: parses and publishes again but reuses every vector.

Prints seconds per phase and the ratios first/unchanged and first/forced (target for the
unchanged reindex: >= 10x faster than the first index).
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness.records import emit


def _run(settings: Any, graph: Any, embedder: Any, source: Path, force: bool) -> tuple[Any, float]:
    from semgraph.db import connect_search
    from semgraph.indexer.pipeline import Reindex
    from semgraph.indexer.request import ReindexRequest

    started = time.perf_counter()
    with contextlib.closing(connect_search(settings)) as es:
        request = ReindexRequest(source=str(source), force=force)
        result = Reindex(settings, graph, es, request, embedder=embedder).run()
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    args = parser.parse_args()

    from bench.synth import generate
    from semgraph.config import load_settings
    from semgraph.db import connect_graph
    from semgraph.graph.schema import SCHEMA
    from semgraph.search.embed import Embedder

    settings = load_settings()
    embedder = Embedder(settings)
    embedder.embed(["warm up"])  # load the model outside the timed runs
    with (
        tempfile.TemporaryDirectory(prefix="semgraph-bench-reindex-") as tmp,
        connect_graph(settings) as graph,
    ):
        graph.ensure_schema(SCHEMA)
        repo = generate(Path(tmp) / f"bench-reindex-{args.files}", args.files, seed=11)
        first, t_first = _run(settings, graph, embedder, repo, force=False)
        noop, t_noop = _run(settings, graph, embedder, repo, force=False)
        forced, t_forced = _run(settings, graph, embedder, repo, force=True)

    idx = first.stats.get("index", {})
    print(
        f"repository: {args.files} files, {idx.get('chunks')} chunks, "
        f"{sum(first.stats['publish']['nodes'].values())} nodes"
    )
    print(f"first index   {t_first:8.2f} s  status={first.status}")
    for phase, secs in first.phases_s.items():
        print(f"    {phase:<14} {secs:8.2f} s")
    print(f"unchanged     {t_noop:8.2f} s  status={noop.status}")
    print(
        f"forced        {t_forced:8.2f} s  status={forced.status} "
        f"embedded={forced.stats['index']['embedded']} reused={forced.stats['index']['reused']}"
    )
    for phase, secs in forced.phases_s.items():
        print(f"    {phase:<14} {secs:8.2f} s")
    print(f"ratio first/unchanged = {t_first / t_noop:.1f}x  (target >= 10x)")
    print(f"ratio first/forced    = {t_first / t_forced:.1f}x  (vectors reused, no embedding)")
    emit(
        "reindex.repo",
        files=args.files,
        chunks=idx.get("chunks"),
        nodes=sum(first.stats["publish"]["nodes"].values()),
    )
    for run, result, secs in (
        ("first", first, t_first),
        ("unchanged", noop, t_noop),
        ("forced", forced, t_forced),
    ):
        extra = (
            {k: forced.stats["index"][k] for k in ("embedded", "reused")} if run == "forced" else {}
        )
        emit(
            "reindex.run",
            run=run,
            seconds=round(secs, 2),
            status=f"{result.status}",
            **extra,
            phases_s=[[p, round(s, 2)] for p, s in result.phases_s.items()],
        )
    emit(
        "reindex.ratios",
        first_over_unchanged=round(t_first / t_noop, 1),
        first_over_forced=round(t_first / t_forced, 1),
    )


if __name__ == "__main__":
    main()
