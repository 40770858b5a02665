"""Job kinds that exist only for tests. Worker subprocesses load them with
``SEMGRAPH_JOB_MODULES=tests.jobkinds`` (repository root on PYTHONPATH)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from semgraph.queue.registry import JobContext, register


def _touch(path: str, text: str) -> None:
    tmp = Path(path + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def record(ctx: JobContext) -> None:
    """Append the job id to the tally file (O_APPEND: one line per execution)."""
    ctx.checkpoint("start")
    fd = os.open(ctx.job.args["tally"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{ctx.job.id} {ctx.job.repo_key} {ctx.job.commit}\n".encode())
    finally:
        os.close(fd)
    ctx.checkpoint("done")


def block(ctx: JobContext) -> None:
    """Mark that it started (and leave a running :IndexRun), then checkpoint until released."""
    args = ctx.job.args
    ctx.graph.query(
        "test index run",
        "CREATE (:IndexRun {id: $id, repo: $repo, job_id: $job, worker_id: $w, status: 'running'})",
        id=f"run-{ctx.job.id}-{ctx.job.attempts}",
        repo=ctx.job.repo_key,
        job=ctx.job.id,
        w=ctx.worker_id,
    )
    _touch(args["marker"], str(os.getpid()))
    while not Path(args.get("release", "/nonexistent")).exists():
        ctx.checkpoint("wait")
        time.sleep(0.02)
    ctx.checkpoint("released")


def hang(ctx: JobContext) -> None:
    """Never reaches a checkpoint until released (a job that ignores cancellation)."""
    args = ctx.job.args
    _touch(args["marker"], str(os.getpid()))
    while not Path(args.get("release", "/nonexistent")).exists():
        time.sleep(0.02)


def fail(ctx: JobContext) -> None:
    ctx.checkpoint("start")
    raise RuntimeError(ctx.job.args.get("message", "boom"))


def hard_exit(ctx: JobContext) -> None:
    """Kill the whole worker process, every time (a job that crashes the process)."""
    os._exit(int(ctx.job.args.get("code", 17)))


register("test_record", record)
register("test_block", block)
register("test_hang", hang)
register("test_fail", fail)
register("test_hard_exit", hard_exit)
