"""An organisation's first day (issue 26): a backlog of public repositories of mixed sizes
and languages, all enqueued at once, first-indexed by 1 and then 2 real ``semgraph worker``
processes; wall time of each, and what limits it on this machine.

    python -m bench.fleet.bench_backlog [--repos 40] [--modes any,any+any] [--cache DIR]
        [--worker-code BASELINE_TREE] [--skip-registry mirror]

The repositories are the pinned trees of ``bench/fleet/backlog_sources.py`` (PyPI wheels, npm
tarballs, Go modules through the proxy, the local git mirrors), each a local git repository
of one commit, fetched once into ``--cache`` (not timed). ``--repos N`` takes the first N of
an interleaving of the list (sizes and registries mixed). One run per mode: a mode is the
lanes of its workers joined by ``+`` (``any`` is one worker, ``any+any`` two, ``small+any``
a small-lane and an any-lane worker).

Each run starts from nothing of the one before: every repository is removed as ``semgraph
repos remove`` does (graph, ``:IndexRun`` history, search indexes, host caches), every
``:JobQueue`` / ``:JobDelivery`` node is deleted, every Elasticsearch index of the bench's
prefix (``SEMGRAPH_SEARCH_INDEX_PREFIX=backlog``, the shared vector store
``backlog_vectors`` with it) is deleted, and the workers get an empty state directory (parse
cache, resolution cache, mirrors, work trees). The exported embedding model
(``SEMGRAPH_MODELS_DIR``) is kept: a once-per-machine cost. Then all the repositories are
enqueued at once (as their pushes would: ``JobStore.enqueue`` with a local source), the
workers are started, and the run ends when every job succeeded.

``--worker-code`` runs the workers on another tree's code (a baseline's ``git worktree``),
for a comparison in one session. With progressive publish (issue 42) the reindexes end when
every repository answers (graph + keywords) and ``vectors`` jobs follow: ``wall_s`` is the
former, ``complete_s`` when the last vectors job is done (the same for a code without them).

Measured: wall time (workers started to the last job finished), per job its claim wait
(claimed - enqueued), its duration (finished - claimed), push-to-searchable (finished -
enqueued; p50/p95) and its ``:IndexRun`` phases (wall seconds, summed over the jobs by
phase: where the workers spent their time); each worker's peak RSS (its own high-water mark
and its process tree's, sampled) and CPU seconds; the servers' CPU seconds; the machine's
busy share and load average. Uses the stack of ``SEMGRAPH_BOLT_URI`` / ``SEMGRAPH_ES_URL``
and deletes every ``:JobQueue`` node there. The workers' state goes under
``$SEMGRAPH_STATE_DIR/bench-backlog``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.fleet import workers
from bench.fleet.backlog_probe import Probe, Tree
from bench.fleet.backlog_sources import CACHE, SOURCES, Source, fetch_all
from bench.harness.records import emit
from semgraph.config import Settings, load_settings
from semgraph.db import Graph, connect_graph, connect_search
from semgraph.faults import PROCESS
from semgraph.graph.runs import RunStore
from semgraph.graph.schema import SCHEMA
from semgraph.indexer.request import ReindexArgs
from semgraph.indexer.sources import normalize_source, repo_key_for
from semgraph.queue.models import VECTORS_KIND
from semgraph.queue.store import JobStore
from semgraph.repos import removal

PREFIX = "backlog"
DONE = {"succeeded", "failed", "quarantined", "abandoned"}


def interleave(sources: list[Source]) -> list[Source]:
    """The sources with registries mixed (one of each in turn), so a prefix is mixed too."""
    groups: dict[str, list[Source]] = {}
    for src in sources:
        groups.setdefault(src.registry, []).append(src)
    out: list[Source] = []
    while any(groups.values()):
        for group in groups.values():
            if group:
                out.append(group.pop(0))
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def git_head(repo: Path) -> str:
    out = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True)
    return out.stdout.decode().strip()


def host_settings(settings: Settings, host: Path) -> Settings:
    return settings.model_copy(update={"state_dir": host, "search_index_prefix": PREFIX})


def reset(settings: Settings, graph: Graph, keys: list[str]) -> dict[str, Any]:
    """Remove every repository of the backlog and everything a run left (see the module)."""
    es = connect_search(settings)
    removed = 0
    try:
        for key in keys:
            if removal.is_known(graph, key):
                removal.Removal(
                    settings,
                    graph,
                    es,
                    key,
                    job_id="backlog-reset",
                    requested_at=time.time(),
                    faults=PROCESS,
                ).run()
                removed += 1
        graph.query("reset", "MATCH (n) WHERE n:JobQueue OR n:JobDelivery DETACH DELETE n")
        names = sorted(es.indices.get(index=f"{PREFIX}*", expand_wildcards="all"))
        for name in names:
            es.indices.delete(index=name, ignore_unavailable=True)
    finally:
        es.close()
    shutil.rmtree(settings.state_dir, ignore_errors=True)
    settings.state_dir.mkdir(parents=True)
    return {"removed": removed, "indexes_deleted": len(names)}


def enqueue_all(store: JobStore, repos: list[dict[str, Any]]) -> dict[str, tuple[str, float]]:
    """One push per repository, all at once; repo name -> (job id, enqueue time)."""
    jobs = {}
    for info in repos:
        path = str(info["path"])
        sha = git_head(Path(path))
        args = ReindexArgs(source=path, ref="main", commit=sha).to_json()
        now = time.time()
        result = store.enqueue(
            repo_key_for(path),
            now=now,
            args=args,
            ref="main",
            commit=sha,
            source=normalize_source(path),
            host="bench-backlog",
        )
        jobs[str(info["name"])] = (result.job_id, now)
    return jobs


def start_workers(
    lanes: list[str], host: Path, log_dir: Path, code: Path | None = None
) -> list[subprocess.Popen[bytes]]:
    env = {"SEMGRAPH_STATE_DIR": str(host), "SEMGRAPH_SEARCH_INDEX_PREFIX": PREFIX}
    if code is not None:  # the workers run another tree's code (a baseline)
        env["PYTHONPATH"] = str(code / "src")
    return workers.start_workers(lanes, log_dir, name="backlog", poll_s=0.5, env=env)


def wait_follow_ons(store: JobStore, probe: Probe, timeout_s: float) -> float:
    """Progressive publish: wait until no ``vectors`` job is pending or running (the
    reindexes published graph + keywords; these finish the commits); when it was so."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = [
            j
            for status in ("pending", "running")
            for j in store.list(status=status, limit=1000)
            if j.kind == VECTORS_KIND
        ]
        if not left:
            return time.time()
        for job in store.list(status="failed", limit=1000) + store.list(status="quarantined"):
            if job.kind == VECTORS_KIND:
                raise SystemExit(f"vectors job {job.id} {job.status.value}: {job.last_error}")
        if time.monotonic() > deadline:
            raise SystemExit(f"{len(left)} vectors jobs still open after {timeout_s:.0f} s")
        probe.sample()
        time.sleep(1.0)


