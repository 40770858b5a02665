"""The reindex job: a sequence of named phases (docs/architecture.md, data flow).

    checkout -> parse (pool -> spill) -> resolve -> embed + staging index
             -> ONE graph transaction -> alias flip -> cleanup

Before the graph commit, any failure deletes the staging index and leaves the live state
untouched. After the commit, a failed alias flip marks the run ``diverged`` and raises the
``index_diverged`` alert; ``semgraph check --repair`` (also run by the worker at start)
finishes the flip or requeues the repository. The ``finally`` block always closes the pool
(inside the parse phase), calls ``malloc_trim(0)``, deletes the workspace and spill, and
logs RSS before and after.

The class is over 300 lines because the phases, the outcomes and the failure handling share
one run's state; what each phase does lives in the module it calls.

Fault points (:mod:`semgraph.faults`), in order: ``reindex.after_checkout``,
``reindex.after_spill``, ``reindex.during_staging``, ``reindex.after_staging``, the
publish's (``publish.batch``, ``publish.before_commit``), ``reindex.after_graph_commit``,
``reindex.alias_flip``, ``reindex.after_alias_flip``.
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
from semgraph.errors import GraphError, GraphUnavailable, JobError
from semgraph.faults import PROCESS, Faults
from semgraph.graph.publish_stats import PublishStats
from semgraph.graph.reader import GraphReader
from semgraph.graph.runs import RunStatus, RunStore
from semgraph.graph.writer import GraphWriter, RepoInfo
from semgraph.indexer import resolvecache
from semgraph.indexer.checkout import CheckoutResult, checkout, worktree_lock, worktree_path
from semgraph.indexer.manifests_read import read_identity
from semgraph.indexer.parse import ParseStats, parse_repository
from semgraph.indexer.parsecache import ParseCache
from semgraph.indexer.request import (
    ReindexRequest,
    ReindexResult,
    RunOutcome,
    as_json_stats,
    fingerprint,
    new_run_id,
)
from semgraph.indexer.sources import repo_key_for
from semgraph.indexer.staging import run_files
from semgraph.logs import event
from semgraph.manifests import Identity
from semgraph.metrics import INDEX_DIVERGED
from semgraph.resolve.resolution import Resolution
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex
from semgraph.search.staging import Staged, StagingRequest, stage

log = logging.getLogger(__name__)

Checkpoint = Callable[[str], None]
T = TypeVar("T")


class PublishDiverged(JobError):
    """The graph committed but the alias flip failed: the run is diverged."""


class Reindex:
    """One reindex run. ``run()`` executes the phases in order."""

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
        self.identity: Identity | None = None  # the manifests' packages
        self.commit_in_doubt = False  # the connection broke during COMMIT; outcome unknown
        self.repo_key = ""
        self.commit = ""
        self._held = contextlib.ExitStack()  # the work tree's lock, while checkout and parse run

    # -- the job ----------------------------------------------------------------------------

    def run(self) -> ReindexResult:
        rss_before = memory.rss_bytes()
        try:
            return self._phases()
        except BaseException as exc:
            self._on_failure(exc)
            raise
        finally:
            self._cleanup(rss_before)

    def _phases(self) -> ReindexResult:
        co = self._phase("checkout", self._checkout)
        fp = fingerprint(self.settings, self.embedder.model_id)
        if not self.request.force and self._unchanged(fp):
            return self._noop(fp)
        self._fault("after_checkout")
        self.stats["parse"] = as_json_stats(self._phase("parse", lambda: self._parse(co, fp)))
        self._fault("after_spill")
        with self._phase("resolve", lambda: self._resolve(fp)) as resolution:
            staged = self._phase("embed_index", lambda: self._stage(fp, resolution))
            self.checkpoint("before_publish")
            published = self._phase("graph_publish", lambda: self._publish(co, resolution, fp))
        self.committed = True
        resolvecache.keep(self.settings, self.repo_key, resolution.path)  # closed: the cache
        self.stats["publish"] = as_json_stats(published)
        self._fault("after_graph_commit")
        self._phase("alias_flip", lambda: self._flip(staged))
        self._fault("after_alias_flip")
        return self._succeeded(fp)

    # -- the phases -------------------------------------------------------------------------

    def _checkout(self) -> CheckoutResult:
        self.workdir.mkdir(parents=True, exist_ok=True)
        workspace, reuse = self._workspace()
        co = checkout(self.settings, self.request.source, self.request.ref, workspace, reuse=reuse)
        self.repo_key, self.commit = co.repo_key, co.commit
        self.runs.start(
            self.run_id,
            self.repo_key,
            self.commit,
            self.request.job_id,
            self.request.worker_id,
            time.time(),
        )
        return co

    def _parse(self, co: CheckoutResult, fp: str) -> ParseStats:
        try:
            self.identity = read_identity(co.workspace)  # before the tree is let go
            self.stats["manifest_errors"] = self.identity.errors[:20]
            if not self.settings.parse_cache:
                return parse_repository(
                    self.settings,
                    co.workspace,
                    self.spill,
                    checkpoint=self.checkpoint,
                    progress=self.progress,
                    faults=self.faults,
                )
            # a forced reindex parses everything again (and refreshes the cache)
            reuse = not self.request.force
            with ParseCache.for_repo(self.settings, self.repo_key, fp, reuse=reuse) as cache:
                stats = parse_repository(
                    self.settings,
                    co.workspace,
                    self.spill,
                    checkpoint=self.checkpoint,
                    progress=self.progress,
                    cache=cache,
                    faults=self.faults,
                )
                cache.commit()
            stats.timings_s["cache_commit"] = round(cache.commit_s, 4)
            return stats
        finally:
            self._held.close()  # the work tree is read: another job of the repository may move it

    def _resolve(self, fp: str) -> Resolution:
        resolution = resolvecache.resolve_job(
            self.settings, self.spill, self.repo_key, self.workdir / "resolve", fp,
            force=self.request.force,
        )  # fmt: skip
        self.stats["resolve_incremental"] = as_json_stats(resolution.incremental)
        self.stats["resolution"] = as_json_stats(resolution.counts)
        self.stats["resolution_rate"] = round(resolution.rate, 4)
        return resolution

    def _stage(self, fp: str, resolution: Resolution) -> Staged:
        req = StagingRequest(self.repo_key, self.run_id, fp, force=self.request.force)
        files = run_files(
            self.settings, self.reader, self.repo_key, spill=self.spill, resolution=resolution
        )
        staged = stage(
            self.index,
            self.embedder,
            req,
            files,
            on_created=self._staging_created,
            fault=self._fault,
            progress=self.progress,
        )
        self.stats["index"] = as_json_stats(staged.stats)
        self.stats["index_timings_s"] = staged.timings_s
        if staged.incremental is not None:
            self.stats["incremental"] = staged.incremental
        self._fault("after_staging")
        return staged

    def _publish(self, co: CheckoutResult, resolution: Resolution, fp: str) -> PublishStats | None:
        repo = RepoInfo(co.repo_key, co.url, co.default_branch, co.commit, self.identity)
        writer = GraphWriter(self.graph, self.settings, faults=self.faults)
        try:
            return writer.publish(
                repo,
                resolution,
                run_id=self.run_id,
                fingerprint=fp,
                now=time.time(),
                delta=not self.request.force,  # a forced job rewrites the whole graph
            )
        except GraphUnavailable:
            # the connection broke: before COMMIT nothing changed; during COMMIT the outcome
            # is unknown, and the run id the transaction writes on :Repository tells which
            if self._graph_has_run():
                self._log(
                    logging.WARNING,
                    "publish_commit_confirmed",
                    "the answer to COMMIT was lost, but the graph holds this run",
                )
                return None
            raise

    def _flip(self, staged: Staged) -> None:
        try:
            self._fault("alias_flip")
            self.index.flip_alias(self.repo_key, staged.index)
        except Exception as exc:
            self.runs.finish(self.run_id, RunOutcome.DIVERGED, time.time(), error=str(exc)[:2000])
            INDEX_DIVERGED.labels(repo=self.repo_key).set(1)
            self.alerter.fire(
                "index_diverged",
                f"graph committed run {self.run_id} but the alias flip failed: {exc}",
                repo=self.repo_key,
                run_id=self.run_id,
                job_id=self.request.job_id,
            )
            raise PublishDiverged(
                f"graph committed run {self.run_id} but the alias flip failed; "
                "`semgraph check --repair` finishes it"
            ) from exc
        INDEX_DIVERGED.labels(repo=self.repo_key).set(0)

    # -- outcomes ---------------------------------------------------------------------------

    def _noop(self, fp: str) -> ReindexResult:
        self.runs.finish(self.run_id, RunOutcome.NOOP, time.time(), fingerprint=fp)
        self._log(logging.INFO, "reindex_noop", "unchanged commit and fingerprint")
        return ReindexResult(self.run_id, self.repo_key, self.commit, RunOutcome.NOOP)

    def _succeeded(self, fp: str) -> ReindexResult:
        self.runs.finish(
            self.run_id,
            RunOutcome.SUCCEEDED,
            time.time(),
            fingerprint=fp,
            phases_s=json.dumps(self.phases),
            stats=json.dumps(self.stats, default=str),
            resolution_rate=self.stats.get("resolution_rate"),
        )
        self._log(logging.INFO, "reindex_succeeded", "reindex published", commit=self.commit)
        return ReindexResult(
            self.run_id,
            self.repo_key,
            self.commit,
            RunOutcome.SUCCEEDED,
            dict(self.phases),
            dict(self.stats),
        )

    # -- helpers ----------------------------------------------------------------------------

    def _phase(self, name: str, fn: Callable[[], T]) -> T:
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

    def _unchanged(self, fp: str) -> bool:
        published = self.reader.repository(self.repo_key)
        if published is None:
            return False
        live = self.index.live_index(self.repo_key)
        return bool(
            published.get("commit") == self.commit
            and published.get("fingerprint") == fp
            and live is not None
            and self.index.index_run_id(live) == published.get("run_id")
        )

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
        if isinstance(exc, PublishDiverged):
            return  # recorded in _flip; the staging index is what repair flips to
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
