"""``semgraph index`` (the main job in the foreground) and ``semgraph check``.

The module is over 300 lines because ``index`` explains its failures (a publish too large for
one transaction) and finishes progressive publish (the vectors job) in the foreground.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from pathlib import Path
from typing import Any

import typer

from semgraph.commands.console import (
    emit_json,
    env_option,
    err,
    is_verbose,
    json_option,
    out,
    settings_from,
)
from semgraph.errors import CheckoutError, GraphTooLarge, JobError

_TOO_LARGE = f"{GraphTooLarge.__name__}: "
_ROWS = re.compile(r"\((\d[\d,]*) rows")
_WRITTEN = re.compile(r"(\d[\d,]*) written before")
_REPO = re.compile(r"the graph of (\S+)")
_TX_SETTING = re.compile(
    r"((?:dbms|db)\.memory\.transaction(?:\.total)?\.max)(?: = ([\d.]+) ?([KMGT]?i?B))?"
)


def index_cmd(
    ctx: typer.Context,
    source: str = typer.Argument(..., help="Git URL (https, ssh, file://) or local path."),
    ref: str | None = env_option(
        None,
        "--ref",
        env="SEMGRAPH_INDEX_REF",
        help="Branch, tag or commit (default: the default branch).",
    ),
    force: bool = env_option(
        False, "--force", env="SEMGRAPH_INDEX_FORCE", help="Reindex even if nothing changed."
    ),
    as_json: bool = json_option("Print the run as JSON."),
) -> None:
    """Enqueue a reindex of SOURCE and run that job here until it finishes (older pending
    jobs of other repositories are left to the worker)."""
    from semgraph import jobs
    from semgraph.commands.progress import progress_printer
    from semgraph.db import connect_graph
    from semgraph.doctor import refuse_unsafe_graph
    from semgraph.graph.runs import RunStore
    from semgraph.graph.schema import SCHEMA
    from semgraph.indexer.request import ReindexArgs
    from semgraph.indexer.sources import normalize_source, repo_key_for
    from semgraph.queue import registry
    from semgraph.queue.models import JobStatus
    from semgraph.queue.store import JobStore
    from semgraph.queue.worker import Worker

    started = time.time()
    settings = settings_from(ctx)
    url = normalize_source(source)  # hostile or malformed sources fail here, before enqueue
    if url.startswith("file://") and not Path(url.removeprefix("file://")).exists():
        raise CheckoutError(f"no repository at {url.removeprefix('file://')!r}")
    repo_key = repo_key_for(source)
    with connect_graph(settings) as graph:
        refuse_unsafe_graph(graph)  # it runs a worker: the same refusal
        graph.ensure_schema(SCHEMA)
        store = JobStore(graph, settings)
        enq = store.enqueue(
            repo_key,
            now=time.time(),
            args=ReindexArgs(source=source, ref=ref, force=force).to_json(),
            ref=ref,
            source=url,
            host="cli",
        )
        err.print(f"job {enq.job_id} ({enq.outcome}) for {repo_key}", markup=False)
        jobs.register_job_kinds(
            jobs.JobKinds(
                progress=progress_printer(err.is_terminal and not as_json), foreground=True
            )
        )
        registry.load_job_modules(settings)
        worker = Worker(settings, graph, store=store)
        worker.install_signal_handlers()
        job = _run_own_job(store, worker, enq.job_id, settings, as_json)
        if err.is_terminal:
            err.print("")
        runs = [
            r for r in RunStore(graph).list(repo=repo_key, limit=20) if r.get("job_id") == job.id
        ]
        run = runs[0] if runs else None
        vectors = None
        if job.status is JobStatus.SUCCEEDED:
            vectors = _finish_vectors(store, worker, repo_key, run, settings, started, as_json)
    if job.status is not JobStatus.SUCCEEDED:
        _exit_if_too_large(job, settings, as_json, run)
    if as_json:
        emit_json({"job": job.to_json(), "run": run, "vectors": vectors})
    else:
        out.print(f"job {job.id}: {job.status.value}", markup=False)
        if run:
            _print_run(run)
        if vectors:
            for key, value in vectors.items():
                out.print(f"  {key}: {value}", markup=False)
    if job.status is not JobStatus.SUCCEEDED:
        raise typer.Exit(1)


def _run_own_job(store: Any, worker: Any, job_id: str, settings: Any, as_json: bool) -> Any:
    """Run the job ``job_id`` here (only that one) until it is terminal; a failed attempt
    that is queued for retry ends the command."""
    from semgraph.queue.models import (
        TERMINAL,
        JobStatus,
    )

    while True:
        job = store.get(job_id)
        if job is None:
            raise JobError(f"job {job_id} disappeared (purged?)")
        if job.status in TERMINAL:
            return job
        if job.status is JobStatus.PENDING and job.attempts > 0 and job.last_error:
            _exit_if_too_large(job, settings, as_json)
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


def _finish_vectors(
    store: Any,
    worker: Any,
    repo_key: str,
    run: dict[str, Any] | None,
    settings: Any,
    started: float,
    as_json: bool,
) -> dict[str, Any]:
    """Progressive publish: say when the first answer became available (graph + keywords),
    then run the repository's vectors job here (or wait for the worker that has it), so
    that the command returns when the commit is published whole."""
    from semgraph.queue.models import VECTORS_KIND, JobStatus

    stats = (run or {}).get("stats") or {}
    if isinstance(stats, str):
        stats = json.loads(stats)
    result: dict[str, Any] = {}
    published_at = stats.get("published_at")
    if isinstance(published_at, int | float):
        result["first_answer_s"] = round(published_at - started, 2)
        if not as_json:
            err.print(
                f"first answer after {published_at - started:.1f} s "
                f"(graph + keywords; vectors pending: {stats.get('vectors_pending') or 0})",
                markup=False,
            )
    while True:
        jobs = [
            j
            for status in (JobStatus.RUNNING, JobStatus.PENDING)
            for j in store.list(status=status.value, repo=repo_key, limit=10)
            if j.kind == VECTORS_KIND
        ]
        if not jobs:
            break
        done = _run_own_job(store, worker, jobs[0].id, settings, as_json)
        result["vectors_job"] = f"{done.id}: {done.status.value}"
        if done.status is not JobStatus.SUCCEEDED:
            break
    result["complete_s"] = round(time.time() - started, 2)
    return result


def too_large_line(error: str, heap_mb: int | None = None) -> str | None:
    """The one line ``semgraph index`` prints for a publish refused as too large for one
    transaction (a job error recorded as ``GraphTooLarge: ...``), or None for other errors.

    The writer's message names the repository, the rows written before the server refused
    and the limit it hit; the line keeps those and says what to raise (``heap_mb``: the
    heap of the local Neo4j when that is the server)."""
    if not error.startswith(_TOO_LARGE):
        return None
    message = " ".join(error[len(_TOO_LARGE) :].split())  # one line, whatever it held
    repo, rows = _REPO.search(message), _ROWS.search(message)
    limit, fix = _limit_and_fix(message, heap_mb)
    if repo is None or rows is None or limit is None:
        return f"semgraph index: {message}"
    count = int(rows.group(1).replace(",", ""))
    written = _WRITTEN.search(message)
    rows_text = f"{count:,} rows written before refusal"  # the writer's older message form
    if written is not None:
        done = int(written.group(1).replace(",", ""))
        rows_text = f"{count:,} rows; {done:,} written before refusal"
    return f"semgraph index: the graph of {repo.group(1)} ({rows_text}) exceeds {limit}; {fix}"


def _limit_and_fix(message: str, heap_mb: int | None) -> tuple[str | None, str]:
    """The limit a refusal message names, and what to raise."""
    heap = (
        "raise SEMGRAPH_NEO4J_HEAP_MB (local stack: transactions get 70% of the heap"
        + (f", now {heap_mb} MiB" if heap_mb else "")
        + "; then `semgraph services down` and `up`)"
    )
    if "Memgraph" in message:
        return "Memgraph --memory-limit", "raise Memgraph's --memory-limit"
    if "JVM heap" in message:
        return "the Neo4j server's JVM heap", f"{heap} or the server's -Xmx"
    found = {m.group(1): m for m in _TX_SETTING.finditer(message)}
    if len(found) != 1:
        return None, ""
    [(name, match)] = found.items()
    value = f" = {float(match.group(2)):g} {match.group(3)}" if match.group(2) else ""
    if name.endswith("total.max"):
        return f"Neo4j {name}{value}", f"{heap} or the server's {name}"
    return f"Neo4j {name}{value}", f"raise {name} on the Neo4j server"


def _exit_if_too_large(
    job: Any, settings: Any, as_json: bool, run: dict[str, Any] | None = None
) -> None:
    """Print the refusal line and exit 1 when the job's publish was refused as too large."""

    line = too_large_line(job.last_error or "", _local_heap_mb(settings))
    if line is None:
        return
    if job.status.value == "pending":
        line += f" (job {job.id} stays queued for retry, attempt {job.attempts}/{job.max_attempts})"
    if as_json:
        emit_json({"job": job.to_json(), "run": run})
    elif err.is_terminal:
        err.print("")  # end the progress line
    err.print(line, markup=False, highlight=False)
    if is_verbose():
        err.print(f"  job error: {job.last_error}", markup=False, highlight=False)
    raise typer.Exit(1)