def server_pids(settings: Settings) -> dict[str, int]:
    pids = {}
    for name in ("neo4j", "elasticsearch"):
        with contextlib.suppress(OSError, ValueError):
            pids[name] = int((settings.state_dir / "run" / f"{name}.pid").read_text().strip())
    return pids


def wait_all(
    store: JobStore, jobs: dict[str, tuple[str, float]], probe: Probe, timeout_s: float
) -> dict[str, Any]:
    """Poll until every job is done (sampling the probe); job id -> its ``Job``."""
    done: dict[str, Any] = {}
    deadline = time.monotonic() + timeout_s
    last_poll = last_print = started = time.monotonic()
    while len(done) < len(jobs):
        if time.monotonic() - last_print >= 60:
            last_print = time.monotonic()
            print(
                f"  {last_print - started:.0f} s: {len(done)} of {len(jobs)} done, "
                f"load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
        if time.monotonic() > deadline:
            raise SystemExit(f"only {len(done)} of {len(jobs)} jobs done in {timeout_s:.0f} s")
        probe.sample()
        if time.monotonic() - last_poll >= 2.0:
            last_poll = time.monotonic()
            for job_id, _ in jobs.values():
                if job_id in done:
                    continue
                job = store.get(job_id)
                if job is not None and job.status.value in DONE:
                    if job.status.value != "succeeded":
                        raise SystemExit(f"job {job_id} {job.status.value}: {job.last_error}")
                    done[job_id] = job
        time.sleep(0.5)
    return done


def _json(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        value = json.loads(value or "{}")
    return value if isinstance(value, dict) else {}


def job_rows(
    graph: Graph, repos: list[dict[str, Any]], jobs: dict[str, tuple[str, float]], done: Any
) -> list[dict[str, Any]]:
    runs = RunStore(graph)
    rows = []
    for info in repos:
        job_id, enqueued = jobs[str(info["name"])]
        job = done[job_id]
        run = next(
            (
                r
                for r in runs.list(repo=job.repo_key, limit=20)
                if r.get("job_id") == job_id and r.get("status") == "succeeded"
            ),
            {},
        )
        stats = _json(run.get("stats"))
        index = stats.get("index") or {}
        rows.append(
            {
                "repo": info["name"],
                "files": info["files"],
                "worker": job.worker_id,
                "claim_wait_s": round(float(job.claimed_at or enqueued) - enqueued, 1),
                "job_s": round(float(job.finished_at or 0) - float(job.claimed_at or 0), 1),
                "push_to_searchable_s": round(float(job.finished_at or 0) - enqueued, 1),
                "finished_at": float(job.finished_at or 0),
                "chunks": index.get("chunks"),
                "embedded": index.get("embedded"),
                "phases_s": {k: round(float(v), 2) for k, v in _json(run.get("phases_s")).items()},
                # inside embed_index: the model, the bulk load, the shared vector store
                "index_s": {
                    k.removesuffix("_seconds"): round(float(v), 2)
                    for k, v in index.items()
                    if k.endswith("_seconds") and isinstance(v, int | float)
                },
            }
        )
    return rows


def phase_sums(rows: list[dict[str, Any]]) -> dict[str, float]:
    sums: dict[str, float] = {}
    for row in rows:
        for name, secs in row["phases_s"].items():
            sums[name] = sums.get(name, 0.0) + secs
        for name, secs in row["index_s"].items():
            sums[f"embed_index.{name}"] = sums.get(f"embed_index.{name}", 0.0) + secs
    return {k: round(v, 1) for k, v in sorted(sums.items(), key=lambda kv: -kv[1])}


def limit_text(mode: dict[str, Any]) -> str:
    """What limited the run, read from its own figures."""
    sums = mode["phase_sum_s"]
    phases = {k: v for k, v in sums.items() if "." not in k}
    total = sum(phases.values()) or 1.0
    top = sorted(phases.items(), key=lambda kv: -kv[1])[:3]
    share = ", ".join(f"{k} {100 * v / total:.0f} %" for k, v in top)
    inner = sums.get("embed_index.embed", 0.0), sums.get("embed_index.bulk", 0.0)
    m = mode["machine"]
    cpu_total = m["machine_cpu_s"] or 1.0
    servers = sum(m["servers_cpu_s"].values())
    wall = m["wall_s"] or 1.0
    return (
        f"job time (wall, summed over the jobs) by phase: {share} (of embed_index: the model "
        f"{inner[0]:.0f} s, the bulk load {inner[1]:.0f} s); the workers used "
        f"{m['workers_cpu_s']:.0f} CPU s in {wall:.0f} s ({m['workers_cpu_s'] / wall:.2f} "
        f"cores on average), the servers {servers:.0f} CPU s; "
        f"the machine's CPUs were {m['machine_busy_pct']} % busy "
        f"({m['cores']} cores): workers {100 * m['workers_cpu_s'] / cpu_total:.0f} %, "
        f"servers {100 * servers / cpu_total:.0f} %, other processes "
        f"{100 * m['other_cpu_s'] / cpu_total:.0f} % of the CPU seconds"
    )


def run_mode(
    settings: Settings, graph: Graph, lanes: list[str], repos: list[dict[str, Any]], opts: Any
) -> dict[str, Any]:
    name = "+".join(lanes)
    host = settings.state_dir / "bench-backlog" / "host"
    hs = host_settings(settings, host)
    # every repository of the list, not only this run's: an earlier run of more of them
    # leaves repositories whose search indexes the reset deletes (the worker's repair pass
    # would then queue their reindex ahead of this run's jobs)
    keys = [repo_key_for(str(opts.cache / src.slug)) for src in SOURCES]
    cleared = reset(hs, graph, keys)
    load0 = os.getloadavg()[0]
    print(f"\n== {name}: {len(lanes)} worker(s); reset {cleared}; load {load0:.2f}", flush=True)
    store = JobStore(graph, hs)
    jobs = enqueue_all(store, repos)
    logs = settings.state_dir / "bench-backlog" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    started = time.time()
    procs = start_workers(lanes, host, logs, opts.worker_code)
    probe = Probe(
        [Tree(f"{lane}-{i}", p.pid) for i, (lane, p) in enumerate(zip(lanes, procs, strict=True))],
        server_pids(settings),
    )
    try:
        done = wait_all(store, jobs, probe, opts.timeout_s)
        complete_at = wait_follow_ons(store, probe, opts.timeout_s)
        machine = probe.summary()
    finally:
        workers.stop_workers(procs)
    rows = job_rows(graph, repos, jobs, done)
    wall = max(r["finished_at"] for r in rows) - started
    for row in rows:
        emit("backlog.job", mode=name, **{k: v for k, v in row.items() if k != "finished_at"})
    p2s = [r["push_to_searchable_s"] for r in rows]
    waits = [r["claim_wait_s"] for r in rows]
    mode = {
        "mode": name,
        "workers": len(lanes),
        "repos": len(rows),
        "files": sum(int(r["files"]) for r in rows),
        "chunks": sum(int(r["chunks"] or 0) for r in rows),
        "embedded": sum(int(r["embedded"] or 0) for r in rows),
        # every reindex done: each repository answers (graph + keywords; everything for a
        # code without progressive publish); complete: the last vectors job done too
        "wall_s": round(wall, 1),
        "complete_s": round(max(complete_at - started, wall), 1),
        "code": str(opts.worker_code or "this tree"),
        "first_claim_s": round(min(w for w in waits), 1),
        "p50_s": round(pct(p2s, 0.5), 1),
        "p95_s": round(pct(p2s, 0.95), 1),
        "claim_wait_p50_s": round(pct(waits, 0.5), 1),
        "claim_wait_p95_s": round(pct(waits, 0.95), 1),
        "job_sum_s": round(sum(r["job_s"] for r in rows), 1),
        "phase_sum_s": phase_sums(rows),
        "machine": machine,
        "load_1m_start": round(load0, 2),
    }
    mode["limit"] = limit_text(mode)
    emit("backlog.mode", **mode)
    per_worker = ", ".join(
        f"{w['name']} peak {w['peak_rss_mib']} MiB (tree {w['peak_tree_rss_mib']}), "
        f"CPU {w['cpu_s']} s"
        for w in machine["workers"]
    )
    print(
        f"{name}: wall {mode['wall_s']} s (complete {mode['complete_s']} s; code "
        f"{mode['code']}) for {mode['repos']} repositories ({mode['files']} "
        f"files, {mode['chunks']} chunks, {mode['embedded']} embedded); push-to-searchable "
        f"p50 {mode['p50_s']} s p95 {mode['p95_s']} s; claim wait p50 "
        f"{mode['claim_wait_p50_s']} s p95 {mode['claim_wait_p95_s']} s\n  {per_worker}\n"
        f"  phases summed over the jobs (wall s): {mode['phase_sum_s']}\n"
        f"  machine: {machine}\n  limit: {mode['limit']}",
        flush=True,
    )
    return mode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=int, default=len(SOURCES))
    parser.add_argument("--modes", default="any,any+any", help="lanes per run, e.g. any,any+any")
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--timeout-s", type=float, default=3600.0)
    parser.add_argument(
        "--worker-code", type=Path, default=None, help="run the workers on this tree's code"
    )
    parser.add_argument(
        "--skip-registry", default="", help="leave these registries out (e.g. mirror)"
    )
    opts = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    settings = load_settings()
    skipped = set(filter(None, opts.skip_registry.split(",")))
    sources = interleave([s for s in SOURCES if s.registry not in skipped])[: opts.repos]
    repos = fetch_all(sources, opts.cache)
    for info in repos:
        emit(
            "backlog.source",
            **{k: info[k] for k in ("name", "registry", "version", "files", "code_files")},
            language=info["language"],
            code_lines=info["code_lines"],
        )
    print(
        f"{len(repos)} repositories, {sum(int(r['files']) for r in repos)} files "
        f"({sum(int(r['code_lines']) for r in repos)} lines of code); load "
        f"{os.getloadavg()[0]:.2f}; {os.cpu_count()} cores",
        flush=True,
    )
    modes = []
    with connect_graph(settings) as graph:
        graph.ensure_schema(SCHEMA)
        for lanes in opts.modes.split(","):
            modes.append(run_mode(settings, graph, lanes.split("+"), repos, opts))
    one = next((m for m in modes if m["workers"] == 1), None)
    for m in modes:
        if one is not None and m is not one:
            ratio = m["wall_s"] / one["wall_s"]
            print(f"wall {m['mode']} / {one['mode']} = {ratio:.2f}", flush=True)
            emit(
                "backlog.summary",
                mode=m["mode"],
                baseline=one["mode"],
                wall_s=m["wall_s"],
                baseline_wall_s=one["wall_s"],
                ratio=round(ratio, 2),
                p95_s=m["p95_s"],
                baseline_p95_s=one["p95_s"],
                repos=m["repos"],
            )


if __name__ == "__main__":
    main()
