"""The reindex job: a sequence of named phases (docs/architecture.md, data flow).

    checkout -> parse (pool -> spill) -> resolve -> embed + staging index
             -> ONE graph transaction -> alias flip -> re-link dependents -> cleanup

Before the graph commit, any failure deletes the staging index and leaves the live state
untouched. After the commit, a failed alias flip marks the run ``diverged`` and raises the
``index_diverged`` alert; ``semgraph check --repair`` (also run by the worker at start)
finishes the flip or requeues the repository. Once the commit is served, the repositories
that depend on this one are re-linked to its new definitions (:mod:`semgraph.xrepo.relink`,
one transaction each): the ``relink`` phase, timed with the others and recorded in the run
with its dependents, rows and outcome. It runs after a no-op too, so that the retry of a job
whose re-link failed re-links again. The pool is closed inside the parse phase; the run's
state, its failure handling and the ``finally`` block are :mod:`semgraph.indexer.run_state`.

Fault points (:mod:`semgraph.faults`), in order: ``reindex.after_checkout``,
``reindex.after_spill``, ``reindex.during_staging``, ``reindex.after_staging``, the
publish's (``publish.batch``, ``publish.before_commit``), ``reindex.after_graph_commit``,
``reindex.alias_flip``, ``reindex.after_alias_flip``, ``reindex.relink``.

Progressive publish: the job embeds at most ``embed_inline_max_chunks`` texts itself (none on
a ``push`` worker); its other chunks are published without vectors, counted in the run as
``vectors_pending``, and a ``vectors`` job fills them in (:mod:`semgraph.search.vectors`).

The module is over 300 lines because the phases and their outcomes read top to bottom in
the one class that runs them.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from semgraph import memory
from semgraph.errors import GraphUnavailable, SearchError
from semgraph.graph.publish_stats import PublishStats
from semgraph.graph.writer import GraphWriter, RepoInfo
from semgraph.indexer import resolvecache
from semgraph.indexer.checkout import CheckoutResult, checkout, mirror_path
from semgraph.indexer.githistory import history_source
from semgraph.indexer.manifests_read import read_identity
from semgraph.indexer.parse import ParseStats, parse_repository
from semgraph.indexer.parsecache import ParseCache
from semgraph.indexer.request import ReindexResult, RunOutcome, as_json_stats, fingerprint
from semgraph.indexer.run_state import PublishDiverged, RelinkFailed, RunState
from semgraph.indexer.staging import run_files
from semgraph.metrics import INDEX_DIVERGED
from semgraph.resolve.resolution import Resolution
from semgraph.search.staging import Staged, StagingRequest, stage
from semgraph.search.vectors import pending_count
from semgraph.xrepo.relink import relink_dependents


class Reindex(RunState):
    """One reindex run. ``run()`` executes the phases in order."""

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
            staged = self._phase("embed_index", lambda: self._stage(co, fp, resolution))
            self.checkpoint("before_publish")
            published = self._phase("graph_publish", lambda: self._publish(co, resolution, fp))
        self.committed = True
        resolvecache.keep(self.settings, self.repo_key, resolution.path)  # closed: the cache
        self.stats["publish"] = as_json_stats(published)
        self._fault("after_graph_commit")
        self._phase("alias_flip", lambda: self._flip(staged))
        self.stats["published_at"] = round(time.time(), 3)  # the first answer from here on
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
            self.settings,
            self.spill,
            self.repo_key,
            self.workdir / "resolve",
            fp,
            force=self.request.force,
        )
        self.stats["resolve_incremental"] = as_json_stats(resolution.incremental)
        self.stats["resolution"] = as_json_stats(resolution.counts)
        self.stats["resolution_rate"] = round(resolution.rate, 4)
        return resolution

    def _stage(self, co: CheckoutResult, fp: str, resolution: Resolution) -> Staged:
        req = StagingRequest(
            self.repo_key, self.run_id, fp, force=self.request.force, inline_max=self._inline_max()
        )
        mirror = mirror_path(self.settings, co.repo_key)
        files = run_files(
            self.settings,
            self.reader,
            self.repo_key,
            spill=self.spill,
            resolution=resolution,
            history=history_source(self.settings, mirror, co.commit),
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
        if staged.history is not None:
            self.stats["history"] = staged.history
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

    def _relink(self) -> dict[str, Any]:
        self._fault("relink")
        relinked = relink_dependents(self.graph, self.repo_key)
        return {
            "outcome": "ok",
            "dependents": len(relinked),
            "sites": sum(s.sites for s in relinked.values()),
            "rows": sum(s.rows for s in relinked.values()),
        }

    # -- outcomes ---------------------------------------------------------------------------

    def _noop(self, fp: str) -> ReindexResult:
        self._log(logging.INFO, "reindex_noop", "unchanged commit and fingerprint")
        return self._finish(RunOutcome.NOOP, fp)

    def _succeeded(self, fp: str) -> ReindexResult:
        self._log(logging.INFO, "reindex_succeeded", "reindex published", commit=self.commit)
        return self._finish(RunOutcome.SUCCEEDED, fp)

    def _finish(self, outcome: RunOutcome, fp: str) -> ReindexResult:
        """Re-link the dependents, then record the run with every phase's time, the re-link's
        included; a failed re-link is recorded in the run, then fails the job."""
        failed: Exception | None = None
        try:
            # no checkpoint: the commit is served, a cancel here would only skip the re-link
            relink = self._phase("relink", self._relink, cancellable=False)
        except Exception as exc:
            failed = exc
            relink = {"outcome": "failed", "error": f"{type(exc).__name__}: {exc}"}
        self.stats["vectors_pending"] = self._vectors_pending()
        if failed is not None or relink["dependents"]:
            self._log(
                logging.WARNING if failed else logging.INFO,
                "xrepo_relinked",
                f"re-link of the dependents: {relink['outcome']}",
                duration_s=self.phases["relink"],
                **{k: v for k, v in relink.items() if k != "outcome"},
            )
        self.runs.finish(
            self.run_id,
            outcome,
            time.time(),
            fingerprint=fp,
            phases_s=json.dumps(self.phases),
            stats=json.dumps(self.stats, default=str),
            resolution_rate=self.stats.get("resolution_rate"),
            relink=relink,  # its own field: `runs show` and the console name it
        )
        self.recorded = True
        if failed is not None:
            raise RelinkFailed(f"re-linking the dependents of {self.repo_key} failed") from failed
        return ReindexResult(
            self.run_id, self.repo_key, self.commit, outcome, dict(self.phases), dict(self.stats)
        )

    # -- helpers ----------------------------------------------------------------------------

    def _inline_max(self) -> int | None:
        """The texts this job embeds itself (None: all): none on a ``push`` worker, which
        never loads the model; the rest are published pending (semgraph.search.vectors)."""
        if self.settings.worker_role == "push":
            return 0
        limit = self.settings.embed_inline_max_chunks
        return None if limit < 0 else limit

    def _vectors_pending(self) -> int | None:
        """Chunks of the live index still without vectors: the job kinds queue a vectors job
        for them (None: not known, the maintenance pass finds them later)."""
        try:
            live = self.index.live_index(self.repo_key)
            return 0 if live is None else pending_count(self.index, live)
        except SearchError as exc:
            self._log(logging.WARNING, "vectors_pending_unknown", str(exc)[:500])
            return None

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
