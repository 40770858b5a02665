"""The delta publish from a host that never published the repository (issue 26): what the
published state adds to the graph, what reading it costs, and a one-file change at 20,000 files
published by a worker with an empty state directory.

    python -m bench.push.bench_sharedelta [--files 20000] [--small] [--grow 2500] [--work DIR]
                                     [--repeats 5]

A synthetic repository (``bench.synth``, parsed by the real parser; ``--work DIR`` keeps the
spill, as ``bench.push.bench_delta`` does) is brought into the graph by host A. A first publish of
20,000 files is one transaction of about two million rows, which needs a heap of about 12 GiB
on Neo4j (docs/schema.md); so that this runs on the small test stack, host A publishes the
first ``--grow`` files and adds ``--grow`` more per delta until the repository is whole (each
step a delta of its own: the state a delta leaves is the state a full publish leaves, which
tests/integration/test_graph_parity.py proves); ``--grow 0`` publishes it whole at once.
``--small`` takes the generator's small files (one or two short functions each: about a
tenth of the rows per file), whose 20,000-file first publish fits one transaction of the
test stack. Then:

* **bytes**: the published state's properties, summed over the repository in the graph
  (UTF-8 bytes of the stored strings), per file, per graph row (node or edge) and per state
  entry (one node row or edge group);
* **read**: the read a delta starts with (every file's ``delta_bundle``), timed on its own,
  ``--repeats`` times (median and max);
* **one-file change from host B**: one file changed as ``bench.push.bench_delta`` changes it
  (every symbol moved, one new function calling a name of the file), resolved and published
  by a writer whose settings name another, empty state directory: its mode (target: delta),
  its graph phase (the publish transaction; target <= 2 s), rows written (target:
  proportional to the change, about what the same change costs on host A), the time it spent
  reading the state, and the state it wrote. Hosts alternate, B1 A1 B2 A2 (each B a new
  empty state directory; A the settings' own), each changing another file, for the ratio in
  the same run.

Each figure is printed as a ``sharedelta.*`` record (:mod:`bench.harness.records`) and in words.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness.records import emit
from bench.push.bench_delta import _cleanup, _stream

TARGET_ONE_FILE_S = 2.0
STATE_BYTES = """
MATCH (f:File {repo: $repo})
RETURN count(f) AS files, sum(size(f.delta_bundle)) AS bundle_chars,
       sum(reduce(n = 0, r IN f.delta_rows | n + size(r))) AS rows_chars,
       sum(size(f.delta_rows)) AS rows
"""
EXTERNAL_BYTES = """
MATCH (r:Repository {key: $repo})
RETURN reduce(n = 0, e IN coalesce(r.delta_externals, []) | n + size(e)) AS chars,
       size(coalesce(r.delta_externals, [])) AS rows
