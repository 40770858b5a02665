"""Test-only job kinds around the real reindex pipeline. Worker subprocesses load them with
``SEMGRAPH_JOB_MODULES=tests.pipeline_kinds`` (repository root on PYTHONPATH)."""

from __future__ import annotations

from semgraph import faults
from semgraph.indexer.pipeline import Reindex
from semgraph.jobs import request_from_args
from semgraph.queue.registry import JobContext, register
from tests.shared_kinds import shared_embedder, shared_search

KILL_POINTS = (
    "after_checkout",
    "after_spill",
    "after_staging",
    "after_graph_commit",
    "after_alias_flip",
)
# inside the graph transaction: after a batch of rows, or after every row before COMMIT
PUBLISH_POINTS = ("publish.batch", "publish.before_commit")


def reindex_killed(ctx: JobContext) -> None:
    """The real reindex, SIGKILLed at ``args.kill_at`` on the first attempt only."""
    point = str(ctx.job.args.get("kill_at", ""))
    armed = faults.Faults()
    if ctx.job.attempts == 1 and point in KILL_POINTS:
        armed.arm(f"reindex.{point}", faults.sigkill)
    if ctx.job.attempts == 1 and point in PUBLISH_POINTS:
        armed.arm(point, faults.sigkill)
    Reindex(
        ctx.settings,
        ctx.graph,
        shared_search(ctx.settings),
        request_from_args(ctx),
        checkpoint=ctx.checkpoint,
        embedder=shared_embedder(ctx.settings),
        faults=armed,
    ).run()


register("reindex_killed", reindex_killed)
