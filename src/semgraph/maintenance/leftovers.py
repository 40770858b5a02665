"""What killed attempts leave behind: index runs still ``running`` whose attempt ended
(:func:`close_orphan_runs`) and job workdirs of no running run (:func:`gc_workdirs`).
:func:`gc_leftovers` is the maintenance pass: the runs first, so that a dead worker's
directory is collected in the same pass.
"""

from __future__ import annotations

import logging
import shutil
import time
from typing import Any

from semgraph.config import Settings
from semgraph.errors import RunStateError
from semgraph.graph.runs import RunStore
from semgraph.logs import event
from semgraph.metrics import removed
from semgraph.queue.models import JobStatus
from semgraph.queue.store import JobStore

log = logging.getLogger(__name__)


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


def gc_leftovers(settings: Settings, graph: Any) -> None:
    """The maintenance pass: close orphaned runs, then delete left-over workdirs."""
    now = time.time()
    close_orphan_runs(settings, graph, now=now)
    removed("workdir", len(gc_workdirs(settings, graph, now=now)))
