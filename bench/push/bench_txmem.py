"""Transaction memory per published row, and the largest repository one transaction holds.

    python -m bench.push.bench_txmem [--sizes 1000,5000] [--verify auto|FILES|0] [--seed 7]

For each size a synthetic repository from ``bench.synth`` is parsed by the real parser,
resolved, and published (a first publish, ONE transaction) to the Bolt server of the current
settings (``SEMGRAPH_BOLT_URI``). Neo4j's own accounting of the publishing transaction is
read with ``SHOW TRANSACTIONS`` from a second session, twice over:

* in ``before_commit`` (every statement has run, COMMIT not yet sent): the transaction state;
* by a sampler polling every 0.2 s through the whole publish, COMMIT included: the peak
  (COMMIT builds the change set from that state, so it about doubles what is held).

Memory is ``estimatedUsedHeapMemory + allocatedDirectBytes`` (what the transaction has taken
from the pool that ``db.memory.transaction.total.max`` caps). Divided by the rows published
(nodes + edges, from the writer's ``PublishStats`` once publish returns) it gives bytes per
row at each size, printed with its ratio to the smallest size.

From the largest size's peak bytes per row and the transaction cap of a default local stack
on this machine (the heap ``semgraph.services.heap`` chooses, cap 70 %), it then estimates
the largest repository (rows, and files at the synthetic repository's rows per file) one
transaction holds. ``--verify auto`` publishes a synthetic repository of 90 % of that estimate
(``--verify FILES``: that many files) to the server, which must be a stack started with the
default heap: the benchmark says which heap the server runs with. A refusal is reported with
the rows written before it. Every figure is measured, none assumed.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

SHOW_TX = (
    "SHOW TRANSACTIONS YIELD transactionId, estimatedUsedHeapMemory, allocatedDirectBytes, "
    "currentQuery, status "
    "WHERE currentQuery IS NULL OR NOT currentQuery STARTS WITH 'SHOW TRANSACTIONS' "
    "RETURN transactionId AS id, coalesce(estimatedUsedHeapMemory, 0) AS heap, "
    "coalesce(allocatedDirectBytes, 0) AS direct, status"
)
DELETE_REPO = (
    "MATCH (n) WHERE n.repo = $repo CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS"
)
SAMPLE_S = 0.2
VERIFY_SHARE = 0.9
MIB = 1024 * 1024


def _read(graph: Any, exclude: set[str]) -> dict[str, int]:
    """Memory (heap + direct bytes) of every open transaction not in ``exclude``."""
    rows = graph.query("bench show transactions", SHOW_TX)
    return {r["id"]: int(r["heap"]) + int(r["direct"]) for r in rows if r["id"] not in exclude}


class Sampler(threading.Thread):
    """Polls SHOW TRANSACTIONS from its own connection, keeping each transaction's peak."""

    def __init__(self, settings: Any, exclude: set[str]) -> None:
        super().__init__(name="txmem-sampler", daemon=True)
        self.settings, self.exclude = settings, exclude
        self.peaks: dict[str, int] = {}
        self.samples = 0
        self.stop = threading.Event()

    def run(self) -> None:
        from semgraph.db import connect_graph

        with connect_graph(self.settings) as graph:
            while not self.stop.is_set():
                for tx, used in _read(graph, self.exclude).items():
                    self.peaks[tx] = max(self.peaks.get(tx, 0), used)
                self.samples += 1
                self.stop.wait(SAMPLE_S)


def _server_heap(settings: Any) -> dict[str, Any]:
    """The heap the server runs with when it is this state directory's local Neo4j, and the
    heap a default stack on this machine takes."""
    from semgraph.config import load_settings
    from semgraph.services.bolt import BoltService
    from semgraph.services.heap import choose_heap

    default = choose_heap(load_settings(neo4j_heap_mb=0))
    state = BoltService(settings).state()
    return {
        "server_heap_mb": state.heap_mb if state.pid is not None else None,
        "server_tx_cap_mb": state.tx_memory_mb if state.pid is not None else None,
        "default_heap_mb": default.heap_mb,
        "default_tx_cap_mb": default.tx_memory_mb,
        "default_rule": default.describe(),
    }


