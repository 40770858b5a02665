"""Head-of-line (issue 26): two workers, large first indexes holding workers, a one-file push
to each of 5 small repositories; the small pushes' push-to-searchable p50/p95 with the workers
in lanes (``any`` + ``small``) against both ``any``, in one run, as a ratio.

    python -m bench.fleet.bench_lanes [--hold-s 90] [--small 5] [--files 20]

The scale, and why: this machine has 2 cores, shared with other work. A real large first
index (20,000 files: an hour of CPU here) would hold both cores, and the small pushes would be
slow from CPU contention whatever the lanes. So each "large first index" is a placeholder job
(kind ``bench_hold``, registered by this module through ``SEMGRAPH_JOB_MODULES``) of an
unknown repository, which the lanes treat as large: it holds its worker for ``--hold-s``
seconds without using the CPU. The small pushes are real: real git repositories of
``--files`` Python files, indexed first (so their records say small), then a one-file commit
each, reindexed by the real pipeline in two real ``semgraph worker`` processes. Two large
jobs are queued first, so that with both workers in ``any`` both are taken (the case the
issue names: "a few large repositories can still occupy all of them"). Push-to-searchable is
the job's ``finished_at`` (after the alias flip) minus the time of the enqueue.
Affinity is off (``SEMGRAPH_CLAIM_AFFINITY_S=0``) to measure the lanes alone.

With ``--large-repo PATH`` the large job is real instead (``--real-only``: only that run): the
first index of ``PATH`` (a repository made by ``bench.synth.generate``, ``--large-files``
small files, generated when absent), an unknown repository, so the large lane's. Two workers,
``any`` + ``small``: the ``any`` worker takes the first index, and while it runs, ``--rounds``
rounds of one-file pushes to the small repositories go to the ``small`` worker, ``--gap-s``
apart, on the same 2 cores: this measures the lanes with the CPU contention a real first
index brings. Pushes enqueued after the first index finished are left out (and counted).

Uses the stack of ``SEMGRAPH_BOLT_URI`` / ``SEMGRAPH_ES_URL``; deletes every ``:JobQueue``
node there first. Workspaces go under ``$SEMGRAPH_STATE_DIR/bench-lanes``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time
from pathlib import Path

from bench.fleet import workers
from bench.harness.records import emit
from semgraph.config import Settings, load_settings
from semgraph.db import Graph, connect_graph
from semgraph.graph.schema import SCHEMA
from semgraph.indexer.request import ReindexArgs
from semgraph.indexer.sources import normalize_source, repo_key_for
from semgraph.queue import registry
from semgraph.queue.registry import JobContext
from semgraph.queue.store import JobStore

HOLD_KIND = "bench_hold"
DONE = {"succeeded", "failed", "quarantined", "abandoned"}


def hold(ctx: JobContext) -> None:
    """A large first index's place holder: holds the worker, not the CPU."""
    until = time.monotonic() + float(ctx.job.args.get("hold_s", 60))
    while time.monotonic() < until:
        ctx.checkpoint("hold")
        time.sleep(0.2)


registry.register(HOLD_KIND, hold)  # imported by the workers via SEMGRAPH_JOB_MODULES


def git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return out.stdout.decode().strip()


def make_small(root: Path, files: int) -> None:
    shutil.rmtree(root, ignore_errors=True)
    (root / "pkg").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "bench@example.com")
    git(root, "config", "user.name", "bench")
    for i in range(files):
        body = f"def f{i}(x):\n    return x + {i}\n\n\ndef g{i}(x):\n    return f{i}(x) * 2\n"
        (root / "pkg" / f"m{i}.py").write_text(body)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "initial")


def push(store: JobStore, root: Path, token: str) -> tuple[str, float]:
    """A one-file commit to ``root``, enqueued as its webhook would; (job id, enqueue time)."""
    (root / "pkg" / f"{token}.py").write_text(f"def {token}(x):\n    return x\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", token)
    sha = git(root, "rev-parse", "HEAD")
    args = ReindexArgs(source=str(root), ref="main").to_json()
    now = time.time()
    source = normalize_source(str(root))
    key = repo_key_for(str(root))
    result = store.enqueue(key, now=now, args=args, ref="main", commit=sha, source=source)
    return result.job_id, now


def start_workers(lanes: list[str], log_dir: Path) -> list[subprocess.Popen[bytes]]:
    env = {"SEMGRAPH_JOB_MODULES": "bench.fleet.bench_lanes"}  # registers the placeholder kind
    return workers.start_workers(lanes, log_dir, name="bench", poll_s=0.2, env=env)