"""


def _publish(
    settings: Any,
    graph: Any,
    spill: Path,
    work: Path,
    key: str,
    changed: dict[str, int],
    keep: set[str] | None,
    step: str,
) -> tuple[Any, float, int]:
    from semgraph.graph.writer import GraphWriter, RepoInfo
    from semgraph.resolve.resolver import resolve

    def files() -> Any:
        for rec in _stream(spill, changed):
            if keep is None or getattr(rec, "path", None) in keep:
                yield rec

    t0 = time.monotonic()
    res = resolve(files, key, work / f"resolve-{step}")
    resolve_s = time.monotonic() - t0
    with res:
        stats = GraphWriter(graph, settings).publish(
            RepoInfo(key, "synthetic", "main", step),
            res,
            run_id=f"{key}-{step}-{time.time_ns()}",
            fingerprint="bench",
            now=time.time(),
        )
        return stats, resolve_s, res.model_rows()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--grow", type=int, default=2500, help="files added per step (0: all)")
    parser.add_argument("--small", action="store_true", help="the generator's small files")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--work", type=Path, help="keep the repository and spill here")
    args = parser.parse_args()

    from bench.synth import generate
    from semgraph.config import load_settings
    from semgraph.db import connect_graph
    from semgraph.graph import publish_queries as q
    from semgraph.graph.schema import SCHEMA
    from semgraph.indexer.parse import parse_repository
    from semgraph.indexer.spill import SpillReader
    from semgraph.model import FileFacts

    work = args.work or Path(tempfile.mkdtemp(prefix="semgraph-bench-sharedelta-"))
    work.mkdir(parents=True, exist_ok=True)
    host_a = load_settings()
    key = f"bench-sharedelta-{args.files}" + ("-small" if args.small else "")
    spill = work / f"{key}.spill"
    if not spill.exists():
        source = work / f"repo-{key}"
        if not (source / ".git").exists():  # generated by an earlier run that stopped
            source = generate(source, args.files, seed=args.seed + args.files, small=args.small)
        t0 = time.monotonic()
        parse_repository(host_a, source, spill.with_suffix(".tmp"))
        spill.with_suffix(".tmp").rename(spill)
        print(f"parsed {args.files} files in {time.monotonic() - t0:.1f} s", flush=True)
    every = [r.path for r in SpillReader(spill)]
    paths = sorted(r.path for r in SpillReader(spill) if isinstance(r, FileFacts))
    order = list(every)
    random.Random(args.seed).shuffle(order)
    with connect_graph(host_a) as graph:
        graph.ensure_schema(SCHEMA)
        _cleanup(graph, key)
        changed: dict[str, int] = {}
        grow = args.grow if 0 < args.grow < len(order) else len(order)
        for n in range(grow, len(order) + grow, grow):
            keep = set(order[:n])
            stats, resolve_s, model_rows = _publish(
                host_a, graph, spill, work, key, changed, keep, f"grow-{n}"
            )
            emit(
                "sharedelta.grow",
                files=len(keep),
                mode=stats.mode,
                tx_s=round(stats.tx_duration_s, 2),
                rows_written=stats.rows_written,
                resolve_s=round(resolve_s, 1),
                load=round(os.getloadavg()[0], 2),
            )
        state = graph.query("state bytes", STATE_BYTES, repo=key)[0]
        ext = graph.query("externals bytes", EXTERNAL_BYTES, repo=key)[0]
        state_bytes = state["bundle_chars"] + state["rows_chars"] + ext["chars"]
        entries = state["rows"] - state["files"] + ext["rows"] - 1  # less the checksums
        emit(
            "sharedelta.bytes",
            files=state["files"],
            graph_rows=model_rows,
            state_bytes=state_bytes,
            entries=entries,
            bytes_per_file=round(state_bytes / state["files"], 1),
            bytes_per_graph_row=round(state_bytes / model_rows, 2),
            bytes_per_entry=round(state_bytes / entries, 2),
        )
        reads = []
        for _ in range(args.repeats):
            t0 = time.monotonic()
            [got] = graph.query("read bundles", q.PUBLISH_STATE_FILES, repo=key)
            reads.append(time.monotonic() - t0)
        emit(
            "sharedelta.read",
            files=len(got["files"]),
            median_s=round(statistics.median(reads), 3),
            max_s=round(max(reads), 3),
            repeats=args.repeats,
        )
        rng = random.Random(args.seed + 1)
        results = {}
        # alternately, each host B a new one with an empty state directory, so neither side
        # has the server's first run of the delta statements to itself
        rounds = []
        for i in range(1, 3):
            fresh = Path(tempfile.mkdtemp(prefix=f"host-b{i}-"))
            rounds += [(f"B{i}", host_a.model_copy(update={"state_dir": fresh})), (f"A{i}", host_a)]
        for host, settings in rounds:
            changed[rng.choice(paths)] = len(changed) + 1
            load = os.getloadavg()[0]
            stats, resolve_s, model_rows = _publish(
                settings, graph, spill, work, key, changed, None, f"one-{host}"
            )
            results[host] = stats
            emit(
                "sharedelta.one_file",
                host=host,
                empty_state_dir=host.startswith("B"),
                host_state_files=sum(1 for _ in settings.state_dir.rglob("*")),
                mode=stats.mode,
                tx_s=round(stats.tx_duration_s, 3),
                state_read_s=round(stats.state_read_s, 3),
                rows_written=stats.rows_written,
                files_changed=stats.files_changed,
                state_rows=stats.state_rows,
                state_bytes=stats.state_bytes,
                graph_rows=model_rows,
                resolve_s=round(resolve_s, 1),
                load=round(load, 2),
                delta_fallback=stats.delta_fallback,
            )
        _cleanup(graph, key)
    _report(args.files, state_bytes, state, entries, model_rows, reads, results)


def _report(
    files: int,
    state_bytes: int,
    state: dict[str, Any],
    entries: int,
    graph_rows: int,
    reads: list[float],
    results: dict[str, Any],
) -> None:
    print(
        f"\npublished state in the graph at {state['files']} files: {state_bytes} bytes = "
        f"{state_bytes / state['files']:.0f} per file, {state_bytes / graph_rows:.1f} per graph "
        f"row ({graph_rows} rows), {state_bytes / entries:.1f} per entry ({entries} node rows "
        f"and edge groups)\nreading every file's bundle: median "
        f"{statistics.median(reads):.3f} s, max {max(reads):.3f} s ({len(reads)} reads)"
    )
    for host, s in results.items():
        name = f"host {host}" + (" (empty state dir, never published it)" if host[0] == "B" else "")
        print(
            f"one-file change by {name}: {s.mode}, graph phase {s.tx_duration_s:.3f} s "
            f"(target <= {TARGET_ONE_FILE_S} s), of which reading the state "
            f"{s.state_read_s:.3f} s; {s.rows_written} rows written ({s.files_changed} files "
            f"changed, {s.rows_written / graph_rows:.6f}x the graph), state written: "
            f"{s.state_rows} rows, {s.state_bytes} bytes"
        )
    b = statistics.median(s.tx_duration_s for h, s in results.items() if h[0] == "B")
    a = statistics.median(s.tx_duration_s for h, s in results.items() if h[0] == "A")
    print(f"host B / host A, same run, median graph phase: {b / a:.2f}x")


if __name__ == "__main__":
    main()