def run_size(n_files: int, seed: int) -> dict[str, Any]:
    """Publish one synthetic repository of ``n_files`` files and read its transaction memory."""
    from bench.synth import generate
    from semgraph.config import load_settings
    from semgraph.db import connect_graph
    from semgraph.errors import GraphTooLarge
    from semgraph.faults import Faults
    from semgraph.graph.schema import SCHEMA
    from semgraph.graph.writer import GraphWriter, RepoInfo
    from semgraph.indexer.parse import parse_repository
    from semgraph.indexer.spill import SpillReader
    from semgraph.resolve.resolver import resolve

    repo_key = f"bench-txmem-{n_files}"
    out: dict[str, Any] = {"files": n_files}
    with tempfile.TemporaryDirectory(prefix="semgraph-bench-txmem-") as tmp:
        settings = load_settings(state_dir=tmp)
        t0 = time.monotonic()
        source = generate(Path(tmp) / "repo", n_files, seed=seed)
        out["generate_s"] = round(time.monotonic() - t0, 1)
        spill_path = Path(tmp) / "spill" / "bench.spill"
        t0 = time.monotonic()
        parse_repository(settings, source, spill_path)
        out["parse_s"] = round(time.monotonic() - t0, 1)
        spill = SpillReader(spill_path)
        t0 = time.monotonic()
        res = resolve(lambda: iter(spill), repo_key, Path(tmp) / "resolve")
        out["resolve_s"] = round(time.monotonic() - t0, 1)
        with res, connect_graph(settings) as graph:
            graph.ensure_schema(SCHEMA)
            graph.query("bench cleanup", DELETE_REPO, repo=repo_key)
            graph.query(
                "bench cleanup", "MATCH (r:Repository {key: $r}) DETACH DELETE r", r=repo_key
            )
            before = set(_read(graph, set()))
            hook: dict[str, int] = {}

            def before_commit(**_: object) -> None:
                hook.update(_read(graph, before))

            faults = Faults()
            faults.arm("publish.before_commit", before_commit)

            sampler = Sampler(settings, before)
            sampler.start()
            out["load"] = round(os.getloadavg()[0], 2)
            try:
                stats = GraphWriter(graph, settings, faults=faults).publish(
                    RepoInfo(repo_key, "synthetic", "main", "c0"),
                    res,
                    run_id=f"txmem-{n_files}",
                    fingerprint="bench",
                    now=time.time(),
                )
            except GraphTooLarge as exc:
                out["refused"] = str(exc)
                stats = None
            finally:
                sampler.stop.set()
                sampler.join()
            out["samples"] = sampler.samples
            if sampler.peaks:
                tx = max(sampler.peaks, key=lambda k: sampler.peaks[k])
                out["peak_bytes"] = sampler.peaks[tx]
            if hook:
                out["before_commit_bytes"] = max(hook.values())
            if stats is not None:
                rows = stats.total_nodes + stats.total_edges
                out.update(
                    nodes=stats.total_nodes,
                    edges=stats.total_edges,
                    rows=rows,
                    rows_per_file=round(rows / n_files, 1),
                    tx_s=round(stats.tx_duration_s, 1),
                    mode=stats.mode,
                    nodes_by_label=dict(stats.nodes),
                    edges_by_type=dict(stats.edges),
                )
                if hook:
                    out["before_commit_bytes_per_row"] = round(out["before_commit_bytes"] / rows)
                if "peak_bytes" in out:
                    out["peak_bytes_per_row"] = round(out["peak_bytes"] / rows)
            t0 = time.monotonic()
            graph.query("bench cleanup", DELETE_REPO, repo=repo_key)
            graph.query(
                "bench cleanup", "MATCH (r:Repository {key: $r}) DETACH DELETE r", r=repo_key
            )
            out["cleanup_s"] = round(time.monotonic() - t0, 1)
    return out


