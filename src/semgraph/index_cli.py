"""``semgraph index`` (the main job in the foreground) and ``semgraph check``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer

from semgraph.errors import JobError


def _progress_printer(live: bool) -> Any:
    """A progress sink: a one-line live display on a terminal, nothing otherwise (the
    pipeline's structured logs carry the same facts)."""
    if not live:
        return None
    from semgraph.cli import err

    def show(p: Any) -> None:
        rate = p.files_done / p.elapsed_s if p.elapsed_s > 0 else 0.0
        total = p.files_total
        seen = p.files_done + p.files_skipped
        eta = ""
        if total and rate > 0:
            eta = f", ETA {max(total - seen, 0) / rate:.0f}s"
        done = f"{seen}/{total}" if total else f"{seen}"
        err.print(
            f"\r  parse: {done} files, {p.files_failed} failed, {rate:.0f} files/s{eta}   ",
            end="",
            markup=False,
            highlight=False,
        )

    return show


def index_cmd(
    ctx: typer.Context,
    source: str = typer.Argument(..., help="Git URL (https, ssh, file://) or local path."),
    ref: str | None = typer.Option(
        None,
        "--ref",
        envvar="SEMGRAPH_INDEX_REF",
        show_envvar=True,
        help="Branch, tag or commit (default: the default branch).",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        envvar="SEMGRAPH_INDEX_FORCE",
        show_envvar=True,
        help="Reindex even if nothing changed.",
    ),
    as_json: bool = typer.Option(
        False, "--json", envvar="SEMGRAPH_JSON", show_envvar=True, help="Print the run as JSON."
    ),
) -> None:
    """Enqueue a reindex of SOURCE and run that job here until it finishes (older pending
    jobs of other repositories are left to the worker)."""
    from semgraph.cli import emit_json, err, out, settings_from
    from semgraph.db import connect_graph
    from semgraph.errors import CheckoutError
    from semgraph.graph.runs import RunStore
    from semgraph.graph.schema import SCHEMA
    from semgraph.indexer import jobs
    from semgraph.indexer.checkout import normalize_source, repo_key_for
    from semgraph.queue import registry
    from semgraph.queue.models import TERMINAL, JobStatus
    from semgraph.queue.store import JobStore
    from semgraph.queue.worker import Worker

    settings = settings_from(ctx)
    url = normalize_source(source)  # hostile or malformed sources fail here, before enqueue
    if url.startswith("file://") and not Path(url.removeprefix("file://")).exists():
        raise CheckoutError(f"no repository at {url.removeprefix('file://')!r}")
    repo_key = repo_key_for(source)
    with connect_graph(settings) as graph:
        graph.ensure_schema(SCHEMA)
        store = JobStore(graph, settings)
        enq = store.enqueue(
            repo_key, now=time.time(), args={"source": source, "ref": ref, "force": force}, ref=ref
        )
        err.print(f"job {enq.job_id} ({enq.outcome}) for {repo_key}", markup=False)
        registry.load_job_modules(settings)
        jobs.progress_sink = _progress_printer(err.is_terminal and not as_json)
        worker = Worker(settings, graph, store=store)
        worker.install_signal_handlers()
        while True:
            job = store.get(enq.job_id)
            if job is None:
                raise JobError(f"job {enq.job_id} disappeared (purged?)")
            if job.status in TERMINAL:
                break
            if job.status is JobStatus.PENDING and job.attempts > 0 and job.last_error:
                raise JobError(
                    f"job {job.id} failed (attempt {job.attempts}/{job.max_attempts}) and is "
                    f"queued for retry: {job.last_error}"
                )
            if job.status is JobStatus.RUNNING:
                time.sleep(settings.poll_interval_s)  # another worker has it
                continue
            done = worker.jobs_done
            worker.run(once=True, job_id=job.id)  # only this job: older ones wait for a worker
            if worker.jobs_done == done:  # not claimable yet (its repository is busy)
                time.sleep(settings.poll_interval_s)
        if err.is_terminal:
            err.print("")
        runs = [
            r for r in RunStore(graph).list(repo=repo_key, limit=20) if r.get("job_id") == job.id
        ]
    run = runs[0] if runs else None
    if as_json:
        emit_json({"job": job.to_json(), "run": run})
    else:
        out.print(f"job {job.id}: {job.status.value}", markup=False)
        if run:
            _print_run(run)
    if job.status is not JobStatus.SUCCEEDED:
        raise typer.Exit(1)


def _print_run(run: dict[str, Any]) -> None:
    from semgraph.cli import out

    keys = ("id", "repo", "commit", "status", "resolution_rate", "phases_s", "error")
    for key in keys:
        if run.get(key) is not None:
            out.print(f"  {key}: {run[key]}", markup=False)


def check_cmd(
    ctx: typer.Context,
    repair: bool = typer.Option(
        False,
        "--repair",
        envvar="SEMGRAPH_CHECK_REPAIR",
        show_envvar=True,
        help="Finish the alias flip, or requeue the repository.",
    ),
    as_json: bool = typer.Option(
        False, "--json", envvar="SEMGRAPH_JSON", show_envvar=True, help="Machine-readable output."
    ),
) -> None:
    """Compare each repository's graph run id with the index behind its alias; exit 1 when
    any repository is diverged (and not repaired)."""
    from semgraph.check import check_repositories
    from semgraph.cli import emit_json, out, settings_from
    from semgraph.db import connect_graph

    settings = settings_from(ctx)
    with connect_graph(settings) as graph:
        results = check_repositories(settings, graph, repair=repair)
    if as_json:
        emit_json([r.to_dict() for r in results])
    else:
        if not results:
            out.print("no repositories indexed yet")
        for r in results:
            out.print(
                f"{r.repo:<30} {r.status:<9} graph={r.graph_run_id} index={r.index_run_id}"
                + (f"  {r.detail}" if r.detail else ""),
                markup=False,
            )
    if any(r.status == "diverged" for r in results):
        raise typer.Exit(1)
