"""A big repository's first index with progressive publish (issue 42, part 4):

    python -m bench.firstindex.bench_big [--sizes 20000,100000] [--push-after-s 60]

Each size runs in a fresh process against the stack named by ``SEMGRAPH_*``: a synthetic
repository (``bench.synth``, short files: eight languages, one or two functions each; the
dense generator's 20,000 files alone took an hour of both cores here) is first-indexed as a
worker of role ``all`` runs it, the shared vector store off (every chunk embedded by the
model):

1. the reindex (checkout, parse, resolve, keyword staging, graph transaction, alias flip):
   ``first_answer_s`` is when it ends, and a BM25 search and a ``graph callers`` answer for
   a name of the repository are asked then (both must answer);
2. the vectors job (:class:`semgraph.search.vectors.VectorsFill`) in a thread; after
   ``--push-after-s`` of it, a one-file push arrives: the job stops at its next window (as
   the worker's ``should_yield`` does), the push's reindex runs (``push_s``; its new
   function answers BM25 and kNN at once), then the vectors job goes on to the end
   (``full_s``: enqueue to the last vector).

Memory: the process's peak RSS per phase (an ``RssSampler`` marked at every checkpoint of the
jobs and at each step above) and in all; the smallest size is the baseline of the ratio
(target: <= 1.3x, flat with size).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.harness.records import emit

TARGET_RATIO = 1.3
WHO = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]


def run_one(n_files: int, push_after_s: float) -> dict[str, Any]:
    from bench.synth import generate
    from semgraph.config import load_settings
    from semgraph.db import connect_graph, connect_search
    from semgraph.graph.reader import GraphReader
    from semgraph.graph.schema import SCHEMA
    from semgraph.indexer.pipeline import Reindex
    from semgraph.indexer.request import ReindexRequest
    from semgraph.memory import RssSampler
    from semgraph.search.embed import Embedder
    from semgraph.search.index import SearchIndex
    from semgraph.search.query import search_answer
    from semgraph.search.vectors import VectorsFill, pending_count

    settings = load_settings().model_copy(update={"search_vector_store": False})
    out: dict[str, Any] = {"files": n_files}
    with (
        tempfile.TemporaryDirectory(prefix="semgraph-bench-big-") as tmp,
        connect_graph(settings) as graph,
        contextlib.closing(connect_search(settings)) as es,
    ):
        graph.ensure_schema(SCHEMA)
        repo = generate(Path(tmp) / f"big-{n_files}", n_files, seed=n_files, small=True)
        embedder = Embedder(settings)
        index = SearchIndex(es, settings)
        with RssSampler(interval_s=0.01, first_phase="setup") as sampler:
            began = time.monotonic()
            first = Reindex(
                settings, graph, es, ReindexRequest(source=str(repo)), checkpoint=sampler.mark
            ).run()
            out["first_answer_s"] = round(time.monotonic() - began, 1)
            key = first.repo_key
            sampler.mark("first_answers")
            out["first_phases_s"] = first.phases_s
            out["chunks"] = first.stats.get("index", {}).get("chunks")
            out["pending"] = first.stats.get("vectors_pending")
            # a function of the repository (each calls itself or its neighbour)
            name = re.findall(r"def (\w+)\(", sorted(repo.rglob("*.py"))[0].read_text())[0]
            hits = search_answer(es, settings, None, name, repo=key, mode="bm25").hits
            callers = GraphReader(graph).callers(name, repo=key)
            out["first_answers"] = {"bm25_hits": len(hits), "graph_matches": len(callers.matches)}

            push_now = threading.Event()
            fill = VectorsFill(index, embedder, key, should_yield=push_now.is_set)
            done: dict[str, Any] = {}
            worker = threading.Thread(target=lambda: done.update(first=fill.run().to_dict()))
            sampler.mark("vectors")
            worker.start()
            worker.join(timeout=push_after_s)
            if worker.is_alive():
                push_now.set()
                worker.join()
                sampler.mark("push")
                target = sorted(repo.rglob("*.py"))[0]
                target.write_text(target.read_text() + "\n\ndef big_push_added():\n    return 1\n")
                subprocess.run(["git", "-C", str(repo), *WHO, "commit", "-qam", "push"], check=True)
                pushed = time.monotonic()
                push = Reindex(
                    settings, graph, es, ReindexRequest(source=str(repo)), embedder=embedder
                ).run()
                out["push_s"] = round(time.monotonic() - pushed, 2)
                out["push_phases_s"] = push.phases_s
                knn = search_answer(
                    es, settings, embedder, "big push added", repo=key, mode="knn", k=5
                ).hits
                out["push_knn_top5_has_it"] = any(
                    h.path == str(target.relative_to(repo)) for h in knn
                )
                out["pending_after_push"] = pending_count(index, index.live_index(key) or "")
                sampler.mark("vectors_after_push")
                rest = VectorsFill(index, embedder, key).run()
                done["rest"] = rest.to_dict()
            out["full_s"] = round(time.monotonic() - began, 1)
            out["vectors"] = done
            out["pending_left"] = pending_count(index, index.live_index(key) or "")
            sampler.mark("end")
        out["phase_peak_rss_mib"] = {k: round(v / 2**20) for k, v in sampler.peaks.items()}
    out["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="20000,100000")
    parser.add_argument("--push-after-s", type=float, default=60.0)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.push_after_s)))
        return
    results = []
    push_after = ["--push-after-s", str(args.push_after_s)]
    for n in sorted({int(s) for s in args.sizes.split(",")}):
        print(f"# {n} files: start {time.strftime('%H:%M:%S')}, load {os.getloadavg()}", flush=True)
        proc = subprocess.run(
            [sys.executable, "-m", "bench.firstindex.bench_big", "--one", str(n), *push_after],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise SystemExit(f"{n} files failed:\n{proc.stderr[-3000:]}")
        found = json.loads(proc.stdout.strip().splitlines()[-1])
        print(json.dumps(found), flush=True)
        emit("big.size", **found)
        results.append(found)
    base = results[0]
    for r in results:
        ratio = r["peak_rss_mib"] / base["peak_rss_mib"]
        print(
            f"{r['files']} files, {r['chunks']} chunks: first answer {r['first_answer_s']} s, "
            f"push {r.get('push_s')} s, full {r['full_s']} s, peak RSS {r['peak_rss_mib']} MiB "
            f"({ratio:.2f}x of {base['files']} files; target <= {TARGET_RATIO})",
            flush=True,
        )


if __name__ == "__main__":
    main()
