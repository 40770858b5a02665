"""The first answer of a first index, with this tree's code and a baseline's, in one run
(issue 42: progressive publish):

    python -m bench.firstindex.bench_first_answer --baseline COMMIT [--rounds 2] [--source DIR]

Each round, each code (the baseline is a ``git worktree`` of ``COMMIT``; they take turns, the
first alternating) runs in a fresh process against the stack named by ``SEMGRAPH_*``: a
one-commit git copy of ``--source`` (default: click 8.1.7 from the cross-repository corpus)
under a path of its own (a first index, nothing to reuse), with the shared vector store off
(every chunk is embedded by the model). The process runs the job as a worker does: the
reindex, then, where the code has them, the vectors jobs it leaves (the worker claims them
next). A thread asks from the start, every 0.1 s, a BM25 search for a name of the repository
and ``graph callers`` of it; ``first_answer_s`` is when both first answer, ``full_s`` when the
last vector is in (for the baseline: when its one job ends). Also the process's peak RSS.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.harness.baseline import ab_rounds, run_script
from bench.push.bench_job_ab import _source

_RUN = r"""
import json, resource, shutil, subprocess, sys, threading, time
from pathlib import Path
from semgraph.config import load_settings
from semgraph.db import connect_graph, connect_search
from semgraph.graph.reader import GraphReader
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest
from semgraph.indexer.sources import repo_key_for
from semgraph.search.embed import Embedder
from semgraph.search.query import search_answer

source, work, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
settings = load_settings().model_copy(update={"search_vector_store": False})
who = ["-c", "user.name=ab", "-c", "user.email=ab@localhost"]
git = lambda *a: subprocess.run(["git", "-C", str(work), *a], check=True, capture_output=True)
shutil.copytree(source, work)
git("init", "-q", "-b", "main")
git(*who, "add", "-A")
git(*who, "commit", "-qm", "snapshot")
key = repo_key_for(str(work))
embedder, out = Embedder(settings), {}
first = {}
began = time.monotonic()
stop = threading.Event()


def ask():
    with connect_graph(settings) as graph:
        es = connect_search(settings)
        while not stop.is_set():
            try:
                hits = search_answer(es, settings, None, name, repo=key, mode="bm25").hits
                callers = GraphReader(graph).callers(name, repo=key)
                if hits and callers.matches:
                    first["s"] = round(time.monotonic() - began, 3)
                    return
            except Exception:
                pass
            time.sleep(0.1)


asker = threading.Thread(target=ask, daemon=True)
asker.start()
with connect_graph(settings) as graph:
    es = connect_search(settings)
    result = Reindex(settings, graph, es, ReindexRequest(source=str(work)), embedder=embedder).run()
    out["job_s"] = round(time.monotonic() - began, 3)
    out["pending"] = result.stats.get("vectors_pending") or 0
    if out["pending"]:
        from semgraph.search.index import SearchIndex
        from semgraph.search.vectors import VectorsFill
        filled = VectorsFill(SearchIndex(es, settings), embedder, key).run()
        out["vectors"] = {"filled": filled.filled, "embedded": filled.embedded,
                          "seconds": filled.seconds}
    out["full_s"] = round(time.monotonic() - began, 3)
    out["embedded_in_job"] = result.stats.get("index", {}).get("embedded")
asker.join(timeout=60)
stop.set()
out["first_answer_s"] = first.get("s")
out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
print(json.dumps(out))
"""


def _measure(code: Path, source: Path, work: Path, name: str) -> dict[str, object]:
    return run_script(code, _RUN, str(source), str(work), name)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--baseline", required=True, help="the commit to compare against")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--source", help="the tree to index (default: click 8.1.7 from the corpus)")
    p.add_argument("--name", default="make_context", help="the name both questions ask for")
    args = p.parse_args()
    ab_rounds(
        args.baseline,
        "semgraph-bench-first-answer-",
        args.rounds,
        lambda scratch: _source(args.source, scratch),
        lambda code, tree, work: _measure(code, tree, work, args.name),
        "first_answer.ab",
    )


if __name__ == "__main__":
    main()
