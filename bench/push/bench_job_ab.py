"""A first index and a one-function push through the whole reindex job, with this tree's code
and a baseline's, in one run (what a change to the code costs the job: a move of modules
must leave both where they were):

    python -m bench.push.bench_job_ab --baseline COMMIT [--rounds 3] [--source DIR]

Each round, each code (the baseline is a ``git worktree`` of ``COMMIT``; the two take turns,
the first alternating) runs in a fresh process against the stack named by ``SEMGRAPH_*``:
``Reindex``, the job ``semgraph index`` runs, on a one-commit git copy of ``--source`` under
a path of its own (another repository key: a first index with nothing to reuse, no live
index, parse cache or work tree), with the shared vector store off (every chunk is embedded
by the model), then one function appended to one Python file and the job again (a push).
``--source`` defaults to click 8.1.7 from the cross-repository corpus that
``ops/install.sh`` fetches. Prints one ``job.ab`` record per round and code: each job's
wall seconds and phase seconds, its chunks embedded, and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from bench.harness.records import emit

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("SEMGRAPH_XREPO_CORPUS", Path.home() / ".cache/semgraph/xrepo-corpus"))
_RUN = r"""
import json, resource, shutil, subprocess, sys, time
from pathlib import Path
from semgraph.config import load_settings
from semgraph.db import connect_graph, connect_search
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest
from semgraph.search.embed import Embedder

source, work = Path(sys.argv[1]), Path(sys.argv[2])
settings = load_settings().model_copy(update={"search_vector_store": False})
git = lambda *a: subprocess.run(["git", "-C", str(work), *a], check=True, capture_output=True)
shutil.copytree(source, work)
git("init", "-q", "-b", "main")
git("-c", "user.name=ab", "-c", "user.email=ab@localhost", "add", "-A")
git("-c", "user.name=ab", "-c", "user.email=ab@localhost", "commit", "-qm", "snapshot")
target = sorted(p for p in work.rglob("*.py") if ".git" not in p.parts)[0]
embedder, out = Embedder(settings), {}
with connect_graph(settings) as graph:
    es = connect_search(settings)
    for job in ("first_index", "push"):
        if job == "push":
            target.write_text(target.read_text() + "\n\ndef ab_added():\n    return 1\n")
            git("-c", "user.name=ab", "-c", "user.email=ab@localhost", "commit", "-qam", "push")
        began = time.monotonic()
        result = Reindex(settings, graph, es, ReindexRequest(source=str(work)),
                         embedder=embedder).run()
        index = result.stats.get("index", {})
        out[job] = {"wall_s": round(time.monotonic() - began, 3),
                    "phases_s": result.phases_s,
                    "embedded": index.get("embedded")}
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


def _measure(code: Path, source: Path, work: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(code / "src")}
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(source), str(work)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--baseline", required=True, help="the commit to compare against")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--source", help="the tree to index (default: click 8.1.7 from the corpus)")
    args = p.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="semgraph-bench-job-ab-"))
    base = scratch / "baseline"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base), args.baseline],
        check=True,
    )
    try:
        source = _source(args.source, scratch)
        for r in range(args.rounds):
            order = [("this", ROOT), ("baseline", base)]
            for code, path in order if r % 2 == 0 else order[::-1]:
                found = _measure(path, source, scratch / f"repo-{r}-{code}")
                print(f"round {r + 1}/{args.rounds} {code}: {json.dumps(found)}", flush=True)
                emit("job.ab", code=code, round=r + 1, **found)
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False
        )
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
