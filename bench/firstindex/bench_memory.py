"""Peak RSS of the worker and of its parse pool for the WHOLE reindex job, against repository
size, with each size's phase split.

    python -m bench.firstindex.bench_memory [--sizes 100,200,400] [--small-files] [--backend auto]

Each size runs in a fresh process (so one size's peak cannot hide another's): it generates a
synthetic repository (``bench.synth``), then runs the real job (``Reindex``: checkout, parse
pool + spill, resolve, embedding + staging index, one graph transaction, alias flip) against
the stack named by ``SEMGRAPH_*``. Worker peak = ``getrusage(RUSAGE_SELF).ru_maxrss`` of that
process at the end of the job (it includes the embedding model); pool peak = the largest peak
RSS any parse child reported. The smallest size is the baseline measured in the same run;
each size prints the ratio to it (target for the worker: <= 1.3 from the smallest to the
largest size, i.e. memory bounded by window size, not repository size).

Each size also reports the peak RSS of every phase (an ``RssSampler`` thread, marked at the
job's checkpoints), so growth can be pinned to a phase. ``--backend`` sets
``SEMGRAPH_EMBEDDING_BACKEND`` for the jobs (``torch`` measures the torch path on the CPU);
each size records the embedding model id and whether the worker imported torch.

The embedding phase dominates the job's time on a CPU-only machine (~30 chunks/s), and the
default generator makes ~13 chunks per file, so the default sizes are small.
``--small-files`` generates one or two short functions per file (~1-2 chunks), which makes
``--sizes 1000,5000,20000 --small-files`` a whole-job run at 1k/5k/20k files; the report
names files and chunks for each size.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness.records import emit

TARGET_RATIO = 1.3


def run_one(n_files: int, small: bool = False) -> dict[str, Any]:
    from bench.synth import generate
    from semgraph.config import load_settings
    from semgraph.db import connect_graph, connect_search
    from semgraph.graph.schema import SCHEMA
    from semgraph.indexer.pipeline import Reindex
    from semgraph.indexer.request import ReindexRequest
    from semgraph.memory import RssSampler, rss_bytes

    settings = load_settings()
    rss_start = rss_bytes()
    with (
        tempfile.TemporaryDirectory(prefix="semgraph-bench-memory-") as tmp,
        connect_graph(settings) as graph,
        contextlib.closing(connect_search(settings)) as es,
    ):
        graph.ensure_schema(SCHEMA)
        repo = generate(Path(tmp) / f"bench-memory-{n_files}", n_files, seed=n_files, small=small)
        started = time.perf_counter()
        with RssSampler(interval_s=0.005, first_phase="setup") as sampler:
            request = ReindexRequest(source=str(repo), force=True)
            result = Reindex(settings, graph, es, request, checkpoint=sampler.mark).run()
            sampler.mark("after_job")
        wall = time.perf_counter() - started
    from semgraph.search.embed import Embedder

    parse = result.stats.get("parse", {})
    index = result.stats.get("index", {})
    return {
        "files": n_files,
        "small_files": small,
        "status": result.status,
        "wall_s": round(wall, 2),
        "phases_s": result.phases_s,
        "chunks": index.get("chunks"),
        "embedded": index.get("embedded"),
        "nodes": sum(result.stats.get("publish", {}).get("nodes", {}).values()),
        "rss_start_bytes": rss_start,
        "worker_peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "pool_peak_rss_bytes": parse.get("child_peak_rss_bytes", 0),
        "pool_size": parse.get("pool_size"),
        "phase_peak_rss_bytes": sampler.peaks,
        "embedding_model_id": Embedder(settings).model_id,
        "torch_imported": "torch" in sys.modules,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="100,200,400")
    parser.add_argument(
        "--small-files", action="store_true", help="one or two short functions per file"
    )
    parser.add_argument("--backend", choices=("auto", "openvino", "torch"))
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.backend:
        os.environ["SEMGRAPH_EMBEDDING_BACKEND"] = args.backend
    if args.one:
        print(json.dumps(run_one(args.one, small=args.small_files)))
        return
    sizes = sorted({int(s) for s in args.sizes.split(",")})
    results: list[dict[str, Any]] = []
    for n in sizes:
        load = os.getloadavg()[0]
        start = time.strftime("%H:%M:%S", time.gmtime())
        print(
            f"# {n} files: start {start} UTC, load "
            + " ".join(f"{x:.2f}" for x in os.getloadavg()),
            flush=True,
        )
        emit("memory.start", files=n, start_utc=start, load_1m=round(load, 2))
        proc = subprocess.run(
            [sys.executable, "-m", "bench.firstindex.bench_memory", "--one", str(n)]
            + (["--small-files"] if args.small_files else []),
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise SystemExit(f"job at {n} files failed:\n{proc.stderr[-3000:]}")
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        r["load_1m"] = load
        results.append(r)
        emit("memory.size", **dict(sorted(r.items())))
    base = results[0]
    print(f"\nbaseline: the job at {base['files']} files (same run)")
    mib = 2**20
    for r in results:
        print(
            f"{r['files']:>6} files, {r['chunks']} chunks: load {r['load_1m']:.2f}, "
            f"job {r['wall_s']:.1f} s, worker peak "
            f"RSS {r['worker_peak_rss_bytes'] / mib:.1f} MiB "
            f"({r['worker_peak_rss_bytes'] / base['worker_peak_rss_bytes']:.3f}x), pool peak RSS "
            f"{r['pool_peak_rss_bytes'] / mib:.1f} MiB "
            f"({r['pool_peak_rss_bytes'] / max(base['pool_peak_rss_bytes'], 1):.3f}x); "
            + ", ".join(f"{k} {v:.1f}s" for k, v in r["phases_s"].items())
            + f"; model {r.get('embedding_model_id')}, torch imported: {r.get('torch_imported')}"
        )
        print(
            "        phase peak RSS: "
            + ", ".join(
                f"{k} {v / mib:.0f} MiB" for k, v in r.get("phase_peak_rss_bytes", {}).items()
            )
        )
    ratio = results[-1]["worker_peak_rss_bytes"] / base["worker_peak_rss_bytes"]
    verdict = "OK" if ratio <= TARGET_RATIO else "OVER TARGET"
    print(
        f"worker peak RSS ratio {results[-1]['files']}/{base['files']} files: {ratio:.3f} "
        f"(target <= {TARGET_RATIO}: {verdict})"
    )


if __name__ == "__main__":
    main()