def estimate(measured: dict[str, Any], cap_mb: int) -> dict[str, Any]:
    """The largest repository a transaction cap of ``cap_mb`` holds, at the measured peak
    bytes per row and rows per file (and at the before-COMMIT figure, for comparison)."""
    cap = cap_mb * MIB
    rows = cap // measured["peak_bytes_per_row"]
    rows_pre = cap // measured["before_commit_bytes_per_row"]
    return {
        "cap_mb": cap_mb,
        "max_rows": rows,
        "max_files": int(rows / measured["rows_per_file"]),
        "max_rows_before_commit_only": rows_pre,
        "basis": f"{measured['files']} files: {measured['peak_bytes_per_row']} B/row peak, "
        f"{measured['rows_per_file']} rows/file",
    }


def report(results: list[dict[str, Any]], est: dict[str, Any] | None) -> None:
    done = [r for r in results if "rows" in r and not r.get("verify")]
    if done:
        base = done[0]
        print(f"\nbaseline: {base['files']} files (same run)")
    for r in results:
        tag = "verify " if r.get("verify") else ""
        if "rows" not in r:
            why = r.get("refused") or r.get("error")
            peak = f"; peak seen {r['peak_bytes'] / MIB:.0f} MiB" if "peak_bytes" in r else ""
            print(f"{tag}{r['files']:>6} files: NOT PUBLISHED: {why}{peak}")
            continue
        line = (
            f"{tag}{r['files']:>6} files: {r['rows']} rows ({r['rows_per_file']}/file) in "
            f"{r['tx_s']} s; before COMMIT {r['before_commit_bytes'] / MIB:.0f} MiB = "
            f"{r['before_commit_bytes_per_row']} B/row"
        )
        if "peak_bytes_per_row" in r:
            line += f", peak {r['peak_bytes'] / MIB:.0f} MiB = {r['peak_bytes_per_row']} B/row"
        if done and not r.get("verify"):
            line += (
                f" ({r['before_commit_bytes_per_row'] / base['before_commit_bytes_per_row']:.2f}x"
                f" / {r.get('peak_bytes_per_row', 0) / base.get('peak_bytes_per_row', 1):.2f}x "
                "baseline)"
            )
        print(line + f" at load {r['load']}")
    if est:
        print(
            f"\nlargest repository in one transaction at a {est['cap_mb']} MiB cap: "
            f"{est['max_rows']} rows = {est['max_files']} synthetic files ({est['basis']}); "
            f"{est['max_rows_before_commit_only']} rows counting only the state before COMMIT"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,5000")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--verify",
        default="0",
        help="auto: publish 90%% of the estimated largest repository; FILES: that many; 0: no",
    )
    args = parser.parse_args()
    from semgraph.config import load_settings

    heap = _server_heap(load_settings())
    print(json.dumps(heap, sort_keys=True), flush=True)
    results: list[dict[str, Any]] = []
    for n in [int(s) for s in args.sizes.split(",") if s]:
        try:
            results.append(run_size(n, args.seed + n))
        except Exception as exc:  # a failed size is reported, the others still are
            results.append({"files": n, "error": f"{type(exc).__name__}: {exc}"})
        print(json.dumps(results[-1], sort_keys=True), flush=True)
    measured = [r for r in results if "peak_bytes_per_row" in r]
    est = estimate(measured[-1], heap["default_tx_cap_mb"]) if measured else None
    if est:
        print(json.dumps({"estimate": est}, sort_keys=True), flush=True)
    target = 0
    if args.verify == "auto" and est:
        target = int(est["max_files"] * VERIFY_SHARE)
    elif args.verify.isdigit():
        target = int(args.verify)
    if target:
        if heap["server_heap_mb"] != heap["default_heap_mb"]:
            print(
                f"# note: the server runs with heap {heap['server_heap_mb']} MiB, not the "
                f"default {heap['default_heap_mb']} MiB: the verification is not of a default stack"
            )
        try:
            results.append({**run_size(target, args.seed + target), "verify": True})
        except Exception as exc:
            results.append(
                {"files": target, "verify": True, "error": f"{type(exc).__name__}: {exc}"}
            )
        print(json.dumps(results[-1], sort_keys=True), flush=True)
    report(results, est)


if __name__ == "__main__":
    main()