def wait_jobs(store: JobStore, started: dict[str, float], timeout_s: float) -> dict[str, float]:
    """Push-to-searchable of each job: its finished_at - its enqueue time."""
    latency: dict[str, float] = {}
    deadline = time.time() + timeout_s
    while len(latency) < len(started) and time.time() < deadline:
        for job_id, t0 in started.items():
            job = store.get(job_id) if job_id not in latency else None
            if job is not None and job.status.value in DONE:
                if job.status.value != "succeeded":
                    raise SystemExit(f"job {job_id} {job.status.value}: {job.last_error}")
                latency[job_id] = float(job.finished_at or time.time()) - t0
        time.sleep(0.2)
    if len(latency) < len(started):
        raise SystemExit(f"only {len(latency)} of {len(started)} pushes done in {timeout_s}s")
    return latency


def wait_running(graph: Graph, n: int, timeout_s: float = 60) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        rows = graph.query("running", "MATCH (j:JobQueue {status: 'running'}) RETURN count(j) AS n")
        if int(rows[0]["n"]) >= n:
            return
        time.sleep(0.2)
    raise SystemExit(f"{n} jobs did not start within {timeout_s}s")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_mode(
    settings: Settings, graph: Graph, lanes: list[str], repos: list[Path], opts: argparse.Namespace
) -> list[float]:
    store = JobStore(graph, settings)
    name = "+".join(lanes)
    procs = start_workers(lanes, repos[0].parent)
    try:
        warm = {
            job: t for job, t in (push(store, r, f"warm_{name.replace('+', '_')}") for r in repos)
        }
        wait_jobs(store, warm, 600)  # the workers' embedding models loaded, records small
        holds = 0
        for i in range(2):  # two large first indexes, queued first
            key = f"bench/large-{name}-{i}"
            store.enqueue(key, now=time.time(), kind=HOLD_KIND, args={"hold_s": opts.hold_s})
            holds += 1
        # both any workers take one each; an any + small pair, only the any worker
        wait_running(graph, holds if "small" not in lanes else 1)
        time.sleep(1.0)
        token = f"push_{name.replace('+', '_')}"
        started = dict(push(store, r, f"{token}_{i}") for i, r in enumerate(repos))
        latency = sorted(wait_jobs(store, started, opts.hold_s * 3 + 600).values())
    finally:
        workers.stop_workers(procs)
        graph.query("holds", "MATCH (j:JobQueue {kind: $k}) DETACH DELETE j", k=HOLD_KIND)
    p50, p95 = pct(latency, 0.5), pct(latency, 0.95)
    print(
        f"{name:<10} push-to-searchable p50 {p50:6.1f} s  p95 {p95:6.1f} s  "
        f"all {', '.join(f'{x:.1f}' for x in latency)}"
    )
    emit(
        "lanes.mode",
        lanes=name,
        p50_s=round(p50, 1),
        p95_s=round(p95, 1),
        latency_s=[round(x, 1) for x in latency],
        hold_s=opts.hold_s,
    )
    return latency


