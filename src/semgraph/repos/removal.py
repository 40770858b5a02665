"""Removing a repository: the ``remove`` job kind, and how it is requested (``semgraph repos
remove``, ``DELETE /repos/{key}``, a host's repository-deleted webhook).

A removal is a job like a reindex: it goes through the queue (never inline), is claimed and
fenced like any job, and at most one job of a repository runs at a time, so no reindex of
the repository runs while it is removed. It runs, in this order, each step idempotent (a
crash part-way leaves the job to the queue's retry, and the retry finds what is left):

1. abandon the repository's pending jobs queued before the removal was requested;
2. mark the ``:Repository`` node ``removing`` (listings skip or label it from now on) and
   take the search alias off (searches stop finding the repository);
3. delete the subgraph and the ``:IndexRun`` history in bounded transactions;
4. delete every Elasticsearch index of the repository;
5. delete this host's caches: the parse cache, the resolution, the work tree and the mirror
   (every other host's maintenance deletes its own: :mod:`semgraph.maintenance.hostcaches`);
6. delete the ``:Repository`` node, and last its ``:RepoRecord`` (kept when a push queued
   while the removal ran waits to index the repository again from the recorded source).

How a removal meets other requests of the repository is the queue's ordinary rule, the
newest request wins: a removal requested while a reindex is pending turns that job into
the removal (the push it carried is superseded); a push that arrives while the removal is
pending turns it back into a reindex (the repository is indexed at that commit instead of
removed); a push that arrives while the removal runs is queued behind it and indexes the
repository from scratch once it completed, as any push after the removal does. The queue
history (``:JobQueue``, ``:JobDelivery``, ``:RepoLock``) is kept: it records the removal.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.faults import Faults
from semgraph.indexer.checkout import worktree_path
from semgraph.indexer.parsecache import cache_dir
from semgraph.indexer.resolvecache import cache_path
from semgraph.logs import event
from semgraph.queue.enqueue import enqueue_request
from semgraph.queue.models import EnqueueRequest, EnqueueResult, JobStatus
from semgraph.queue.records import record_props
from semgraph.queue.store import JobStore
from semgraph.repos import graph as gr
from semgraph.search.index import SearchIndex
from semgraph.xrepo.relink import relink_dependents

log = logging.getLogger(__name__)

KIND = "remove"
#: fault points between the steps (tests arm them through ``SEMGRAPH_FAULTS``)
POINTS = (
    "remove.after_abandon",
    "remove.after_mark",
    "remove.graph_slice",
    "remove.after_graph",
    "remove.after_search",
    "remove.after_disk",
    "remove.after_repository",
)


def removal_args(requested_at: float, requested_by: str) -> dict[str, Any]:
    return {"requested_at": requested_at, "requested_by": requested_by}


def is_known(graph: Graph, repo_key: str) -> bool:
    """Whether the graph knows ``repo_key`` (a ``:Repository`` or a ``:RepoRecord``)."""
    return (
        gr.repository_props(graph, repo_key) is not None
        or record_props(graph, repo_key) is not None
    )


def request_removal(
    store: JobStore,
    repo_key: str,
    *,
    now: float,
    requested_by: str,
    delivery_key: str | None = None,
) -> EnqueueResult:
    """Queue the removal of ``repo_key`` (the caller checked that it is known)."""
    result = store.enqueue_many(
        [removal_request(repo_key, now=now, requested_by=requested_by, delivery_key=delivery_key)],
        now=now,
    )[0]
    event(
        log,
        logging.INFO,
        "repository_removal_queued",
        repo=repo_key,
        job_id=result.job_id,
        outcome=result.outcome,
        requested_by=requested_by,
    )
    return result


def removal_request(
    repo_key: str,
    *,
    requested_by: str,
    now: float | None = None,
    delivery_key: str | None = None,
) -> EnqueueRequest:
    """The validated enqueue of a removal (requested ``now``, default the present)."""
    return enqueue_request(
        repo_key,
        kind=KIND,
        args=removal_args(time.time() if now is None else now, requested_by),
        delivery_key=delivery_key,
        priority=0,
    )


def paths_of(settings: Settings, repo_key: str) -> list[Path]:
    """What the repository keeps on this host's disk (files and directories; the same
    entries :mod:`semgraph.maintenance.hostcaches` sweeps on every host)."""
    mirrors = settings.mirrors_path
    tree = worktree_path(settings, repo_key)
    resolution = cache_path(settings, repo_key)
    local = [
        cache_dir(settings, repo_key),
        resolution,
        *sorted(resolution.parent.glob(resolution.name + "-*")),  # a journal left by a crash
        tree,
        tree.with_name(tree.name + ".lock"),
    ]
    mirror = [mirrors / f"{repo_key}{suffix}" for suffix in (".git", ".git.tmp", ".lock")]
    # the mirror is named by the key itself: never follow a key out of the mirrors directory
    root = mirrors.resolve()
    local += [p for p in mirror if p.resolve().parent == root]
    return local


def _delete_path(path: Path) -> bool:
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
        return True
    if path.is_dir():
        shutil.rmtree(path)
        return True
    return False


@dataclass
class RemovalReport:
    repo: str
    abandoned: list[str] = field(default_factory=list)
    marked: bool = False
    alias_removed: bool = False
    graph_deleted: dict[str, int] = field(default_factory=dict)
    graph_transactions: int = 0
    indexes_deleted: list[str] = field(default_factory=list)
    paths_deleted: list[str] = field(default_factory=list)
    repository_deleted: int = 0
    record_deleted: int = 0
    record_kept_for: str | None = None  # a job queued after the request indexes it again
    relinked: list[str] = field(default_factory=list)  # dependents re-linked

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Removal:
    """One repository's removal, step by step (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        graph: Graph,
        es: elasticsearch.Elasticsearch,
        repo_key: str,
        *,
        job_id: str,
        requested_at: float,
        faults: Faults,
        checkpoint: Callable[[str], None] = lambda name: None,
        slice_limit: int = 5000,
    ) -> None:
        self.settings = settings
        self.graph = graph
        self.repo = repo_key
        self.job_id = job_id
        self.requested_at = requested_at
        self.faults = faults
        self.checkpoint = checkpoint
        self.store = JobStore(graph, settings)
        self.index = SearchIndex(es, settings, faults=faults)
        self.graph_side = gr.GraphRemoval(graph, repo_key, limit=slice_limit)
        self.report = RemovalReport(repo_key)

    def run(self, now: float | None = None) -> RemovalReport:
        now = time.time() if now is None else now
        event(log, logging.INFO, "repository_removal_started", repo=self.repo, job_id=self.job_id)
        self._abandon(now)
        self._step("remove.after_abandon")
        self.report.marked = self.graph_side.mark_removing(self.job_id, now)
        self.report.alias_removed = self.index.remove_alias(self.repo)
        self._step("remove.after_mark")
        self._graph()
        # its dependents lose their links into it (its symbols are gone, it is 'removing');
        # before the :Repository node goes, so a retry still finds them by its packages
        self.report.relinked = sorted(relink_dependents(self.graph, self.repo, everything=True))
        self._step("remove.after_graph")
        for name in self.index.repository_indexes(self.repo):
            if self.index.delete_index(name):
                self.report.indexes_deleted.append(name)
        self._step("remove.after_search")
        for path in paths_of(self.settings, self.repo):
            if _delete_path(path):
                self.report.paths_deleted.append(str(path))
        self._step("remove.after_disk")
        self.report.repository_deleted = self.graph_side.delete_repository()
        self.faults.point("remove.after_repository", repo=self.repo)
        self.report.record_kept_for = self._newer_pending()
        if self.report.record_kept_for is None:
            self.report.record_deleted = self.graph_side.delete_record()
        event(
            log,
            logging.INFO,
            "repository_removed",
            repo=self.repo,
            job_id=self.job_id,
            abandoned=len(self.report.abandoned),
            graph_transactions=self.report.graph_transactions,
            graph_deleted=sum(self.report.graph_deleted.values()),
            indexes=len(self.report.indexes_deleted),
            paths=len(self.report.paths_deleted),
        )
        return self.report

    def _step(self, name: str) -> None:
        self.faults.point(name, repo=self.repo)
        self.checkpoint(name)

    def _abandon(self, now: float) -> None:
        """Abandon the repository's pending jobs queued before the removal was requested
        (those queued after it are newer requests and run after the removal)."""
        for job in self.store.list(status=JobStatus.PENDING.value, repo=self.repo, limit=1000):
            if job.id == self.job_id or job.created_at > self.requested_at:
                continue
            self.store.abandon(
                job.id, now=now, reason=f"repository {self.repo} removed by job {self.job_id}"
            )
            self.report.abandoned.append(job.id)

    def _newer_pending(self) -> str | None:
        """A pending job of the repository queued after the removal was requested (a push
        while it ran): it indexes the repository again from its recorded source, so the
        record stays."""
        for job in self.store.list(status=JobStatus.PENDING.value, repo=self.repo, limit=10):
            if job.id != self.job_id and job.created_at > self.requested_at:
                return job.id
        return None

    def _graph(self) -> None:
        def after_slice(what: str, deleted: int) -> None:
            self.faults.point("remove.graph_slice", repo=self.repo, what=what, deleted=deleted)

        for step in self.graph_side.delete_slices(after_slice):
            self.report.graph_deleted[step.what] = step.deleted
            self.report.graph_transactions += step.transactions
