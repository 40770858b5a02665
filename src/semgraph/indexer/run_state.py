"""One reindex run's state and bookkeeping, apart from its phases
(:mod:`semgraph.indexer.pipeline`): what the run holds (its id, work directory, spill, phase
times, stats, staging index, whether the graph committed), how a phase is timed and logged,
and what a failure and the ``finally`` block leave behind.

A failure before the graph commit deletes the staging index (unless the commit's outcome is
in doubt: repair may need it) and records the run ``failed``; after the commit, ``diverged``.
A run whose outcome is already recorded (a re-link that failed after a complete publish) is
not recorded again. The cleanup always releases the work tree's lock, calls
``malloc_trim(0)``, deletes the workspace and spill, and logs RSS before and after.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import elasticsearch

from semgraph import memory
from semgraph.alerts import Alerter
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import GraphError, JobError
from semgraph.faults import PROCESS, Faults
from semgraph.graph.reader import GraphReader
from semgraph.graph.runs import RunStatus, RunStore
from semgraph.indexer.checkout import worktree_lock, worktree_path
from semgraph.indexer.request import ReindexRequest, new_run_id
from semgraph.indexer.sources import repo_key_for
from semgraph.logs import event
from semgraph.manifests import Identity
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex

log = logging.getLogger("semgraph.indexer.pipeline")

Checkpoint = Callable[[str], None]
T = TypeVar("T")


class PublishDiverged(JobError):
    """The graph committed but the alias flip failed: the run is diverged."""


class RelinkFailed(JobError):
    """The repository published, but re-linking its dependents failed: the job fails and its
    retry (a no-op reindex) re-links again."""


class RunState:
    """What one reindex run holds, and its bookkeeping; :class:`~semgraph.indexer.pipeline.
    Reindex` adds the phases."""

    def __init__(
        self,
        settings: Settings,
        graph: Graph,
        es: elasticsearch.Elasticsearch,
        request: ReindexRequest,
        *,
        checkpoint: Checkpoint | None = None,
        progress: Callable[[Any], None] | None = None,
        embedder: Embedder | None = None,
        faults: Faults = PROCESS,
    ) -> None:
        self.settings = settings
        self.graph = graph
        self.request = request
        self.checkpoint: Checkpoint = checkpoint or (lambda name: None)
        self.progress = progress
        self.embedder = embedder or Embedder(settings)
        self.index = SearchIndex(es, settings, faults=faults)
        self.reader = GraphReader(graph)
        self.runs = RunStore(graph)
        self.alerter = Alerter(settings)
        self.faults = faults
        self.run_id = new_run_id()
        self.workdir = settings.state_dir / "jobs" / self.run_id
        self.spill = self.workdir / "parse.spill"
        self.phases: dict[str, float] = {}
        self.stats: dict[str, Any] = {}
        self.staging: str | None = None
        self.committed = False
        self.recorded = False  # the run's outcome is recorded: a later failure keeps it
        self.identity: Identity | None = None  # the manifests' packages
        self.commit_in_doubt = False  # the connection broke during COMMIT; outcome unknown
        self.repo_key = ""
        self.commit = ""
        self._held = contextlib.ExitStack()  # the work tree's lock, while checkout and parse run

    def _phase(self, name: str, fn: Callable[[], T], *, cancellable: bool = True) -> T:
        """Run the phase ``name``, timed and logged; a cancellable phase starts at a checkpoint
        (where a cancelled or timed-out job stops)."""
        if cancellable:
            self.checkpoint(name)
        started = time.monotonic()
        self._log(logging.INFO, "phase_start", f"phase {name}", phase=name)
        try:
            return fn()
        finally:
            self.phases[name] = round(time.monotonic() - started, 4)
            self._log(
                logging.INFO,
                "phase_end",
                f"phase {name} done",
                phase=name,
                seconds=self.phases[name],
            )

    def _workspace(self) -> tuple[Path, bool]:
        """The repository's reused work tree (locked until the parse phase has read it), or
        a fresh one under the job's directory."""
        if not self.settings.checkout_reuse_worktree:
            return self.workdir / "workspace", False
        key = repo_key_for(self.request.source)
        self._held.enter_context(worktree_lock(self.settings, key))
        return worktree_path(self.settings, key), True

    def _graph_has_run(self) -> bool:
        try:
            published = self.reader.repository(self.repo_key)
        except GraphError:
            self.commit_in_doubt = True  # keep the staging index: repair may need it
            return False
        return published is not None and published.get("run_id") == self.run_id

    def _staging_created(self, name: str) -> None:
        self.staging = name

    def _fault(self, point: str) -> None:
        self.faults.point(f"reindex.{point}", run_id=self.run_id, repo=self.repo_key)

    def _log(self, level: int, action: str, msg: str = "", **fields: Any) -> None:
        event(
            log,
            level,
            action,
            msg,
            job_id=self.request.job_id,
            repo=self.repo_key,
            run_id=self.run_id,
            **fields,
        )

    # -- failure and cleanup ----------------------------------------------------------------

    def _on_failure(self, exc: BaseException) -> None:
        if isinstance(exc, PublishDiverged) or self.recorded:
            return  # recorded where it was raised; a diverged run's staging index is repair's
        if not self.committed and not self.commit_in_doubt and self.staging is not None:
            try:
                self.index.delete_index(self.staging)
            except Exception as cleanup_exc:  # the sweep removes orphans later
                self._log(
                    logging.WARNING, "staging_cleanup_failed", str(cleanup_exc), index=self.staging
                )
        if self.repo_key:
            status = RunStatus.DIVERGED if self.committed else RunStatus.FAILED
            try:
                self.runs.finish(
                    self.run_id,
                    status,
                    time.time(),
                    error=f"{type(exc).__name__}: {exc}"[:2000],
                    phases_s=json.dumps(self.phases),
                )
            except Exception as record_exc:  # the sweep marks the run abandoned later
                self._log(logging.WARNING, "run_record_failed", str(record_exc))

    def _cleanup(self, rss_before: int) -> None:
        self._held.close()
        trimmed = memory.malloc_trim()
        shutil.rmtree(self.workdir, ignore_errors=True)
        self._log(
            logging.INFO,
            "job_cleanup",
            "workspace and spill removed",
            rss_before=rss_before,
            rss_after=memory.rss_bytes(),
            malloc_trim=trimmed,
        )