def run_real(settings: Settings, graph: Graph, repos: list[Path], opts: argparse.Namespace) -> None:
    """Lanes ``any`` + ``small`` while a real first index of ``--large-repo`` runs."""
    large = opts.large_repo
    if not (large / ".git").is_dir():
        from bench.synth import generate

        t0 = time.perf_counter()
        generate(large, opts.large_files, seed=11, small=True)
        print(f"generated {opts.large_files} files in {time.perf_counter() - t0:.1f} s")
    files = len(git(large, "ls-files").splitlines())
    store = JobStore(graph, settings)
    procs = start_workers(["any", "small"], repos[0].parent)
    latency: list[float] = []
    after_large = 0
    try:
        warm = dict(push(store, r, "warm_real") for r in repos)
        wait_jobs(store, warm, 600)  # the models loaded, the small records say small
        key = repo_key_for(str(large))
        args = ReindexArgs(source=str(large), ref="main").to_json()
        sha = git(large, "rev-parse", "HEAD")
        enq = time.time()
        big = store.enqueue(
            key, now=enq, args=args, ref="main", commit=sha, source=normalize_source(str(large))
        ).job_id
        wait_running(graph, 1)
        print(f"first index of {files} files running; load {os.getloadavg()[0]:.2f}", flush=True)
        for rnd in range(opts.rounds):
            time.sleep(opts.gap_s)
            job = store.get(big)
            if job is None or job.status.value in DONE:
                print(f"round {rnd}: the first index is done; no more rounds", flush=True)
                break
            elapsed = time.time() - enq
            started = dict(push(store, r, f"real_{rnd}_{i}") for i, r in enumerate(repos))
            got = wait_jobs(store, started, 900)
            job = store.get(big)
            running = job is not None and job.status.value not in DONE
            values = sorted(got.values())
            if not running:
                after_large += len(values)
            else:
                latency.extend(values)
            print(
                f"round {rnd} at {elapsed:5.0f} s into the first index: "
                f"{', '.join(f'{x:.1f}' for x in values)} s; load {os.getloadavg()[0]:.2f}"
                + ("" if running else " (first index finished meanwhile: left out)"),
                flush=True,
            )
            emit(
                "lanes.round",
                round=rnd,
                large_elapsed_s=round(elapsed, 1),
                latency_s=[round(x, 1) for x in values],
                counted=running,
                load=round(os.getloadavg()[0], 2),
            )
        job = store.get(big)
        large_s = (
            round(float(job.finished_at) - enq, 1)
            if job is not None and job.finished_at and job.status.value in DONE
            else None
        )
    finally:
        workers.stop_workers(procs)
    if not latency:
        raise SystemExit("no push ran while the first index did")
    p50, p95 = pct(latency, 0.5), pct(latency, 0.95)
    print(
        f"any+small, real {files}-file first index: push-to-searchable p50 {p50:.1f} s "
        f"p95 {p95:.1f} s over {len(latency)} pushes (target p95 <= 15 s: "
        f"{'met' if p95 <= 15 else 'NOT met'}); left out {after_large}; load "
        f"{os.getloadavg()[0]:.2f}"
    )
    emit(
        "lanes.mode",
        lanes="any+small",
        p50_s=round(p50, 1),
        p95_s=round(p95, 1),
        latency_s=[round(x, 1) for x in sorted(latency)],
        large=f"real first index, {files} files",
        large_job_s=large_s,
        left_out=after_large,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hold-s", type=float, default=90.0)
    parser.add_argument("--small", type=int, default=5)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--large-repo", type=Path, help="a real first index as the large job")
    parser.add_argument("--large-files", type=int, default=20000)
    parser.add_argument("--real-only", action="store_true", help="only the --large-repo run")
    parser.add_argument("--rounds", type=int, default=3, help="push rounds (--large-repo)")
    parser.add_argument("--gap-s", type=float, default=45.0, help="between rounds (--large-repo)")
    opts = parser.parse_args()
    if opts.real_only and opts.large_repo is None:
        parser.error("--real-only needs --large-repo")
    if opts.rounds < 1 or opts.gap_s < 0 or opts.small < 1 or opts.large_files < 1:
        parser.error("--rounds, --small and --large-files must be >= 1, --gap-s >= 0")
    settings = load_settings()
    work = settings.state_dir / "bench-lanes"
    work.mkdir(parents=True, exist_ok=True)
    repos = [work / f"small-{i}" for i in range(opts.small)]
    for repo in repos:
        make_small(repo, opts.files)
    print(
        f"{opts.small} small repositories of {opts.files} files; large jobs hold "
        f"{opts.hold_s:g} s; 2 workers; load {os.getloadavg()[0]:.2f}"
    )
    with connect_graph(settings) as graph:
        graph.ensure_schema(SCHEMA)
        graph.query("reset", "MATCH (n) WHERE n:JobQueue OR n:JobDelivery DETACH DELETE n")
        if opts.large_repo is not None:
            run_real(settings, graph, repos, opts)
            if opts.real_only:
                return
        off = run_mode(settings, graph, ["any", "any"], repos, opts)
        on = run_mode(settings, graph, ["any", "small"], repos, opts)
    ratio = pct(off, 0.95) / pct(on, 0.95)
    print(
        f"p95 any+any / any+small = {ratio:.1f}x; target p95 <= 15 s with lanes: "
        f"{'met' if pct(on, 0.95) <= 15 else 'NOT met'}; load {os.getloadavg()[0]:.2f}"
    )
    emit(
        "lanes.summary",
        p95_any_s=round(pct(off, 0.95), 1),
        p95_lanes_s=round(pct(on, 0.95), 1),
        ratio=round(ratio, 1),
        hold_s=opts.hold_s,
        small=opts.small,
        files=opts.files,
    )


if __name__ == "__main__":
    main()
