"""Peak RSS by worker role (issue 42, "memory by role"):

    python -m bench.firstindex.bench_roles [--source DIR] [--pushes 3]

Against the stack named by ``SEMGRAPH_*``, on a one-commit git copy of ``--source`` (default:
click 8.1.7 from the cross-repository corpus) under a fresh path, with the shared vector store
off: a ``semgraph worker --role push`` process runs the first index until idle (graph and
keywords; it never loads the model), then a ``--role embed`` process fills the vectors, then
``--pushes`` one-function pushes each run by a push worker and then an embed worker. Each
process's peak RSS (``ru_maxrss`` of the child) and wall seconds are printed, and the
``all`` role (one worker doing both, as the default deployment runs) on another copy for
comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness.records import emit
from bench.push.bench_job_ab import _source

WHO = ["-c", "user.name=ab", "-c", "user.email=ab@localhost"]


def _git(work: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(work), *WHO, *args], check=True, capture_output=True)


# a fresh parent per worker: its children's ru_maxrss is then that worker's own peak
_MEASURE = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
    "capture_output=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def _cli(*args: str) -> int:
    """Run ``semgraph ARGS`` in a process of its own; its peak RSS in KiB."""
    env = {**os.environ, "SEMGRAPH_SEARCH_VECTOR_STORE": "false"}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "-m", "semgraph.cli", *args],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout.strip().splitlines()[-1])


def _worker(role: str) -> dict[str, float]:
    """One worker process of ``role`` until idle: its wall seconds and peak RSS."""
    began = time.monotonic()
    peak = _cli("worker", "--role", role, "--idle-exit-s", "0")
    return {"wall_s": round(time.monotonic() - began, 2), "peak_rss_mb": round(peak / 1024, 1)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--source", help="the tree to index (default: click 8.1.7 from the corpus)")
    p.add_argument("--pushes", type=int, default=3)
    args = p.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="semgraph-bench-roles-"))
    try:
        source = _source(args.source, scratch)
        for order in (["push", "embed"], ["all"]):
            work = scratch / f"repo-{'-'.join(order)}"
            shutil.copytree(source, work)
            _git(work, "init", "-q", "-b", "main")
            _git(work, "add", "-A")
            _git(work, "commit", "-qm", "snapshot")
            target = sorted(q for q in work.rglob("*.py") if ".git" not in q.parts)[0]
            for step in range(args.pushes + 1):
                if step:
                    target.write_text(
                        target.read_text() + f"\n\ndef roles_{step}():\n    return 1\n"
                    )
                    _git(work, "commit", "-qam", f"push {step}")
                _cli("enqueue", str(work))
                for role in order:
                    found = _worker(role)
                    what = "first_index" if step == 0 else "push"
                    print(f"{what} {role}: {json.dumps(found)}", flush=True)
                    emit("roles", role=role, step=what, **found)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
