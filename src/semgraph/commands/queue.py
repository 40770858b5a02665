"""Operator commands: ``semgraph enqueue``, ``semgraph jobs ...``, ``semgraph worker``.

Registered on the main app in :mod:`semgraph.cli`. Every option names its environment
variable in ``--help``. Unknown ids and invalid transitions raise semgraph errors, which the
main entry point prints as one line with a non-zero exit.

The module is over 300 lines because the queue's operator surface (enqueue, every ``jobs``
verb, the worker and its probe) reads as one command group.
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

from semgraph.commands.console import emit_json, out, settings_from
from semgraph.errors import ConfigError, JobNotFound, QueueInputError, SemgraphError

if TYPE_CHECKING:
    from semgraph.db import Graph
    from semgraph.queue.models import Job
    from semgraph.queue.store import JobStore

jobs_app = typer.Typer(
    rich_markup_mode=None, help="Inspect and steer the job queue.", no_args_is_help=True
)

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``15m``, ``12h``, ``7d``, ``2w`` -> seconds."""
    match = _DURATION_RE.match(text or "")
    if not match:
        raise ConfigError(f"invalid duration {text[:50]!r}: use e.g. 90s, 15m, 12h, 7d")
    value = float(match.group(1)) * _UNIT_S[match.group(2)]
    if value > 100 * 365 * 86400:
        raise ConfigError(f"duration {text[:50]!r} is longer than 100 years")
    return value


@contextmanager
def job_store(ctx: typer.Context) -> Iterator[JobStore]:
    from semgraph.db import connect_graph
    from semgraph.queue.store import JobStore

    settings = settings_from(ctx)
    with connect_graph(settings) as graph:
        yield JobStore(graph, settings)


def _fmt_time(ts: float | None) -> str:
    if ts is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ts))


def _job_line(job: Job) -> str:
    commit = (job.commit or "-")[:12]
    return (
        f"{job.id}  {job.status.value:<11} {job.kind:<10} {job.repo_key}  commit={commit} "
        f"prio={job.priority} attempts={job.attempts}/{job.max_attempts} "
        f"crashes={job.crash_count}/{job.max_crashes} created={_fmt_time(job.created_at)}"
    )


def _get(store: JobStore, job_id: str) -> Job:
    job = store.get(job_id)
    if job is None:
        raise JobNotFound(f"no job with id {job_id[:100]!r}")
    return job


def bad_input(exc: SemgraphError) -> typer.BadParameter:
    return typer.BadParameter(str(exc))


# -- enqueue ------------------------------------------------------------------------------------


# -- jobs ---------------------------------------------------------------------------------------


@jobs_app.command("list")
def list_cmd(
    ctx: typer.Context,
    status: str | None = typer.Option(
        None, "--status", envvar="SEMGRAPH_JOBS_STATUS", help="Only this status."
    ),
    repo: str | None = typer.Option(
        None, "--repo", envvar="SEMGRAPH_JOBS_REPO", help="Only this repo."
    ),
    limit: int = typer.Option(
        100, "--limit", envvar="SEMGRAPH_JOBS_LIMIT", help="At most this many, newest first."
    ),
    as_json: bool = typer.Option(False, "--json", envvar="SEMGRAPH_JSON", help="JSON output."),
) -> None:
    """List jobs, newest first."""
    with job_store(ctx) as store:
        try:
            jobs = store.list(status=status, repo=repo, limit=limit)
        except QueueInputError as exc:
            raise bad_input(exc) from exc
    if as_json:
        emit_json([j.to_json() for j in jobs])
        return
    for job in jobs:
        out.print(_job_line(job), markup=False)
    if not jobs:
        out.print("no jobs")


@jobs_app.command("show")
def show_cmd(
    ctx: typer.Context,
    job_id: str = typer.Argument(..., help="Job id."),
    as_json: bool = typer.Option(False, "--json", envvar="SEMGRAPH_JSON", help="JSON output."),
) -> None:
    """Show one job with its error history."""
    with job_store(ctx) as store:
        job = _get(store, job_id)
    if as_json:
        emit_json(job.to_json())
        return
    out.print(_job_line(job), markup=False)
    for name in ("ref", "worker_id", "run_after", "claimed_at", "finished_at", "last_error"):
        value = getattr(job, name)
        if name in {"run_after", "claimed_at", "finished_at"}:
            value = _fmt_time(value)
        out.print(f"  {name:<12} {value if value is not None else '-'}", markup=False)
    out.print(f"  coalesced    {job.coalesced_count}", markup=False)
    if job.cancel_reason:
        out.print(f"  abandon requested: {job.cancel_reason}", markup=False)
    out.print(f"  errors ({len(job.errors)}):", markup=False)
    for entry in job.errors:
        out.print(
            f"    {_fmt_time(entry.at)} attempt {entry.attempt} {entry.kind}: {entry.message}",
            markup=False,
        )
    if job.history:
        out.print(f"  history ({len(job.history)}):", markup=False)
        for note in job.history:
            out.print(f"    {_fmt_time(note.at)} {note.what}", markup=False)


@jobs_app.command("requeue")
def requeue_cmd(ctx: typer.Context, job_id: str = typer.Argument(..., help="Job id.")) -> None:
    """Put a failed, quarantined or abandoned job back in the queue with fresh counters."""
    with job_store(ctx) as store:
        job = store.requeue(job_id, now=time.time())
    out.print(f"requeued {job.id} ({job.repo_key}): {job.status.value}", markup=False)


