"""The run's staging index, built either fresh or as a clone of the live index with only the
changed files re-embedded (:mod:`semgraph.search.incremental`).

The search side reads neither the spill nor the graph: the reindex hands it what it needs
as callables (:class:`RunFiles`): the run's files and their blobs, the parsed files'
facts (all of them, or only the changed ones), and what the graph holds of the repository.
Each is called only when the plan needs it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from semgraph.model import FileFacts
from semgraph.search import incremental
from semgraph.search.bodies import staging_meta
from semgraph.search.embed import Embedder
from semgraph.search.history import HistorySource, stage_history
from semgraph.search.index import SearchIndex
from semgraph.search.loader import IndexStats
from semgraph.search.progress import EmbedProgress


@dataclass
class StagingRequest:
    repo_key: str
    run_id: str
    fingerprint: str
    force: bool  # a forced run never reuses the live index
    # texts the model embeds in the job itself when it clones the live index (None: all;
    # a fresh index embeds none); the chunks past it are published without vectors, which
    # a vectors job adds (semgraph.search.vectors)
    inline_max: int | None = None


@dataclass(frozen=True)
class RunFiles:
    """What the staging index is built from, as the reindex hands it over."""

    #: the run's parsed files, ``(path, blob sha)``
    blobs: Callable[[], Iterable[tuple[str, str]]]
    #: the parsed files' facts (only those whose path is in the set, when one is given),
    #: their chunks' symbols named as the graph names them
    facts: Callable[[set[str] | None], Iterator[FileFacts]]
    #: the run id the graph holds for the repository (None: never published)
    graph_run_id: Callable[[], str | None]
    #: the graph's ``{path: blob sha}`` for the repository
    graph_blobs: Callable[[], dict[str, str]]
    #: the files' commit messages (None: no history, :mod:`semgraph.search.history`)
    history: HistorySource | None = None


@dataclass
class Staged:
    index: str  # the staging index's name
    stats: IndexStats
    incremental: dict[str, Any] | None  # what the clone reused, when it was one
    # seconds of the phase's steps: plan, create or clone, delete (the changed
    # files' old documents), load (decode the spill, embed, bulk), history, refresh
    timings_s: dict[str, float] = field(default_factory=dict)
    history: dict[str, Any] | None = None  # what the history step did


def stage(
    index: SearchIndex,
    embedder: Embedder,
    req: StagingRequest,
    files: RunFiles,
    *,
    on_created: Callable[[str], None],
    fault: Callable[[str], None],
    progress: Callable[[EmbedProgress], None] | None = None,
) -> Staged:
    """Build and refresh the run's staging index; ``on_created(name)`` is called before it
    is created (the caller deletes it if the run fails before the graph commit)."""
    settings = index.settings
    docs_fp = incremental.docs_fingerprint(req.fingerprint, settings.search_max_code_chars)
    timings: dict[str, float] = {}
    clock = _Clock(timings)
    plan = None
    if not req.force:
        plan = incremental.plan(
            index,
            req.repo_key,
            docs_fp=docs_fp,
            model_id=embedder.model_id,
            dims=embedder.dims,
            graph_run_id=files.graph_run_id(),
            graph_files=files.graph_blobs,
            files=files.blobs(),
        )
    clock.lap("plan")
    name = index.staging_name(req.repo_key, req.run_id)
    on_created(name)  # before the index exists: a half-made one is deleted too
    reused: dict[str, Any] | None = None
    only: set[str] | None = None
    live_meta = None if plan is None else index.index_meta(plan.live)
    if plan is None:
        index.create_staging(
            req.repo_key,
            req.run_id,
            embedder.dims,
            model_id=embedder.model_id,
            now=time.time(),
            docs_fingerprint=docs_fp,
        )
        total = sum(1 for _ in files.blobs())
        clock.lap("create")
    else:
        meta = staging_meta(
            req.repo_key, req.run_id, embedder.dims, embedder.model_id, time.time(), docs_fp
        )
        incremental.clone_live(index, req.repo_key, req.run_id, plan.live, meta)
        clock.lap("clone")
        reused = {
            "from_index": plan.live,
            "changed_files": len(plan.changed),
            "removed_files": len(plan.removed),
            "deleted_docs": incremental.delete_paths(index, name, plan.stale),
        }
        clock.lap("delete")
        only = plan.changed
        total = len(plan.changed)
    fault("during_staging")
    # a fresh index (a first index, a forced or format-changed one) is all new: publish it
    # before any model work; a push (a clone of the live index) embeds its change itself
    inline = req.inline_max if plan is not None or req.inline_max is None else 0
    stats = index.index_files(
        name,
        req.repo_key,
        req.run_id,
        files.facts(only),
        embedder,
        total_files=total,
        progress=progress,
        inline_max=inline,
    )
    clock.lap("load")
    history = stage_history(
        index,
        name,
        req.repo_key,
        req.run_id,
        files.history,
        {path for path, _ in files.blobs()},
        live_meta=live_meta,
        removed=() if plan is None else plan.removed,
    )
    clock.lap("history")
    index.refresh(name)
    clock.lap("refresh")
    return Staged(name, stats, reused, timings, history.to_dict())


class _Clock:
    """Seconds since the previous lap, recorded under each lap's name."""

    def __init__(self, into: dict[str, float]) -> None:
        self.into = into
        self.last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.into[name] = round(now - self.last, 4)
        self.last = now
