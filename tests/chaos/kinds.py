"""Job kinds for the fault suite. Worker subprocesses load them with
``SEMGRAPH_JOB_MODULES=tests.chaos.kinds`` (repository root on PYTHONPATH).

``chaos_reindex`` is the real reindex pipeline with a fault at one named point, on the
job's first attempt only: ``args.kill_at`` SIGKILLs the worker there; ``args.pause_at``
writes ``<signal_dir>/<point>.reached`` and waits (bounded) for ``<signal_dir>/<point>.go``,
so the test can stop a server or cut a connection at exactly that moment.

``chaos_record`` is a short job that appends ``job_id attempt commit worker_id`` to a tally
file when it finishes, after announcing its start in ``args.started_dir``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from semgraph import faults
from semgraph.indexer.pipeline import Reindex
from semgraph.jobs import request_from_args
from semgraph.queue.registry import JobContext, register
from tests.shared_kinds import shared_embedder, shared_search

# the points a job passes, in order; "after_claim" is hooked here, the rest are fault points
# of the pipeline (reindex.<point>), the parse (parse.window) and the publish
POINTS = (
    "after_claim",
    "after_checkout",
    "mid_parse",
    "after_spill",
    "during_staging",
    "after_staging",
    "before_graph_commit",
    "after_graph_commit",
    "alias_flip",
    "after_alias_flip",
)
PAUSE_LIMIT_S = 180.0
# the points that are the graph publish's, not the pipeline's own
FAULT_POINTS = {"before_graph_commit": "publish.before_commit", "mid_parse": "parse.window"}


def _pause(signal_dir: Path, point: str) -> Callable[..., None]:
    def wait(**_: object) -> None:
        (signal_dir / f"{point}.reached").write_text(str(os.getpid()))
        deadline = time.monotonic() + PAUSE_LIMIT_S
        while not (signal_dir / f"{point}.go").exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"chaos pause at {point}: never released")
            time.sleep(0.02)

    return wait


def chaos_reindex(ctx: JobContext) -> None:
    args = ctx.job.args
    fault: Callable[..., None] | None = None
    point = ""
    if ctx.job.attempts == 1:
        if args.get("kill_at") in POINTS:
            point, fault = str(args["kill_at"]), faults.sigkill
        elif args.get("pause_at") in POINTS:
            point = str(args["pause_at"])
            fault = _pause(Path(str(args["signal_dir"])), point)
    if fault is not None and point == "after_claim":
        fault()
    armed = faults.Faults()
    if fault is not None:
        armed.arm(FAULT_POINTS.get(point, f"reindex.{point}"), fault)
    Reindex(
        ctx.settings,
        ctx.graph,
        shared_search(ctx.settings),
        request_from_args(ctx),
        checkpoint=ctx.checkpoint,
        embedder=shared_embedder(ctx.settings),
        faults=armed,
    ).run()


def chaos_record(ctx: JobContext) -> None:
    args = ctx.job.args
    ctx.checkpoint("start")
    started = Path(str(args["started_dir"])) / f"{ctx.job.id}-{ctx.job.attempts}"
    started.write_text(str(os.getpid()))
    deadline = time.monotonic() + float(args.get("work_s", 0.2))
    while time.monotonic() < deadline:  # work that reaches a checkpoint now and then
        ctx.checkpoint("work")
        time.sleep(0.01)
    line = f"{ctx.job.id} {ctx.job.attempts} {ctx.job.commit} {ctx.worker_id}\n"
    fd = os.open(str(args["tally"]), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    ctx.checkpoint("done")


register("chaos_reindex", chaos_reindex)
register("chaos_record", chaos_record)