@jobs_app.command("abandon")
def abandon_cmd(
    ctx: typer.Context,
    job_id: str = typer.Argument(..., help="Job id."),
    reason: str = typer.Option(
        ...,
        "--reason",
        envvar="SEMGRAPH_ABANDON_REASON",
        help="Why (recorded on the job).",
    ),
) -> None:
    """Abandon a pending job now, or ask a running job's worker to stop it."""
    from semgraph.queue.models import JobStatus

    with job_store(ctx) as store:
        try:
            job = store.abandon(job_id, now=time.time(), reason=reason)
        except QueueInputError as exc:
            raise bad_input(exc) from exc
    if job.status is JobStatus.RUNNING:
        out.print(
            f"abandon requested for {job.id}: its worker stops it at the next checkpoint",
            markup=False,
        )
    else:
        out.print(f"abandoned {job.id}", markup=False)


@jobs_app.command("purge")
def purge_cmd(
    ctx: typer.Context,
    older_than: str = typer.Option(
        ...,
        "--older-than",
        envvar="SEMGRAPH_PURGE_OLDER_THAN",
        help="e.g. 7d, 12h, 30m.",
    ),
) -> None:
    """Delete terminal jobs (succeeded, failed, quarantined, abandoned) older than this."""
    seconds = parse_duration(older_than)
    with job_store(ctx) as store:
        n = store.purge(older_than_s=seconds, now=time.time())
    out.print(f"purged {n} jobs", markup=False)


@jobs_app.command("stats")
def stats_cmd(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", envvar="SEMGRAPH_JSON", help="JSON output."),
) -> None:
    """Counts by status, the oldest pending job's age, live workers."""
    with job_store(ctx) as store:
        stats = store.stats()
    if as_json:
        emit_json(stats.to_json())
        return
    for status, n in stats.counts.items():
        out.print(f"{status:<12} {n}", markup=False)
    age = stats.oldest_pending_age_s
    out.print(f"oldest pending age: {'-' if age is None else f'{age:.1f}s'}", markup=False)
    wait = stats.next_eligible_in_s
    out.print(f"next eligible in: {'-' if wait is None else f'{wait:.1f}s'}", markup=False)
    out.print(f"workers alive: {stats.workers_alive}", markup=False)


# -- worker -------------------------------------------------------------------------------------


def worker_cmd(
    ctx: typer.Context,
    once: bool = typer.Option(
        False,
        "--once",
        envvar="SEMGRAPH_WORKER_ONCE",
        help="Run at most one job, then exit.",
    ),
    max_jobs: int | None = typer.Option(
        None,
        "--max-jobs",
        min=1,
        envvar="SEMGRAPH_WORKER_MAX_JOBS",
        help="Exit after this many jobs.",
    ),
    idle_exit_s: float | None = typer.Option(
        None,
        "--idle-exit-s",
        min=0,
        envvar="SEMGRAPH_WORKER_IDLE_EXIT_S",
        help="Exit after this many seconds without a claimable job.",
    ),
    lane: str | None = typer.Option(
        None, help="Claim jobs of small or large repositories, or any (env SEMGRAPH_WORKER_LANE)."
    ),
    role: str | None = typer.Option(
        None,
        help="all: every job kind; push: reindex and remove, never loads the embedding model; "
        "embed: vectors jobs only (env SEMGRAPH_WORKER_ROLE).",
    ),
) -> None:
    """Run queued jobs one at a time until stopped (SIGTERM/SIGINT: graceful stop)."""
    from prometheus_client import start_http_server

    from semgraph.db import connect_graph
    from semgraph.doctor import refuse_unsafe_graph
    from semgraph.jobs import register_job_kinds
    from semgraph.queue import registry
    from semgraph.queue.lanes import parse_lane
    from semgraph.queue.models import ROLES
    from semgraph.queue.worker import Worker, check_settings

    settings = settings_from(ctx)
    if lane is not None:
        settings = settings.model_copy(update={"worker_lane": parse_lane(lane).value})
    if role is not None:
        if role.strip().lower() not in ROLES:
            raise ConfigError(f"unknown role {role[:50]!r}: one of {', '.join(ROLES)} (--role)")
        settings = settings.model_copy(update={"worker_role": role.strip().lower()})
    check_settings(settings)
    register_job_kinds()
    registry.load_job_modules(settings)
    if settings.worker_metrics_port:
        # loopback unless configured (ops/k8s sets 0.0.0.0 behind its NetworkPolicy)
        start_http_server(settings.worker_metrics_port, addr=settings.worker_metrics_host)
    graph: Graph
    with connect_graph(settings) as graph:
        refuse_unsafe_graph(graph)  # before it registers or claims anything
        worker = Worker(settings, graph)
        worker.install_signal_handlers()
        code = worker.run(once=once, max_jobs=max_jobs, idle_exit_s=idle_exit_s)
    raise typer.Exit(code)


def probe_worker_cmd(
    ctx: typer.Context,
    max_age_s: float = typer.Option(
        120.0, "--max-age-s", min=1, help="Oldest acceptable heartbeat, in seconds."
    ),
    name: str | None = typer.Option(
        None, help="Worker name (default: SEMGRAPH_WORKER_NAME, else this host's name)."
    ),
) -> None:
    """Exit 1 unless this host's worker heartbeat recently (Kubernetes liveness probe)."""
    from semgraph.db import connect_graph
    from semgraph.queue.workers import probe_worker

    settings = settings_from(ctx)
    worker = name or settings.worker_name or socket.gethostname()
    with connect_graph(settings) as graph:
        result = probe_worker(graph, worker, now=time.time(), max_age_s=max_age_s)
    out.print(result.detail, markup=False)
    if not result.alive:
        raise typer.Exit(1)
