"""The job kinds the worker runs: ``reindex``, ``vectors`` (the vectors a reindex left
pending, :mod:`semgraph.search.vectors`), ``remove`` (:mod:`semgraph.repos.removal`) and the
maintenance passes (:mod:`semgraph.maintenance`: divergence repair and
staging-index GC, leftover workdirs and runs, this host's caches of repositories the graph
no longer knows). :func:`register_job_kinds` builds the worker process's :class:`JobKinds`
and registers them; the worker command and ``semgraph index`` call it where the worker
starts.

Job args are :class:`semgraph.indexer.request.ReindexArgs`. The embedding model and the
Elasticsearch client are made once per :class:`JobKinds` (one per worker process) and
reused by every job it runs, like the graph connection the worker hands each job.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph, connect_search
from semgraph.faults import Faults, arm_from_env
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexArgs, ReindexRequest
from semgraph.maintenance import cleanup, hostcaches, leftovers
from semgraph.maintenance.search import maintain_search
from semgraph.queue.models import VECTORS_KIND, VECTORS_PRIORITY, role_kinds
from semgraph.queue.registry import JobContext, kinds, on_maintenance, register
from semgraph.queue.store import JobStore
from semgraph.repos import removal
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex
from semgraph.search.vectors import VectorsFill

KIND = "reindex"
log = logging.getLogger(__name__)


def request_from_args(ctx: JobContext) -> ReindexRequest:
    return ReindexRequest.for_job(
        ReindexArgs.from_json(ctx.job.id, ctx.job.args),
        job_id=ctx.job.id,
        worker_id=ctx.worker_id,
        job_ref=ctx.job.ref,
        job_commit=ctx.job.commit,
    )


class JobKinds:
    """The job kinds of one worker process, and what their jobs share: one loaded model per
    model, device and batch setting, one Elasticsearch client per URL and timeout, and the
    progress display (``progress``: set by the foreground ``semgraph index`` command; None
    elsewhere)."""

    def __init__(
        self, *, progress: Callable[[Any], None] | None = None, foreground: bool = False
    ) -> None:
        self.progress = progress
        # `semgraph index`: its worker runs only its own jobs, so its vectors job stops only
        # for a push of its own repository
        self.foreground = foreground
        self._embedders: dict[tuple[str, str, int], Embedder] = {}
        self._search: dict[tuple[str, float], elasticsearch.Elasticsearch] = {}

    def embedder(self, settings: Settings) -> Embedder:
        """One loaded model per worker process (and per model/device/batch setting)."""
        key = (
            str(settings.embedding_model),
            settings.embedding_device,
            settings.embedding_batch_size,
        )
        if key not in self._embedders:
            self._embedders[key] = Embedder(settings)
        return self._embedders[key]

    def search(self, settings: Settings) -> elasticsearch.Elasticsearch:
        """One Elasticsearch client per worker process (per URL and timeout): it keeps its
        connection pool across jobs, as the worker's Bolt driver does."""
        key = (settings.es_url, settings.es_request_timeout_s)
        if key not in self._search:
            self._search[key] = connect_search(settings)
        return self._search[key]

    def reindex(self, ctx: JobContext) -> None:
        run = Reindex(
            ctx.settings,
            ctx.graph,
            self.search(ctx.settings),
            request_from_args(ctx),
            checkpoint=ctx.checkpoint,
            progress=self.progress,
            embedder=self.embedder(ctx.settings),
        )
        result = run.run()  # its phases end with the re-link of its dependents
        if result.stats.get("vectors_pending"):
            self._queue_vectors(ctx, f"vectors pending after run {result.run_id}")
        parsed = result.stats.get("parse")
        if isinstance(parsed, dict) and isinstance(parsed.get("files_by_status"), dict):
            # the files indexed: the repository's size, recorded for the lanes
            ctx.files = sum(int(n) for n in parsed["files_by_status"].values())

    def vectors(self, ctx: JobContext) -> None:
        """Fill in the vectors the repository's published index lacks
        (:mod:`semgraph.search.vectors`). Between windows it stops for any due job this
        worker would claim instead (a push of any repository, its own included) and is queued
        again behind it: a push never waits behind an embedding backlog, and a push of its own
        repository publishes a commit whose vectors the next vectors job fills."""
        settings, repo = ctx.settings, ctx.job.repo_key
        store = JobStore(ctx.graph, settings)
        faults = Faults()
        arm_from_env(faults)  # the processes a test starts arm vectors.window

        # the kinds this worker would claim instead: a push of any repository goes first
        others = [k for k in role_kinds(settings.worker_role, kinds()) if k != VECTORS_KIND]

        def push_waiting() -> bool:
            now = time.time()
            return store.due_work(others, now=now, repo=repo, any_repo=not self.foreground)

        stats = VectorsFill(
            SearchIndex(self.search(settings), settings),
            self.embedder(settings),
            repo,
            checkpoint=ctx.checkpoint,
            should_yield=push_waiting,
            faults=faults,
            progress=self.progress,
        ).run()
        if stats.yielded:
            self._queue_vectors(ctx, "vectors: stopped for a due job, continued after it")

    @staticmethod
    def _queue_vectors(ctx: JobContext, note: str) -> None:
        """Queue the repository's vectors job (merged into a job of it already pending)."""
        JobStore(ctx.graph, ctx.settings).enqueue(
            ctx.job.repo_key,
            now=time.time(),
            kind=VECTORS_KIND,
            priority=VECTORS_PRIORITY,
            note=note,
        )

    def remove(self, ctx: JobContext) -> None:
        """Remove the job's repository from the graph, the index and this host's disk
        (:mod:`semgraph.repos.removal`); a retry resumes where an attempt stopped."""
        requested_at = ctx.job.args.get("requested_at")
        faults = Faults()
        arm_from_env(faults)  # the processes a test starts arm the removal's points
        removal.Removal(
            ctx.settings,
            ctx.graph,
            self.search(ctx.settings),
            ctx.job.repo_key,
            job_id=ctx.job.id,
            requested_at=float(requested_at) if isinstance(requested_at, int | float) else 0.0,
            faults=faults,
            checkpoint=ctx.checkpoint,
        ).run()

    def maintain_search(self, settings: Settings, graph: Graph) -> None:
        """The search index's maintenance pass, with this process's client."""
        maintain_search(settings, graph, self.search(settings))


def register_job_kinds(kinds: JobKinds | None = None) -> JobKinds:
    """Register the job kinds and the maintenance passes of ``kinds`` (a new
    :class:`JobKinds` by default) with the worker's registry, and return it. Called again,
    the newer object's kinds replace the older one's."""
    kinds = JobKinds() if kinds is None else kinds
    register(KIND, kinds.reindex)
    register(removal.KIND, kinds.remove)
    register(VECTORS_KIND, kinds.vectors)
    on_maintenance(kinds.maintain_search)
    on_maintenance(leftovers.gc_leftovers)
    on_maintenance(hostcaches.sweep_host_caches)
    on_maintenance(cleanup.maintain_cleanup)
    return kinds
