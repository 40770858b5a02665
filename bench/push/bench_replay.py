"""Real-history replay (issue 25, "Real history"): the last N first-parent commits of a real
repository, one push at a time, through the product's job, with incremental == full checked
at every step.

    python -m bench.push.bench_replay [--repo PATH] [--commits 200] [--vectors synthetic-first]
                                 [--log bench/results/replay.log] [--work DIR] [--keep]

A bare local clone of ``--repo`` gets one branch, ``replay``, set to the commit before the
last N; each step moves that branch to the next first-parent commit (a push) and runs the
reindex job for that commit as ``semgraph index CLONE --ref COMMIT`` runs it (the job's
class, :class:`semgraph.indexer.pipeline.Reindex`, with the worker's shared search client and
embedder; the queue's enqueue and claim are left out): checkout of the moved branch into the
reused work tree, parse through the parse cache, resolve, staging index, ONE graph
transaction, alias flip. Step 0 is the first index of the start commit: what an earlier
replay of the repository left is removed first, unless ``--keep`` (a replay that continues
where another stopped: its step 0 finds the start commit indexed, a no-op, or re-indexes it).

Between the job's resolve phase and its embed phase (outside both phases' timers), the
step's check resolves the same spill again with a full :func:`resolve` and compares the two
with :func:`semgraph.resolve.compare.differences` (every edge, tier, candidate count,
unresolved reason, per-file bundle digest, every count). The job's own figures (wall and CPU
seconds per phase, resolve mode and why, files resolved, rows published) leave the check's
time out. After the last step, ``semgraph check --graph-parity`` runs for the repository.

Vectors (``--vectors``): embedding a first index of sympy with the default model takes about
67 minutes on this CPU, so by default (``synthetic-first``) step 0 embeds with
:class:`bench.synth.vectors.HashVectors` (the real model id, texts and keys; vectors from a
hash of each text) and every push embeds its changed chunks with the product's default
embedder (loaded once before step 1, as a worker keeps its model loaded); unchanged chunks
keep their synthetic vectors, so the index measures time, not retrieval quality.
``synthetic`` uses hash vectors throughout (no embedding cost at all), ``model`` the model
throughout.

Prints (and writes to ``--log``, the command on its first line) one ``replay.step`` record
per step and a ``replay.summary`` (p50/p95 per push of the whole job and of the resolve
phase, parity failures), with a progress line on stderr at least every 10 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from bench.harness.records import line
from bench.push.replay_stats import (
    read_steps,
    resolve_mode,
    rows_published,
    select_commits,
    summarize,
)

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]
SYMPY = Path("/work/.mirror/sympy+sympy/repo")
BRANCH = "replay"


def cpu_s() -> float:
    """CPU seconds of this process and of its reaped children (the parse pool)."""
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class Ticker:
    """A line on stderr every ``every_s`` seconds naming what runs now (the step's phase)."""

    def __init__(self, every_s: float = 10.0) -> None:
        self.what = "starting"
        self.since = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._every = every_s

    def set(self, what: str) -> None:
        self.what, self.since = what, time.monotonic()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            took = time.monotonic() - self.since
            print(f"[replay] {self.what} ({took:.0f} s)", file=sys.stderr, flush=True)

    def __enter__(self) -> Ticker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def replay_commits(repo: Path, n: int) -> list[str]:
    """The start commit and the ``n`` first-parent commits after it, oldest first."""
    out = git("-C", str(repo), "rev-list", "--first-parent", "-n", str(n + 1), "HEAD")
    return select_commits(out.splitlines(), n)


def make_clone(repo: Path, clone: Path, start: str) -> None:
    """A bare clone of ``repo`` whose only branch, ``replay``, points at ``start``."""
    if clone.exists():
        subprocess.run(["rm", "-rf", str(clone)], check=True)
    git("clone", "--quiet", "--bare", "--no-tags", str(repo), str(clone))
    gd = ["--git-dir", str(clone)]
    git(*gd, "update-ref", f"refs/heads/{BRANCH}", start)
    git(*gd, "symbolic-ref", "HEAD", f"refs/heads/{BRANCH}")
    for ref in git(*gd, "for-each-ref", "--format=%(refname)").split():
        if ref != f"refs/heads/{BRANCH}":
            git(*gd, "update-ref", "-d", ref)


def push(clone: Path, commit: str) -> None:
    """Move the clone's branch to ``commit`` (what a push does to the remote)."""
    git("--git-dir", str(clone), "update-ref", f"refs/heads/{BRANCH}", commit)


def make_job_class() -> Any:
    """The product's job with the step's check after its resolve phase (imported late: the
    module's pure parts load without the product's dependencies)."""
    from semgraph.indexer.pipeline import Reindex
    from semgraph.indexer.spill import SpillReader
    from semgraph.resolve.compare import differences
    from semgraph.resolve.resolver import resolve

    class ReplayReindex(Reindex):
        """``Reindex`` that records CPU seconds per phase and, right after the resolve
        phase (outside its timer), compares the job's resolution with a full resolve of the
        same spill."""

        ticker: Ticker | None = None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.phases_cpu: dict[str, float] = {}
            self.check: dict[str, Any] = {}
            self.resolve_info: dict[str, Any] | None = None

        def _phase(self, name: str, fn: Callable[[], T], *, cancellable: bool = True) -> T:
            if self.ticker is not None:
                self.ticker.set(f"phase {name}")
            started = cpu_s()
            try:
                result = super()._phase(name, fn, cancellable=cancellable)
            finally:
                self.phases_cpu[name] = round(cpu_s() - started, 3)
            if name == "resolve":
                self._compare(result)
            return result

        def _compare(self, incremental: Any) -> None:
            # what the incremental resolver says of its run (mode, reason, files resolved)
            self.resolve_info = getattr(incremental, "incremental", None)
            if self.ticker is not None:
                self.ticker.set("check: full resolve of the same tree, then differences")
            wall, cpu = time.monotonic(), cpu_s()
            full_dir = self.workdir / "replay-full"
            with resolve(lambda: iter(SpillReader(self.spill)), self.repo_key, full_dir) as full:
                resolved = time.monotonic()
                found = differences(incremental, full)
            self.check = {
                "differences": found[:20],
                "differences_count": len(found),
                "full_resolve_s": round(resolved - wall, 3),
                "check_s": round(time.monotonic() - wall, 3),
                "check_cpu_s": round(cpu_s() - cpu, 3),
            }

    return ReplayReindex


def embedder_for(kind: str, step: int, settings: Any, kinds: Any) -> Any:
    from bench.synth.vectors import HashVectors

    if kind == "synthetic" or (kind == "synthetic-first" and step == 0):
        return HashVectors(settings)
    return kinds.embedder(settings)


def run_step(
    job_class: Any,
    settings: Any,
    graph: Any,
    es: Any,
    clone: Path,
    step: int,
    commit: str,
    vectors: str,
    kinds: Any,
) -> dict[str, Any]:
    from semgraph.indexer.request import ReindexRequest

    push(clone, commit)
    request = ReindexRequest(source=str(clone), ref=commit, commit=commit, job_id=f"replay-{step}")
    embedder = embedder_for(vectors, step, settings, kinds)
    job = job_class(settings, graph, es, request, embedder=embedder)
    wall, cpu = time.monotonic(), cpu_s()
    result = job.run()
    job_wall, job_cpu = time.monotonic() - wall, cpu_s() - cpu
    check = job.check
    stats = result.stats or {}
    parsed = stats.get("parse") or {}
    files = sum((parsed.get("files_by_status") or {}).values())
    publish = stats.get("publish") or {}
    mode = resolve_mode(job.resolve_info, files)
    return {
        "step": step,
        "commit": commit,
        "outcome": str(result.status.value),
        "job_s": round(job_wall - check.get("check_s", 0.0), 3),
        "job_cpu_s": round(job_cpu - check.get("check_cpu_s", 0.0), 3),
        "phases_s": dict(result.phases_s or {}),
        "phases_cpu_s": dict(job.phases_cpu),
        "resolve_mode": mode["mode"],
        "resolve_reason": mode["reason"],
        "files_resolved": mode["files_resolved"],
        "files": files,
        "files_reparsed": files - int(parsed.get("files_reused") or 0),
        "publish_mode": publish.get("mode"),
        "files_published": publish.get("files_changed"),
        "rows_published": rows_published(publish),
        "index": stats.get("incremental"),
        "vectors": type(job.embedder).__name__,
        **check,
        "load_1m": round(os.getloadavg()[0], 2),
    }


def reset(settings: Any, graph: Any, es: Any, repo_key: str) -> dict[str, Any] | None:
    """Remove what an earlier replay of the repository left (graph, indexes, parse cache,
    published state, work tree, mirror), as ``semgraph repos remove`` does, so that step 0
    is a first index."""
    from semgraph.faults import PROCESS
    from semgraph.repos import removal

    if not removal.is_known(graph, repo_key):
        return None
    report = removal.Removal(
        settings,
        graph,
        es,
        repo_key,
        job_id="replay-reset",
        requested_at=time.time(),
        faults=PROCESS,
    ).run()
    return {"graph_deleted": report.graph_deleted, "paths_deleted": len(report.paths_deleted)}


def graph_parity(repo_key: str) -> dict[str, Any]:
    """``semgraph check --graph-parity REPO --json``, as an operator runs it."""
    cmd = [sys.executable, "-m", "semgraph", "check", "--graph-parity", repo_key, "--json"]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    out: dict[str, Any] = {"command": "python " + " ".join(cmd[1:]), "rc": proc.returncode}
    try:
        out["report"] = json.loads(proc.stdout)
    except ValueError:
        out["stdout"], out["stderr"] = proc.stdout[-2000:], proc.stderr[-2000:]
    out["seconds"] = round(time.monotonic() - started, 1)
    return out


@contextmanager
def log_to(path: Path, argv: list[str], append: bool = False) -> Iterator[Callable[[str], None]]:
    """A writer of record lines to stdout and to ``path`` (the command on its first line;
    ``append``: after what the log holds, the command on a line of its own)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w") as fh:
        fh.write("$ python -m bench.push.bench_replay " + shlex.join(argv) + "\n")

        def write(text: str) -> None:
            print(text, flush=True)
            fh.write(text + "\n")
            fh.flush()

        yield write


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repo", type=Path, default=SYMPY, help="a git repository (bare or not)")
    parser.add_argument("--commits", type=int, default=200, help="pushes to replay")
    parser.add_argument(
        "--vectors", choices=("synthetic-first", "synthetic", "model"), default="synthetic-first"
    )
    parser.add_argument("--log", type=Path, default=ROOT / "bench/results/replay.log")
    parser.add_argument(
        "--summarize",
        type=Path,
        metavar="LOG",
        help="instead: print the summary of the steps a (partial) replay log holds",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep what an earlier replay left (step 0 then re-indexes or no-ops the start)",
    )
    parser.add_argument(
        "--resume-at",
        type=int,
        default=0,
        metavar="STEP",
        help="continue a stopped replay at this step (implies --keep; appends to --log; the "
        "summary covers every step the log holds)",
    )
    parser.add_argument("--work", type=Path, default=Path("/var/tmp/semgraph-replay-work"))
    args = parser.parse_args()
    if args.resume_at < 0 or args.resume_at > args.commits:
        parser.error(f"--resume-at must be between 0 and --commits ({args.commits})")
    if args.resume_at:
        args.keep = True
    if args.summarize is not None:
        logged = read_steps(args.summarize.read_text().splitlines())
        print(line("replay.summary", **summarize(logged), partial_log=str(args.summarize)))
        return

    from semgraph.config import load_settings
    from semgraph.db import connect_graph
    from semgraph.graph.schema import SCHEMA
    from semgraph.indexer.sources import repo_key_for
    from semgraph.jobs import JobKinds

    # the replay measures the incremental resolver (on by default; said here all the same)
    settings = load_settings(resolve_cache=True)
    commits = replay_commits(args.repo, args.commits)
    clone = (
        args.work / f"{args.repo.parent.name if args.repo.name == 'repo' else args.repo.name}.git"
    )
    make_clone(args.repo, clone, commits[0])
    repo_key = repo_key_for(str(clone))
    job_class = make_job_class()
    steps: list[dict[str, Any]] = []
    with (
        log_to(args.log, sys.argv[1:], append=args.resume_at > 0) as write,
        connect_graph(settings) as graph,
        Ticker() as ticker,
    ):
        graph.ensure_schema(SCHEMA)
        job_class.ticker = ticker
        write(
            line(
                "replay.repo",
                repo=str(args.repo),
                repo_key=repo_key,
                start=commits[0],
                head=commits[-1],
                pushes=len(commits) - 1,
                vectors=args.vectors,
                cpus=len(os.sched_getaffinity(0)),
                load_1m=round(os.getloadavg()[0], 2),
            )
        )
        kinds = JobKinds()  # the model and client a worker's jobs share
        es = kinds.search(settings)
        ticker.set("removing what an earlier replay left")
        removed = "kept (--keep)" if args.keep else reset(settings, graph, es, repo_key)
        write(line("replay.reset", removed=removed))
        for step, commit in enumerate(commits):
            if step < args.resume_at:
                continue
            if step == max(1, args.resume_at) and args.vectors != "synthetic":
                ticker.set("loading the embedding model (once, as a worker does)")
                kinds.embedder(settings).embed(["warm up"])
            print(
                f"[replay] step {step}/{len(commits) - 1}: {commit[:10]}",
                file=sys.stderr,
                flush=True,
            )
            steps.append(
                run_step(job_class, settings, graph, es, clone, step, commit, args.vectors, kinds)
            )
            write(line("replay.step", **steps[-1]))
        ticker.set("semgraph check --graph-parity")
        parity = graph_parity(repo_key)
        write(line("replay.parity", **parity))
        if args.resume_at:  # the steps before this run, as the log holds them
            steps = read_steps(args.log.read_text().splitlines())
        write(line("replay.summary", **summarize(steps), graph_parity_rc=parity["rc"]))


if __name__ == "__main__":
    main()
