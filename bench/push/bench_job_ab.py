"""A first index and a one-function push through the whole reindex job, with this tree's code
and a baseline's, in one run (what a change to the code costs the job: a move of modules
must leave both where they were):

    python -m bench.push.bench_job_ab --baseline COMMIT [--rounds 3] [--source DIR]

Each round, each code (the baseline is a ``git worktree`` of ``COMMIT``; the two take turns,
the first alternating) runs in a fresh process against the stack named by ``SEMGRAPH_*``:
``Reindex``, the job ``semgraph index`` runs, on a one-commit git copy of ``--source`` under
a path of its own (another repository key: a first index with nothing to reuse, no live
index, parse cache or work tree), with the shared vector store off (every chunk is embedded
by the model), then ``--pushes`` times one function appended to one Python file and the job
again (a push; the median is reported). The job is timed as the worker runs it: the reindex,
then the re-link of the repository's dependents (a phase of the reindex now, a step after it
in older code: both are timed as ``relink``).
``--source`` defaults to click 8.1.7 from the cross-repository corpus that
``ops/install.sh`` fetches. Prints one ``job.ab`` record per round and code: each job's
wall seconds and phase seconds, its chunks embedded, and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import os
import sys
import tarfile
from pathlib import Path

from bench.harness.baseline import ab_rounds, run_script

CORPUS = Path(os.environ.get("SEMGRAPH_XREPO_CORPUS", Path.home() / ".cache/semgraph/xrepo-corpus"))
_RUN = r"""
import importlib, json, resource, shutil, statistics, subprocess, sys, time
from pathlib import Path
from semgraph.config import load_settings
from semgraph.db import connect_graph, connect_search
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest
from semgraph.search.embed import Embedder

for name in ("semgraph.xrepo.relink", "semgraph.graph.xrepo_relink"):  # this code, or older
    try:
        relink_dependents = importlib.import_module(name).relink_dependents
        break
    except ImportError:
        continue
source, work, pushes = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
settings = load_settings().model_copy(update={"search_vector_store": False})
who = ["-c", "user.name=ab", "-c", "user.email=ab@localhost"]
git = lambda *a: subprocess.run(["git", "-C", str(work), *a], check=True, capture_output=True)
shutil.copytree(source, work)
git("init", "-q", "-b", "main")
git(*who, "add", "-A")
git(*who, "commit", "-qm", "snapshot")
target = sorted(p for p in work.rglob("*.py") if ".git" not in p.parts)[0]
embedder, out, runs = Embedder(settings), {}, []


def job(graph, es):
    # the job as the worker runs it: the reindex, then the re-link of the dependents (a phase
    # of the reindex in this code, a step after it in older code)
    began = time.monotonic()
    result = Reindex(settings, graph, es, ReindexRequest(source=str(work)),
                     embedder=embedder).run()
    phases = dict(result.phases_s)
    if "relink" not in phases:
        step = time.monotonic()
        relink_dependents(graph, result.repo_key)
        phases["relink"] = round(time.monotonic() - step, 4)
    index = result.stats.get("index", {})
    return {"wall_s": round(time.monotonic() - began, 3), "phases_s": phases,
            "embedded": index.get("embedded")}


with connect_graph(settings) as graph:
    es = connect_search(settings)
    out["first_index"] = job(graph, es)
    for n in range(pushes):
        target.write_text(target.read_text() + f"\n\ndef ab_added_{n}():\n    return {n}\n")
        git(*who, "commit", "-qam", f"push {n}")
        runs.append(job(graph, es))
median = lambda xs: round(statistics.median(xs), 4)
out["push"] = {
    "wall_s": median([r["wall_s"] for r in runs]),
    "phases_s": {k: median([r["phases_s"][k] for r in runs]) for k in runs[0]["phases_s"]},
    "embedded": runs[0]["embedded"],
    "walls_s": [r["wall_s"] for r in runs],
}
out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
print(json.dumps(out))
"""


def _source(given: str | None, scratch: Path) -> Path:
    if given:
        return Path(given).resolve()
    archive = CORPUS / "pypi" / "click-8.1.7.tar.gz"
    if not archive.is_file():
        sys.exit(f"{archive} is missing: run ops/install.sh (it fetches the corpus) or --source")
    with tarfile.open(archive) as tar:
        tar.extractall(scratch, filter="data")
    return scratch / "click-8.1.7"


def _measure(code: Path, source: Path, work: Path, pushes: int) -> dict[str, object]:
    return run_script(code, _RUN, str(source), str(work), str(pushes))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--baseline", required=True, help="the commit to compare against")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--pushes", type=int, default=5, help="one-function pushes per round")
    p.add_argument("--source", help="the tree to index (default: click 8.1.7 from the corpus)")
    args = p.parse_args()
    ab_rounds(
        args.baseline,
        "semgraph-bench-job-ab-",
        args.rounds,
        lambda scratch: _source(args.source, scratch),
        lambda code, tree, work: _measure(code, tree, work, args.pushes),
        "job.ab",
    )


if __name__ == "__main__":
    main()
