"""Registers the ``reindex`` job kind with the worker's registry.

Job args: ``{"source": URL or local path, "ref": optional ref, "commit": optional sha,
"force": optional bool}``. The embedding model is loaded once per worker process and reused
by every job it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from semgraph.config import Settings
from semgraph.errors import JobError
from semgraph.indexer.pipeline import Reindex, ReindexRequest, ReindexResult
from semgraph.queue.registry import JobContext, on_maintenance, register

KIND = "reindex"

# Set by the foreground `semgraph index` command to draw a progress display; None elsewhere.
progress_sink: Callable[[Any], None] | None = None
last_result: ReindexResult | None = None


_EMBEDDERS: dict[tuple[str, str, int], Any] = {}


def shared_embedder(settings: Settings) -> Any:
    """One loaded model per worker process (and per model/device/batch setting)."""
    from semgraph.search.embed import Embedder

    key = (str(settings.embedding_model), settings.embedding_device, settings.embedding_batch_size)
    if key not in _EMBEDDERS:
        _EMBEDDERS[key] = Embedder(settings)
    return _EMBEDDERS[key]


def request_from_args(ctx: JobContext) -> ReindexRequest:
    args = ctx.job.args or {}
    source = args.get("source")
    if not isinstance(source, str) or not source.strip():
        raise JobError(f"reindex job {ctx.job.id} has no 'source' argument")
    ref = args.get("ref") or ctx.job.ref
    commit = args.get("commit") or ctx.job.commit
    return ReindexRequest(
        source=source,
        ref=commit or ref,  # a pushed commit wins over the branch name
        commit=commit,
        job_id=ctx.job.id,
        worker_id=ctx.worker_id,
        force=bool(args.get("force", False)),
    )


def reindex_job(ctx: JobContext) -> None:
    global last_result
    run = Reindex(
        ctx.settings,
        ctx.graph,
        request_from_args(ctx),
        checkpoint=ctx.checkpoint,
        progress=progress_sink,
        embedder=shared_embedder(ctx.settings),
    )
    last_result = run.run()


def _maintain(settings: Settings, graph: Any) -> None:
    from semgraph.check import maintain_search

    maintain_search(settings, graph)


register(KIND, reindex_job)
on_maintenance(_maintain)
