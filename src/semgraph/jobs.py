"""The job kinds the worker runs: ``reindex``, ``remove`` (:mod:`semgraph.repos.removal`)
and the maintenance hooks (divergence check and repair, staging-index GC, leftover workdirs
and runs, this host's caches of repositories the graph no longer knows:
:mod:`semgraph.maintenance.hostcaches`). :func:`register_job_kinds` registers them; the worker
command and ``semgraph index`` call it where the worker starts.

Job args are :class:`semgraph.indexer.request.ReindexArgs`. The embedding model and the
Elasticsearch client are made once per worker process and reused by every job it runs,
like the graph connection the worker hands each job.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from typing import Any

import elasticsearch

from semgraph.check import maintain_search
from semgraph.config import Settings
from semgraph.db import connect_search
from semgraph.errors import RunStateError
from semgraph.graph.runs import RunStore
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexArgs, ReindexRequest, ReindexResult
from semgraph.logs import event
from semgraph.maintenance import hostcaches
from semgraph.queue.models import JobStatus
from semgraph.queue.registry import JobContext, on_maintenance, register
from semgraph.queue.store import JobStore
from semgraph.repos import removal
from semgraph.search.embed import Embedder

log = logging.getLogger(__name__)

KIND = "reindex"

# Set by the foreground `semgraph index` command to draw a progress display; None elsewhere.
progress_sink: Callable[[Any], None] | None = None
last_result: ReindexResult | None = None


_EMBEDDERS: dict[tuple[str, str, int], Embedder] = {}
_SEARCH: dict[tuple[str, float], elasticsearch.Elasticsearch] = {}


def shared_embedder(settings: Settings) -> Embedder:
    """One loaded model per worker process (and per model/device/batch setting)."""
    key = (str(settings.embedding_model), settings.embedding_device, settings.embedding_batch_size)
    if key not in _EMBEDDERS:
        _EMBEDDERS[key] = Embedder(settings)
    return _EMBEDDERS[key]


def shared_search(settings: Settings) -> elasticsearch.Elasticsearch:
    """One Elasticsearch client per worker process (per URL and timeout): it keeps its
    connection pool across jobs, as the worker's Bolt driver does."""
    key = (settings.es_url, settings.es_request_timeout_s)
    if key not in _SEARCH:
        _SEARCH[key] = connect_search(settings)
    return _SEARCH[key]


def request_from_args(ctx: JobContext) -> ReindexRequest:
    return ReindexRequest.for_job(
        ReindexArgs.from_json(ctx.job.id, ctx.job.args),
        job_id=ctx.job.id,
        worker_id=ctx.worker_id,
        job_ref=ctx.job.ref,
        job_commit=ctx.job.commit,
    )


def reindex_job(ctx: JobContext) -> None:
    global last_result
    run = Reindex(
        ctx.settings,
        ctx.graph,
        shared_search(ctx.settings),
        request_from_args(ctx),
        checkpoint=ctx.checkpoint,
        progress=progress_sink,
        embedder=shared_embedder(ctx.settings),
    )
    last_result = run.run()
    parsed = last_result.stats.get("parse")
    if isinstance(parsed, dict) and isinstance(parsed.get("files_by_status"), dict):
        # the files indexed: the repository's size, recorded for the lanes
        ctx.files = sum(int(n) for n in parsed["files_by_status"].values())


def remove_job(ctx: JobContext) -> None:
    """Remove the job's repository from the graph, the index and this host's disk
    (:mod:`semgraph.repos.removal`); a retry resumes where an attempt stopped."""
    requested_at = ctx.job.args.get("requested_at")
    removal.Removal(
        ctx.settings,
        ctx.graph,
        shared_search(ctx.settings),
        ctx.job.repo_key,
        job_id=ctx.job.id,
        requested_at=float(requested_at) if isinstance(requested_at, int | float) else 0.0,
        faults=removal.faults_from_env(),
        checkpoint=ctx.checkpoint,
    ).run()


def _maintain(settings: Settings, graph: Any) -> None:
    maintain_search(settings, graph, shared_search(settings))


def gc_workdirs(settings: Settings, graph: Any, *, now: float) -> list[str]:
    """Delete job workdirs (workspace + spill) that a killed worker left under
    ``<state_dir>/jobs``: those of no running :IndexRun, older than
    ``staging_gc_min_age_s`` (a run in its checkout has no run record yet). The crash sweep
    runs first and closes a dead worker's run, so its directory is collected here."""

    root = settings.state_dir / "jobs"
    if not root.is_dir():
        return []
    running = {str(r["id"]) for r in RunStore(graph).list(status="running", limit=10_000)}
    removed: list[str] = []
    for path in sorted(root.iterdir()):
        if path.name in running:
            continue
        try:
            age = now - path.stat().st_mtime
        except OSError:
            continue
        if age < settings.staging_gc_min_age_s:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path.name)
    if removed:
        event(log, logging.INFO, "job_workdirs_deleted", count=len(removed), runs=removed[:20])
    return removed


def close_orphan_runs(settings: Settings, graph: Any, *, now: float) -> list[str]:
    """Mark ``abandoned`` every running :IndexRun whose job is no longer running: its
    attempt ended without closing the run (the graph server was unreachable when it tried).
    Runs with no job (foreground ``semgraph index``) are left alone."""

    runs = RunStore(graph)
    store = JobStore(graph, settings)
    closed: list[str] = []
    for run in runs.list(status="running", limit=10_000):
        job_id = run.get("job_id")
        if not job_id:
            continue
        job = store.get(str(job_id))
        if job is not None and job.status is JobStatus.RUNNING:
            continue
        reason = f"its job is {job.status.value if job else 'gone'}; the attempt ended"
        try:
            runs.finish(str(run["id"]), "abandoned", now, abandoned_reason=reason)
        except RunStateError:
            continue  # finished meanwhile
        closed.append(str(run["id"]))
    if closed:
        event(log, logging.WARNING, "index_runs_closed", count=len(closed), runs=closed[:20])
    return closed


def _gc_leftovers(settings: Settings, graph: Any) -> None:
    now = time.time()
    close_orphan_runs(settings, graph, now=now)
    gc_workdirs(settings, graph, now=now)


def _sweep_caches(settings: Settings, graph: Any) -> None:
    hostcaches.sweep_caches(settings, graph)


def register_job_kinds() -> None:
    """Register ``reindex`` and the maintenance hooks with the worker's registry (idempotent)."""
    register(KIND, reindex_job)
    register(removal.KIND, remove_job)
    on_maintenance(_maintain)
    on_maintenance(_gc_leftovers)
    on_maintenance(_sweep_caches)
