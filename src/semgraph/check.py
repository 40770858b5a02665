"""Divergence detection and repair (DESIGN.md invariant 5).

Detection does not rely on any ``except`` block having run: for every repository it compares
the run id recorded on ``:Repository`` (written in the graph transaction) with the run id of
the index behind the repository's alias. Repair finishes the alias flip when the staging
index of the graph's run still exists; otherwise it enqueues a reindex.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from typing import Any

from semgraph.alerts import Alerter
from semgraph.config import Settings
from semgraph.db import Graph, connect_search
from semgraph.logs import event
from semgraph.metrics import INDEX_DIVERGED

log = logging.getLogger(__name__)


@dataclass
class RepoCheck:
    repo: str
    graph_run_id: str | None
    index_run_id: str | None
    live_index: str | None
    status: str  # ok | diverged | repaired | requeued
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_repositories(
    settings: Settings, graph: Graph, *, repair: bool = False, alert: bool = True
) -> list[RepoCheck]:
    from semgraph.graph.reader import GraphReader
    from semgraph.search.index import SearchIndex

    es = connect_search(settings)
    try:
        index = SearchIndex(es, settings)
        results = []
        for repo in GraphReader(graph).repositories():
            result = _check_one(index, repo)
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
        return results
    finally:
        es.close()


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
    else:
        from semgraph.queue.store import JobStore

        source = repo.get("url") or key
        enq = JobStore(graph, settings).enqueue(
            key,
            now=time.time(),
            args={"source": source, "force": True},
            priority=10,
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


def _mark_run(graph: Graph, run_id: str | None, status: str) -> None:
    from semgraph.graph.runs import RunStore

    if run_id:
        runs = RunStore(graph)
        if runs.get(run_id) is not None:
            runs.finish(run_id, status, time.time(), repaired=True)
