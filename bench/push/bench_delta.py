"""Delta publish benchmark: what a re-index costs the graph when few files changed.

    python -m bench.push.bench_delta [--files 20000] [--changes 1,1%,10%] [--work DIR] [--parity]

A synthetic repository (``bench.synth``, the default generator) is parsed by the real parser
and published in ONE transaction (a first publish: the throughput baseline, target >= 30,000
rows/s at 20,000 files). Then, for each change size, that many files (picked at random,
seeded) are changed in the parsed model the way an edit changes it: every symbol of the
file moves down two lines and a new function calling one of the file's names is added, so
the file's nodes, its edge groups and, through global resolution, edges elsewhere change.
The model is resolved again (the job's resolve phase, timed apart) and published; each step
is a delta against the step before. Printed per step: the publish transaction's seconds (the
job's ``graph_publish`` phase; target <= 2 s for one file in 20,000), rows written, and the
ratios to the first publish measured in the same run (time, rows). ``--parity`` then compares
the live graph with the model's rows (``semgraph check --graph-parity``'s comparison).
``--work DIR`` keeps the parsed spill between runs (parsing 20,000 files takes minutes).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.harness.records import emit

TARGET_FIRST_ROWS_PER_S = 30_000
TARGET_ONE_FILE_S = 2.0


def _changed(facts: Any, n: int) -> Any:
    from semgraph.model import CallSite, Symbol

    symbols = [
        dataclasses.replace(s, start_line=s.start_line + 2, end_line=s.end_line + 2)
        for s in facts.symbols
    ]
    calls = [dataclasses.replace(c, line=c.line + 2) for c in facts.calls]
    module = facts.module
    name = f"bench_changed_{n}"
    target = next((s.name for s in facts.symbols if s.kind == "function"), "len")
    symbols.append(
        Symbol(
            kind="function",
            name=name,
            qualified_name=f"{module}.{name}" if module else name,
            start_line=1,
            end_line=2,
            signature=f"def {name}()",
            parent=None,
            bases=[],
        )
    )
    calls.append(
        CallSite(enclosing=symbols[-1].qualified_name, callee=target, receiver=None, line=2)
    )
    return dataclasses.replace(
        facts,
        symbols=symbols,
        calls=calls,
        blob_sha=f"{n:040x}",
        line_count=facts.line_count + 2,
    )


def _stream(spill: Path, changed: dict[str, int]) -> Iterator[Any]:
    from semgraph.indexer.spill import SpillReader
    from semgraph.model import FileFacts

    for rec in SpillReader(spill):
        if isinstance(rec, FileFacts) and rec.path in changed:
            yield _changed(rec, changed[rec.path])
        else:
            yield rec


def _sizes(text: str, n_files: int) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip()
        out.append(
            max(1, round(n_files * float(part[:-1]) / 100)) if part.endswith("%") else int(part)
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--changes", default="1,1%,10%")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work", type=Path, help="keep the repository and spill here")
    parser.add_argument("--parity", action="store_true", help="compare graph and model after")
    args = parser.parse_args()

    import tempfile

    from bench.synth import generate
    from semgraph.config import load_settings
    from semgraph.db import connect_graph
    from semgraph.graph import parity
    from semgraph.graph.schema import SCHEMA
    from semgraph.graph.writer import GraphWriter, RepoInfo
    from semgraph.indexer.parse import parse_repository
    from semgraph.indexer.spill import SpillReader
    from semgraph.model import FileFacts
    from semgraph.resolve.resolver import resolve

    work = args.work or Path(tempfile.mkdtemp(prefix="semgraph-bench-delta-"))
    work.mkdir(parents=True, exist_ok=True)
    settings = load_settings()
    repo_key = f"bench-delta-{args.files}"
    spill = work / f"{repo_key}.spill"
    if not spill.exists():
        source = generate(work / f"repo-{args.files}", args.files, seed=args.seed + args.files)
        t0 = time.monotonic()
        parse_repository(settings, source, spill.with_suffix(".tmp"))
        spill.with_suffix(".tmp").rename(spill)
        print(f"parsed {args.files} files in {time.monotonic() - t0:.1f} s", flush=True)
    paths = sorted(r.path for r in SpillReader(spill) if isinstance(r, FileFacts))
    rng = random.Random(args.seed)
    results: list[dict[str, Any]] = []
    with connect_graph(settings) as graph:
        graph.ensure_schema(SCHEMA)
        _cleanup(graph, repo_key)
        writer = GraphWriter(graph, settings)
        changed: dict[str, int] = {}
        steps = [0, *_sizes(args.changes, len(paths))]
        for step, k in enumerate(steps):
            for path in rng.sample(paths, k):
                changed[path] = changed.get(path, 0) + 1 + step * 1_000_000
            t0 = time.monotonic()
            res = resolve(lambda: _stream(spill, changed), repo_key, work / f"resolve-{step}")
            resolve_s = time.monotonic() - t0
            load = os.getloadavg()[0]
            with res:
                stats = writer.publish(
                    RepoInfo(repo_key, "synthetic", "main", f"c{step}"),
                    res,
                    run_id=f"{repo_key}-{step}-{time.time_ns()}",
                    fingerprint="bench",
                    now=time.time(),
                )
                row = {
                    "files": len(paths),
                    "step": step,
                    "changed_files": k,
                    "mode": stats.mode,
                    "resolve_s": round(resolve_s, 2),
                    "tx_s": round(stats.tx_duration_s, 3),
                    "rows_written": stats.rows_written,
                    "nodes_written": stats.total_nodes,
                    "edges_written": stats.total_edges,
                    "deleted_nodes": stats.deleted_nodes,
                    "deleted_edges": stats.deleted_edges,
                    "unchanged_nodes": stats.unchanged_nodes,
                    "unchanged_groups": stats.unchanged_groups,
                    "rows_per_s": round(stats.throughput),
                    "load": round(load, 2),
                }
                if args.parity and step == len(steps) - 1:
                    t0 = time.monotonic()
                    report = parity.compare(
                        repo_key,
                        parity.live_rows(graph, repo_key),
                        parity.model_rows(res),
                        work / "parity",
                    )
                    row["parity_ok"] = report.ok
                    row["parity_rows"] = report.live_rows
                    row["parity_s"] = round(time.monotonic() - t0, 1)
            results.append(row)
            emit("delta.step", **dict(sorted(row.items())))
        _cleanup(graph, repo_key)
    report_lines(results)


def report_lines(results: list[dict[str, Any]]) -> None:
    base = results[0]
    print(
        f"\nbaseline (same run): first publish of {base['rows_written']} rows in "
        f"{base['tx_s']} s = {base['rows_per_s']} rows/s "
        f"({base['rows_per_s'] / TARGET_FIRST_ROWS_PER_S:.2f}x the "
        f"{TARGET_FIRST_ROWS_PER_S}/s target) at load {base['load']}"
    )
    for r in results[1:]:
        target = f"; target <= {TARGET_ONE_FILE_S} s" if r["changed_files"] == 1 else ""
        print(
            f"{r['changed_files']:>6} changed files ({r['mode']}): publish {r['tx_s']} s "
            f"({r['tx_s'] / base['tx_s']:.4f}x the first publish{target}), "
            f"{r['rows_written']} rows written ({r['rows_written'] / base['rows_written']:.4f}x; "
            f"{r['rows_written'] / r['changed_files']:.1f} per changed file), resolve "
            f"{r['resolve_s']} s, load {r['load']}"
            + (
                f"; parity {'ok' if r['parity_ok'] else 'FAILED'} over {r['parity_rows']} rows "
                f"in {r['parity_s']} s"
                if "parity_ok" in r
                else ""
            )
        )


def _cleanup(graph: Any, repo_key: str) -> None:
    """Delete the benchmark repository in bounded transactions."""
    while True:
        [row] = graph.query(
            "bench cleanup",
            "MATCH (n) WHERE n.repo = $r WITH n LIMIT 20000 DETACH DELETE n RETURN count(*) AS n",
            r=repo_key,
        )
        if row["n"] == 0:
            break
    graph.query("bench cleanup", "MATCH (n:Repository {key: $r}) DETACH DELETE n", r=repo_key)


if __name__ == "__main__":
    main()