def _local_heap_mb(settings: Any) -> int | None:
    """The heap of this state directory's local Neo4j when it runs, else None."""
    from semgraph.services import procs
    from semgraph.services.bolt import (
        BoltService,
        running_heap,
    )

    pid = BoltService(settings).pid()
    found = running_heap(procs.cmdline(pid)) if pid is not None else None
    return found[0] if found else None


def _print_run(run: dict[str, Any]) -> None:

    keys = ("id", "repo", "commit", "status", "resolution_rate", "phases_s", "error")
    for key in keys:
        if run.get(key) is not None:
            out.print(f"  {key}: {run[key]}", markup=False)


def check_cmd(
    ctx: typer.Context,
    repair: bool = env_option(
        False,
        "--repair",
        env="SEMGRAPH_CHECK_REPAIR",
        help="Finish the alias flip, or requeue the repository.",
    ),
    as_json: bool = json_option("Machine-readable output."),
    graph_parity: str | None = env_option(
        None,
        "--graph-parity",
        metavar="REPO",
        env="SEMGRAPH_CHECK_GRAPH_PARITY",
        help="Instead: compare REPO's live graph, node for node and edge for edge, with a "
        "full publish of its indexed commit; exit 1 (and alert) on any difference.",
    ),
) -> None:
    """Compare each repository's graph run id with the index behind its alias; exit 1 when
    any repository is diverged (and not repaired)."""
    from semgraph.check import check_repositories
    from semgraph.db import connect_graph, connect_search

    settings = settings_from(ctx)
    if graph_parity is not None:
        _graph_parity(settings, graph_parity, as_json)
        return
    with connect_graph(settings) as graph, contextlib.closing(connect_search(settings)) as es:
        results = check_repositories(settings, graph, es, repair=repair)
    if as_json:
        emit_json([r.to_dict() for r in results])
    else:
        if not results:
            out.print("no repositories indexed yet")
        for r in results:
            out.print(
                f"{r.repo:<30} {r.status:<9} graph={r.graph_run_id} index={r.index_run_id}"
                + (f"  {r.detail}" if r.detail else "")
                + (f"  semantic: {r.semantic}" if r.semantic not in (None, "complete") else ""),
                markup=False,
            )
    if any(r.status == "diverged" for r in results):
        raise typer.Exit(1)


def _graph_parity(settings: Any, repo: str, as_json: bool) -> None:
    from semgraph.check import graph_parity
    from semgraph.db import connect_graph

    with connect_graph(settings) as graph:
        report = graph_parity(settings, graph, repo)
    if as_json:
        emit_json(report.to_dict())
    else:
        verdict = "equal" if report.ok else "DIFFERENT"
        out.print(
            f"{repo}: graph {verdict} to a full publish of its commit ({report.live_rows} rows "
            f"in the graph, {report.model_rows} in the model; {report.only_live} only in the "
            f"graph, {report.only_model} missing)",
            markup=False,
        )
        for line in report.samples:
            out.print(f"  {line}", markup=False)
    if not report.ok:
        raise typer.Exit(1)
