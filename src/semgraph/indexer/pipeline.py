"""The reindex job: a sequence of named phases (DESIGN.md data flow).

    checkout -> parse (pool -> spill) -> resolve -> embed + staging index
             -> ONE graph transaction -> alias flip -> cleanup

Before the graph commit, any failure deletes the staging index and leaves the live state
untouched. After the commit, a failed alias flip marks the run ``diverged`` and raises the
``index_diverged`` alert; ``semgraph check --repair`` (also run by the worker at start)
finishes the flip or requeues the repository. The ``finally`` block always closes the pool
(inside the parse phase), calls ``malloc_trim(0)``, deletes the workspace and spill, and
logs RSS before and after.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from semgraph import memory
from semgraph.alerts import Alerter
from semgraph.config import Settings
from semgraph.db import Graph, connect_search
from semgraph.errors import GraphError, GraphUnavailable, JobError
from semgraph.graph.reader import GraphReader
from semgraph.graph.resolve import resolve
from semgraph.graph.runs import RunStore
from semgraph.graph.schema import SCHEMA_VERSION
from semgraph.graph.writer import GraphWriter, RepoInfo
from semgraph.indexer.checkout import checkout, repo_key_for, worktree_lock, worktree_path
from semgraph.indexer.languages import grammar_versions
from semgraph.indexer.parse import parse_repository
from semgraph.indexer.parsecache import ParseCache
from semgraph.indexer.spill import SpillReader
from semgraph.logs import event
from semgraph.metrics import INDEX_DIVERGED
from semgraph.model import MODEL_VERSION, FileFacts, SkippedFile
from semgraph.search import incremental
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex, staging_meta

log = logging.getLogger(__name__)

Checkpoint = Callable[[str], None]


class PublishDiverged(JobError):
    """The graph committed but the alias flip failed: the run is diverged."""


@dataclass
class ReindexRequest:
    source: str
    ref: str | None = None
    commit: str | None = None
    job_id: str | None = None
    worker_id: str | None = None
    force: bool = False


@dataclass
class ReindexResult:
    run_id: str
    repo_key: str
    commit: str
    status: str  # succeeded | noop | diverged
    phases_s: dict[str, float] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)


def fingerprint(settings: Settings, model_id: str) -> str:
    """What affects the output: parser/grammar versions, schema, model, options."""

    material = {
        "model_version": MODEL_VERSION,
        "schema_version": SCHEMA_VERSION,
        "grammars": grammar_versions(),
        "embedding_model": model_id,
        "options": {
            k: getattr(settings, k)
            for k in sorted(type(settings).model_fields)
            if k.startswith(("max_file", "chunk_", "embedding_text"))
        },
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()[
        :16
    ]


def new_run_id() -> str:
    return time.strftime("%Y%m%d%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:8]


def _facts(spill: Path) -> Callable[[], Iterator[FileFacts]]:

    def stream() -> Iterator[FileFacts]:
        for rec in SpillReader(spill):
            if isinstance(rec, FileFacts):
                yield rec

    return stream


def _records(spill: Path) -> Callable[[], Iterator[FileFacts | SkippedFile]]:

    def stream() -> Iterator[FileFacts | SkippedFile]:
        yield from SpillReader(spill)

    return stream


class Reindex:
    """One reindex run. ``run()`` executes the phases in order."""

    def __init__(
        self,
        settings: Settings,
        graph: Graph,
        request: ReindexRequest,
        *,
        checkpoint: Checkpoint | None = None,
        progress: Callable[[Any], None] | None = None,
        embedder: Any = None,
        faults: dict[str, Callable[[], None]] | None = None,
    ) -> None:

        self.settings = settings
        self.graph = graph
        self.request = request
        self.checkpoint: Checkpoint = checkpoint or (lambda name: None)
        self.progress = progress
        self.embedder = embedder or Embedder(settings)
        self.es = connect_search(settings)
        self.index = SearchIndex(self.es, settings)
        self.runs = RunStore(graph)
        self.alerter = Alerter(settings)
        self.faults = faults or {}
        self.run_id = new_run_id()
        self.workdir = settings.state_dir / "jobs" / self.run_id
        self.phases: dict[str, float] = {}
        self.stats: dict[str, Any] = {}
        self.staging: str | None = None
        self.committed = False
        self.commit_in_doubt = False  # the connection broke during COMMIT; outcome unknown
        self.repo_key = ""
        self.commit = ""
        self._held = contextlib.ExitStack()  # the work tree's lock, while checkout and parse run

    # -- helpers ----------------------------------------------------------------------------

    def _fault(self, point: str) -> None:
        hook = self.faults.get(point)
        if hook is not None:
            hook()

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

    def _timed(self, name: str, fn: Callable[[], Any]) -> Any:
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

    # -- the job ----------------------------------------------------------------------------

    def run(self) -> ReindexResult:
        rss_before = memory.rss_bytes()
        try:
            return self._run_phases()
        except BaseException as exc:
            self._on_failure(exc)
            raise
        finally:
            self._cleanup(rss_before)

    def _run_phases(self) -> ReindexResult:

        self.workdir.mkdir(parents=True, exist_ok=True)
        workspace, reuse = self._workspace()
        co = self._timed(
            "checkout",
            lambda: checkout(
                self.settings, self.request.source, self.request.ref, workspace, reuse=reuse
            ),
        )
        self.repo_key, self.commit = co.repo_key, co.commit
        self.runs.start(
            self.run_id,
            self.repo_key,
            self.commit,
            self.request.job_id,
            self.request.worker_id,
            time.time(),
        )
        fp = fingerprint(self.settings, self.embedder.model_id)
        if not self.request.force and self._unchanged(fp):
            self.runs.finish(self.run_id, "noop", time.time(), fingerprint=fp)
            self._log(logging.INFO, "reindex_noop", "unchanged commit and fingerprint")
            return ReindexResult(self.run_id, self.repo_key, self.commit, "noop")
        self._fault("after_checkout")

        spill = self.workdir / "parse.spill"
        parse_stats = self._timed("parse", lambda: self._parse(co.workspace, spill, fp))
        self._held.close()  # the work tree is read: another job of the repository may move it
        self.stats["parse"] = _as_dict(parse_stats)
        self._fault("after_spill")

        with self._timed("resolve", lambda: self._resolve(spill)) as resolution:
            self.stats["resolution"] = _as_dict(resolution.counts)
            self.stats["resolution_rate"] = round(resolution.rate, 4)

            index_stats = self._timed("embed_index", lambda: self._stage(spill, fp))
            self.stats["index"] = _as_dict(index_stats)
            self._fault("after_staging")
            self.checkpoint("before_publish")

            publish = self._timed("graph_publish", lambda: self._publish(co, resolution, fp))
        self.committed = True
        self.stats["publish"] = _as_dict(publish)
        self._fault("after_graph_commit")

        self._timed("alias_flip", self._flip)
        self._fault("after_alias_flip")
        self.runs.finish(self.run_id, "succeeded", time.time(), **self._run_fields(fp))
        self._log(logging.INFO, "reindex_succeeded", "reindex published", commit=self.commit)
        return ReindexResult(
            self.run_id,
            self.repo_key,
            self.commit,
            "succeeded",
            dict(self.phases),
            dict(self.stats),
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

        for repo in GraphReader(self.graph).repositories():
            if repo.get("key") != self.repo_key:
                continue
            live = self.index.live_index(self.repo_key)
            return bool(
                repo.get("commit") == self.commit
                and repo.get("fingerprint") == fp
                and live is not None
                and self.index.index_run_id(live) == repo.get("run_id")
            )
        return False

    def _parse(self, workspace: Path, spill: Path, fp: str) -> Any:

        if not self.settings.parse_cache:
            return parse_repository(
                self.settings, workspace, spill, checkpoint=self.checkpoint, progress=self.progress
            )
        # a forced reindex parses everything again (and refreshes the cache)
        reuse = not self.request.force
        with ParseCache.for_repo(self.settings, self.repo_key, fp, reuse=reuse) as cache:
            stats = parse_repository(
                self.settings,
                workspace,
                spill,
                checkpoint=self.checkpoint,
                progress=self.progress,
                cache=cache,
            )
            cache.commit()
        return stats

    def _resolve(self, spill: Path) -> Any:

        return resolve(_records(spill), self.repo_key, self.workdir / "resolve")

    def _stage(self, spill: Path, fp: str) -> Any:

        docs_fp = incremental.docs_fingerprint(fp, self.settings.search_max_code_chars)
        plan = None
        if not self.request.force:
            plan = incremental.plan(
                self.index,
                self.repo_key,
                docs_fp=docs_fp,
                model_id=self.embedder.model_id,
                dims=self.embedder.dims,
                graph_run_id=self._graph_run_id(),
                graph_files=self._graph_files,
                facts=_facts(spill)(),
            )
        self.staging = self.index.staging_name(self.repo_key, self.run_id)
        facts = _facts(spill)()
        if plan is None:
            self.index.create_staging(
                self.repo_key,
                self.run_id,
                self.embedder.dims,
                model_id=self.embedder.model_id,
                now=time.time(),
                docs_fingerprint=docs_fp,
            )
        else:
            meta = staging_meta(
                self.repo_key,
                self.run_id,
                self.embedder.dims,
                self.embedder.model_id,
                time.time(),
                docs_fp,
            )
            incremental.clone_live(self.index, self.repo_key, self.run_id, plan.live, meta)
            self.stats["incremental"] = {
                "from_index": plan.live,
                "changed_files": len(plan.changed),
                "removed_files": len(plan.removed),
                "deleted_docs": incremental.delete_paths(self.index, self.staging, plan.stale),
            }
            facts = (f for f in facts if f.path in plan.changed)
        self._fault("during_staging")
        stats = self.index.index_files(
            self.staging, self.repo_key, self.run_id, facts, self.embedder
        )
        self.index.refresh(self.staging)
        return stats

    def _graph_run_id(self) -> str | None:

        for repo in GraphReader(self.graph).repositories():
            if repo.get("key") == self.repo_key:
                run_id = repo.get("run_id")
                return str(run_id) if run_id is not None else None
        return None

    def _graph_files(self) -> dict[str, str]:

        return GraphReader(self.graph).file_blobs(self.repo_key)

    def _publish(self, co: Any, resolution: Any, fp: str) -> Any:

        repo = RepoInfo(
            key=co.repo_key, url=co.url, default_branch=co.default_branch, commit=co.commit
        )
        before_commit = self.faults.get("before_graph_commit")
        writer = GraphWriter(self.graph, self.settings)
        try:
            return writer.publish(
                repo,
                resolution,
                run_id=self.run_id,
                fingerprint=fp,
                now=time.time(),
                before_commit=before_commit,
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

    def _graph_has_run(self) -> bool:

        try:
            repos = GraphReader(self.graph).repositories()
        except GraphError:
            self.commit_in_doubt = True  # keep the staging index: repair may need it
            return False
        return any(r.get("key") == self.repo_key and r.get("run_id") == self.run_id for r in repos)

    def _flip(self) -> None:
        assert self.staging is not None
        try:
            self._fault("alias_flip")
            self.index.flip_alias(self.repo_key, self.staging)
        except Exception as exc:
            self.runs.finish(self.run_id, "diverged", time.time(), error=str(exc)[:2000])
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

    def _run_fields(self, fp: str) -> dict[str, Any]:
        return {
            "fingerprint": fp,
            "phases_s": json.dumps(self.phases),
            "stats": json.dumps(self.stats, default=str),
            "resolution_rate": self.stats.get("resolution_rate"),
        }

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
            status = "diverged" if self.committed else "failed"
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
        self.es.close()
        self._log(
            logging.INFO,
            "job_cleanup",
            "workspace and spill removed",
            rss_before=rss_before,
            rss_after=memory.rss_bytes(),
            malloc_trim=trimmed,
        )


def _as_dict(obj: Any) -> Any:
    if obj is None or isinstance(obj, (int, float, str, bool)):
        return obj
    if isinstance(obj, dict):
        return {str(k): _as_dict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_as_dict(v) for v in obj]
    if hasattr(obj, "__dataclass_fields__"):
        return {k: _as_dict(getattr(obj, k)) for k in obj.__dataclass_fields__}
    return str(obj)
