"""The search side of a reindex: the run's staging index, built either fresh or as a clone
of the live index with only the changed files re-embedded (``search/incremental.py``).

The spill is decoded once here (the files the index needs); which files changed is decided
from the resolution's file table, which the resolve phase already built from the spill.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from semgraph.graph.reader import GraphReader
from semgraph.indexer.spill import SpillReader
from semgraph.model import FileFacts
from semgraph.resolve.resolution import Resolution
from semgraph.search import incremental
from semgraph.search.bodies import staging_meta
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex
from semgraph.search.loader import IndexStats
from semgraph.search.progress import EmbedProgress


def spill_facts(
    spill: Path, only: set[str] | None = None, *, filter_raw: bool = True
) -> Iterator[FileFacts]:
    """The parsed files of ``spill`` (those in ``only`` when given), decoded as read; with
    ``filter_raw`` the other files' records are skipped before they are built into
    dataclasses (a cloned run needs a handful of the repository's files). Both ways yield
    the same files in the same order."""
    if filter_raw:
        yield from SpillReader(spill).file_facts(only)
        return
    for rec in SpillReader(spill):
        if isinstance(rec, FileFacts) and (only is None or rec.path in only):
            yield rec


def graph_named(files: Iterator[FileFacts], renamed: dict[str, str]) -> Iterator[FileFacts]:
    """The files with their chunks' symbols named as the graph names them: in a src layout
    resolution drops the source root from the modules (``src.pkg.mod.f`` is ``pkg.mod.f``),
    and a search hit must name the symbol a graph query takes (issue 27)."""
    for facts in files:
        prefix = renamed.get(facts.path)
        if prefix:
            facts.chunks = [
                replace(c, symbol=c.symbol[len(prefix) :])
                if c.symbol and c.symbol.startswith(prefix)
                else c
                for c in facts.chunks
            ]
        yield facts


@dataclass
class StagingRequest:
    repo_key: str
    run_id: str
    fingerprint: str
    force: bool  # a forced run never reuses the live index


@dataclass
class Staged:
    index: str  # the staging index's name
    stats: IndexStats
    incremental: dict[str, Any] | None  # what the clone reused, when it was one
    # seconds of the phase's steps (issue 25): plan, create or clone, delete (the changed
    # files' old documents), load (decode the spill, embed, bulk), refresh
    timings_s: dict[str, float] = field(default_factory=dict)


def stage(
    index: SearchIndex,
    embedder: Embedder,
    reader: GraphReader,
    req: StagingRequest,
    *,
    spill: Path,
    resolution: Resolution,
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
        published = reader.repository(req.repo_key)
        plan = incremental.plan(
            index,
            req.repo_key,
            docs_fp=docs_fp,
            model_id=embedder.model_id,
            dims=embedder.dims,
            graph_run_id=None if published is None else _str_or_none(published.get("run_id")),
            graph_files=lambda: reader.file_blobs(req.repo_key),
            files=resolution.file_blobs(),
        )
    clock.lap("plan")
    name = index.staging_name(req.repo_key, req.run_id)
    on_created(name)  # before the index exists: a half-made one is deleted too
    reused: dict[str, Any] | None = None
    if plan is None:
        index.create_staging(
            req.repo_key,
            req.run_id,
            embedder.dims,
            model_id=embedder.model_id,
            now=time.time(),
            docs_fingerprint=docs_fp,
        )
        facts = spill_facts(spill)
        total = sum(1 for _ in resolution.file_blobs())
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
        facts = spill_facts(spill, only=plan.changed, filter_raw=settings.staging_filter_raw)
        total = len(plan.changed)
    fault("during_staging")
    facts = graph_named(facts, resolution.renamed_modules())
    stats = index.index_files(
        name, req.repo_key, req.run_id, facts, embedder, total_files=total, progress=progress
    )
    clock.lap("load")
    index.refresh(name)
    clock.lap("refresh")
    return Staged(name, stats, reused, timings)


class _Clock:
    """Seconds since the previous lap, recorded under each lap's name."""

    def __init__(self, into: dict[str, float]) -> None:
        self.into = into
        self.last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.into[name] = round(now - self.last, 4)
        self.last = now


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
