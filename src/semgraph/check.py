"""Divergence detection and repair (docs/architecture.md, invariant 5).

Detection does not rely on any ``except`` block having run: for every repository it compares
the run id recorded on ``:Repository`` (written in the graph transaction) with the run id of
the index behind the repository's alias. Repair finishes the alias flip when the staging
index of the graph's run still exists; otherwise it enqueues a reindex. It also says how
complete each repository's vectors are (progressive publish, :func:`watch_vectors`).

The module is over 300 lines because detection, repair and the graph parity check each keep
their alerts next to the comparison that raises them.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from dataclasses import asdict, dataclass
from typing import Any

import elasticsearch

from semgraph.alerts import Alerter
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import SemgraphError
from semgraph.graph import parity
from semgraph.graph.reader import GraphReader
from semgraph.graph.runs import RunStore
from semgraph.indexer.checkout import checkout
from semgraph.indexer.parse import parse_repository
from semgraph.indexer.parsecache import ParseCache
from semgraph.indexer.request import ReindexArgs
from semgraph.indexer.spill import SpillReader
from semgraph.logs import event
from semgraph.metrics import INDEX_DIVERGED, VECTORS_PENDING
from semgraph.queue.models import VECTORS_KIND, VECTORS_PRIORITY
from semgraph.queue.store import JobStore
from semgraph.queue.sweep import Identity, death_reason
from semgraph.resolve.resolver import resolve
from semgraph.search.index import SearchIndex
from semgraph.search.vectors import semantic_states

log = logging.getLogger(__name__)


@dataclass
class RepoCheck:
    repo: str
    graph_run_id: str | None
    index_run_id: str | None
    live_index: str | None
    status: str  # ok | unpublished | in_flight | diverged | repaired | requeued
    detail: str = ""
    # progressive publish: "complete", or "pending N of M chunks" (not a divergence: the
    # run is the same; vectors pending past vectors_stuck_after_s raise vectors_stuck)
    semantic: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_repositories(
    settings: Settings,
    graph: Graph,
    es: elasticsearch.Elasticsearch,
    *,
    repair: bool = False,
    alert: bool = True,
) -> list[RepoCheck]:
    index = SearchIndex(es, settings)
    results = []
    runs = RunStore(graph)
    for repo in GraphReader(graph).repositories():
        result = _check_one(index, repo)
        if result.status == "diverged" and _never_published(runs, result):
            # a first index that has not finished (or died): nothing to diverge from
            result.status, result.detail = "unpublished", "never published yet"
        if result.status == "diverged" and _in_flight(settings, graph, runs, result.graph_run_id):
            # committed a moment ago by a live worker that is about to flip the alias
            result.status, result.detail = "in_flight", "alias flip pending in a live run"
        if result.status == "diverged":
            INDEX_DIVERGED.labels(repo=result.repo).set(1)
            if alert:
                Alerter(settings).fire(
                    "index_diverged",
                    f"graph run {result.graph_run_id} but index run {result.index_run_id}",
                    repo=result.repo,
                    run_id=result.graph_run_id,
                )
            if repair:
                _repair(settings, graph, index, repo, result)
        else:
            INDEX_DIVERGED.labels(repo=result.repo).set(0)
        results.append(result)
    watch_vectors(settings, graph, index, results, repair=repair, alert=alert)
    return results


def watch_vectors(
    settings: Settings,
    graph: Graph,
    index: SearchIndex,
    results: list[RepoCheck],
    *,
    repair: bool,
    alert: bool,
) -> None:
    """Each published repository's semantic state (:mod:`semgraph.search.vectors`): vectors
    pending with no job to fill them get a vectors job (``repair``); an index whose vectors
    are still pending ``vectors_stuck_after_s`` after it was made raises ``vectors_stuck``."""
    live = sorted({r.live_index for r in results if r.live_index})
    states = semantic_states(index.es, live)
    now = time.time()
    for result in results:
        if result.live_index is None:
            continue
        semantic = states.get(result.repo)
        pending = semantic.pending if semantic is not None else 0
        VECTORS_PENDING.labels(repo=result.repo).set(pending)
        if semantic is None or not pending:
            result.semantic = "complete"
            continue
        result.semantic = f"pending {pending} of {semantic.chunks} chunks"
        active = _active_job(settings, graph, result.repo)
        stopped = _stopped_vectors_job(settings, graph, result.repo)
        if stopped is not None:
            result.semantic += f"; its vectors job {stopped}: requeue it after a look"
        elif active is None and repair:
            enq = JobStore(graph, settings).enqueue(
                result.repo,
                now=now,
                kind=VECTORS_KIND,
                priority=VECTORS_PRIORITY,
                note="check --repair: vectors pending with no job to fill them",
            )
            result.semantic += f"; vectors job {enq.job_id} ({enq.outcome})"
        created = float((index.index_meta(result.live_index) or {}).get("created_at") or now)
        if alert and now - created > settings.vectors_stuck_after_s:
            Alerter(settings).fire(
                "vectors_stuck",
                f"{pending} of {semantic.chunks} chunks still without vectors "
                f"{now - created:.0f} s after the index was made (job: {active or 'none'})",
                repo=result.repo,
                index=result.live_index,
            )


def _in_flight(settings: Settings, graph: Graph, runs: Any, run_id: str | None) -> bool:
    """Whether ``run_id`` is still being published by a live worker (its job runs under an
    owner the crash sweep would not recover)."""

    run = runs.get(run_id) if run_id else None
    if not run or run.get("status") != "running":
        return False
    me, now = Identity.current(), time.time()
    for job in JobStore(graph, settings).running_jobs():
        if job.id == run.get("job_id"):
            return death_reason(job, me, None, now) is None
    return False


def _never_published(runs: RunStore, result: RepoCheck) -> bool:
    """No graph run, no live index and no succeeded run: the repository has a record (its
    first job started) but was never published, so it cannot be diverged."""
    if result.graph_run_id is not None or result.live_index is not None:
        return False
    return not runs.list(repo=result.repo, status="succeeded", limit=1)


def _check_one(index: Any, repo: dict[str, Any]) -> RepoCheck:
    key = str(repo["key"])
    graph_run = repo.get("run_id")
    live = index.live_index(key)
    index_run = index.index_run_id(live) if live else None
    status = "ok" if graph_run is not None and graph_run == index_run else "diverged"
    return RepoCheck(key, graph_run, index_run, live, status)


def _repair(
    settings: Settings, graph: Graph, index: Any, repo: dict[str, Any], result: RepoCheck
) -> None:
    key = result.repo
    staging = index.staging_name(key, result.graph_run_id) if result.graph_run_id else None
    if staging and index.index_run_id(staging) == result.graph_run_id:
        index.flip_alias(key, staging)
        result.status, result.detail = "repaired", f"alias flipped to {staging}"
        INDEX_DIVERGED.labels(repo=key).set(0)
        _mark_run(graph, result.graph_run_id, "succeeded")
        RunStore(graph).note_repair(
            str(result.graph_run_id),
            f"check --repair: the alias pointed at run {result.index_run_id}; flipped it to"
            f" {staging}, the staging index of the graph's run",
            time.time(),
        )
    elif (active := _active_job(settings, graph, key)) is not None:
        # a pending or running job will publish the repository: a repair enqueue would
        # coalesce into it and could replace its arguments
        result.status, result.detail = "in_flight", f"job {active} will publish it"
    elif (source := _recorded_source(settings, graph, repo)) is None:
        result.detail = "no recorded source to reindex from: run `semgraph index SOURCE`"
    else:
        note = (
            f"check --repair: graph run {result.graph_run_id} but index run "
            f"{result.index_run_id}, and no staging index of the graph's run to flip to;"
            " queued a forced reindex"
        )
        enq = JobStore(graph, settings).enqueue(
            key,
            now=time.time(),
            args=ReindexArgs(source=source, force=True).to_json(),
            priority=10,
            note=note,
        )
        result.status, result.detail = "requeued", f"reindex job {enq.job_id} ({enq.outcome})"
    event(
        log,
        logging.WARNING,
        "index_repaired",
        result.detail,
        repo=key,
        run_id=result.graph_run_id,
        outcome=result.status,
    )


def _recorded_source(settings: Settings, graph: Graph, repo: dict[str, Any]) -> str | None:
    """The repository's recorded source (its first enqueue's), else the URL its last
    publish wrote (repositories indexed before records existed); never the key."""
    record = JobStore(graph, settings).record(str(repo["key"]))
    if record is not None and record.source:
        return record.source
    return str(repo["url"]) if repo.get("url") else None


def _active_job(settings: Settings, graph: Graph, key: str) -> str | None:
    store = JobStore(graph, settings)
    for status in ("running", "pending"):
        jobs = store.list(status=status, repo=key, limit=1)
        if jobs:
            return f"{jobs[0].id} ({status})"
    return None


def _stopped_vectors_job(settings: Settings, graph: Graph, key: str) -> str | None:
    """The repository's newest vectors job when it ended quarantined, failed or abandoned:
    a repair never queues another behind it (a vectors job that kills its worker would loop
    through every restart's maintenance pass); the ``vectors_stuck`` alert asks an operator."""
    jobs = [
        j for j in JobStore(graph, settings).list(repo=key, limit=100) if j.kind == VECTORS_KIND
    ]
    if not jobs:
        return None
    newest = max(jobs, key=lambda j: (j.updated_at, j.id))
    if newest.status.value in ("quarantined", "failed", "abandoned"):
        return f"{newest.id} ({newest.status.value})"
    return None


def _mark_run(graph: Graph, run_id: str | None, status: str) -> None:

    run = RunStore(graph).get(run_id) if run_id else None
    if run_id and run is not None and run.get("status") == "diverged":
        RunStore(graph).finish(run_id, status, time.time(), repaired=True)


def graph_parity(settings: Settings, graph: Graph, repo_key: str, *, alert: bool = True) -> Any:
    """Compare the live graph of ``repo_key`` with the graph a fresh full publish of its
    indexed commit writes (checked out, parsed with the parse cache of the indexed
    fingerprint, resolved); a mismatch fires the ``index_diverged`` alert. Returns a
    :class:`semgraph.graph.parity.ParityReport`."""

    repo = GraphReader(graph).repository(repo_key)
    if repo is None or not repo.get("commit"):
        raise SemgraphError(f"repository {repo_key!r} has no published graph")
    work = settings.state_dir / "parity" / f"{time.strftime('%Y%m%d%H%M%S')}-{os.getpid()}"
    try:
        co = checkout(settings, str(repo.get("url") or repo_key), str(repo["commit"]), work / "ws")
        spill = work / "parse.spill"
        fp = str(repo.get("fingerprint") or "")
        with ParseCache.for_repo(settings, repo_key, fp) as cache:  # read, never written back
            parse_repository(settings, co.workspace, spill, cache=cache)
        event(log, logging.INFO, "graph_parity", "model parsed; comparing", repo=repo_key)
        with resolve(lambda: iter(SpillReader(spill)), repo_key, work / "resolve") as res:
            model = parity.model_rows(res)
            report = parity.compare(repo_key, parity.live_rows(graph, repo_key), model, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    event(
        log,
        logging.INFO if report.ok else logging.CRITICAL,
        "graph_parity",
        "graph equals a full publish" if report.ok else "graph differs from a full publish",
        repo=repo_key,
        commit=repo["commit"],
        only_live=report.only_live,
        only_model=report.only_model,
    )
    if not report.ok and alert:
        INDEX_DIVERGED.labels(repo=repo_key).set(1)
        Alerter(settings).fire(
            "index_diverged",
            f"graph parity: {report.only_live} rows only in the graph, {report.only_model} "
            f"missing from it, against a full publish of {repo['commit']}",
            repo=repo_key,
            run_id=repo.get("run_id"),
        )
    return report
