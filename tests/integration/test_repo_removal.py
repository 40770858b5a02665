"""Removing a repository against the real Bolt server and Elasticsearch: everything of the
repository goes (graph, runs, indexes, alias, parse cache, published state, mirror, work
tree) and nothing of another one; a failure part-way leaves it ``removing`` (never listed
as live) and a second run finishes it; the removal goes through the queue and meets pushes
by the newest-request-wins rule (semgraph.repos.removal)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from semgraph.check import check_repositories
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.faults import Faults
from semgraph.graph.reader import GraphReader
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest, ReindexResult
from semgraph.jobs import register_job_kinds
from semgraph.queue.models import JobStatus
from semgraph.queue.records import record_props
from semgraph.queue.store import JobStore
from semgraph.queue.worker import Worker
from semgraph.repos import graph as gr
from semgraph.repos import removal
from semgraph.repos.listing import list_repositories, show_repository
from semgraph.search.index import SearchIndex
from semgraph.search.query import search
from tests.optional import some
from tests.repos import commit, make_repo
from tests.shared_kinds import KINDS, shared_embedder

pytestmark = pytest.mark.integration

FILES = {
    "app/models.py": "class Order:\n    def total(self):\n        return helper(1)\n",
    "app/util.py": "import os\n\ndef helper(x):\n    return os.path.join(str(x), 'y')\n",
    "web/main.js": "import {a} from './lib.js';\nfunction start() { return a(); }\n",
    "web/lib.js": "export function a() { return 1; }\n",
}


class Boom(RuntimeError):
    pass


def _stop(**_: Any) -> None:
    raise Boom("stopped")


def _index(settings: Settings, graph: Graph, es: Elasticsearch, repo: Path) -> ReindexResult:
    return Reindex(
        settings, graph, es, ReindexRequest(source=str(repo)), embedder=shared_embedder(settings)
    ).run()


@pytest.fixture
def two(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> Iterator[tuple[str, str]]:
    a = make_repo(tmp_path / "alpha", FILES)
    b = make_repo(tmp_path / "beta", {**FILES, "app/extra.py": "def beta_only():\n    pass\n"})
    first = _index(settings, graph, es, a)
    commit(a, {"app/more.py": "def more():\n    return 2\n"})
    _index(settings, graph, es, a)  # two runs: two IndexRun nodes, a delta publish
    yield first.repo_key, _index(settings, graph, es, b).repo_key


def _removal(
    settings: Settings, graph: Graph, es: Elasticsearch, key: str, **kw: Any
) -> removal.Removal:
    kw.setdefault("faults", Faults())
    return removal.Removal(
        settings, graph, es, key, job_id="job-test", requested_at=time.time(), **kw
    )


def _everything_of(
    settings: Settings, graph: Graph, es: Elasticsearch, key: str
) -> tuple[dict[str, int], list[str], list[str]]:
    counts = gr.GraphRemoval(graph, key).counts()
    indexes = SearchIndex(es, settings).repository_indexes(key)
    paths = [str(p) for p in removal.paths_of(settings, key) if p.exists()]
    return counts, indexes, paths


def test_removal_leaves_nothing_of_the_repository_and_keeps_the_other(
    settings: Settings, graph: Graph, es: Elasticsearch, two: tuple[str, str]
) -> None:
    gone, kept = two
    before_kept = _everything_of(settings, graph, es, kept)
    counts, indexes, paths = _everything_of(settings, graph, es, gone)
    assert counts["files"] >= 5 and counts["symbols"] > 0 and counts["runs"] == 2
    assert indexes and any(p.endswith(".git") for p in paths), paths  # mirror on disk
    assert any("/cache/" in p for p in paths)

    report = _removal(settings, graph, es, gone, slice_limit=3).run()

    assert _everything_of(settings, graph, es, gone) == (
        {"files": 0, "symbols": 0, "externals": 0, "runs": 0, "repository": 0, "record": 0},
        [],
        [],
    )
    assert report.marked and report.alias_removed and report.repository_deleted == 1
    assert report.indexes_deleted == indexes
    assert sorted(report.paths_deleted) == sorted(paths)
    # bounded: several slices of at most 3 rows each
    assert report.graph_transactions > len(gr.DELETE_SLICES) + 3
    assert report.graph_deleted["files"] == counts["files"]
    assert report.graph_deleted["index runs"] == 2
    leftover = graph.query("leftover", "MATCH (n {repo: $repo}) RETURN count(n) AS n", repo=gone)
    assert leftover == [{"n": 0}]
    # the other repository is untouched and still searchable
    assert _everything_of(settings, graph, es, kept) == before_kept
    assert [r["key"] for r in GraphReader(graph).repositories()] == [kept]
    hits = search(es, settings, shared_embedder(settings), "beta_only", repo=kept, k=3)
    assert hits and hits[0].symbol == "app.extra.beta_only"
    # removing it again is a no-op
    again = _removal(settings, graph, es, gone).run()
    assert (again.marked, again.alias_removed, again.repository_deleted) == (False, False, 0)
    assert again.indexes_deleted == [] and again.paths_deleted == []


def test_a_removal_that_fails_part_way_is_never_live_and_resumes(
    settings: Settings, graph: Graph, es: Elasticsearch, two: tuple[str, str]
) -> None:
    gone, kept = two
    slices: list[str] = []

    def fail_on_third(**context: Any) -> None:
        slices.append(str(context["what"]))
        if len(slices) == 3:
            raise Boom("injected")

    faults = Faults()
    faults.arm("remove.graph_slice", fail_on_third)
    with pytest.raises(Boom):
        _removal(settings, graph, es, gone, faults=faults, slice_limit=2).run()

    counts = gr.GraphRemoval(graph, gone).counts()
    assert counts["repository"] == 1 and counts["files"] + counts["symbols"] > 0
    # readers: not live anywhere; labelled where every repository is listed
    assert [r["key"] for r in GraphReader(graph).repositories()] == [kept]
    states = {r["key"]: r["state"] for r in GraphReader(graph).repositories(include_removing=True)}
    assert states == {gone: "removing", kept: None}
    assert {r["key"]: r["state"] for r in list_repositories(graph)} == {
        gone: "removing",
        kept: "live",
    }
    checked = check_repositories(settings, graph, es, alert=False)
    assert [(c.repo, c.status) for c in checked] == [(kept, "ok")]  # no false divergence
    shown = some(show_repository(settings, graph, es, gone))
    assert shown["state"] == "removing" and shown["live_index"] is None  # alias already off
    assert shown["repository"]["removing_job_id"] == "job-test"

    report = _removal(settings, graph, es, gone).run()
    assert report.repository_deleted == 1 and report.indexes_deleted
    assert _everything_of(settings, graph, es, gone)[0]["repository"] == 0
    assert show_repository(settings, graph, es, gone) is None


def test_records_of_unpublished_repositories_are_listed_and_removed(
    settings: Settings, graph: Graph, es: Elasticsearch
) -> None:
    graph.query(
        "record",
        "CREATE (:RepoRecord {key: 'rec-1', source: 'https://git.example/rec.git', "
        "host: 'github', default_branch: 'main', created_at: 5.0})",
    )
    assert list_repositories(graph) == [
        {
            "key": "rec-1",
            "source": "https://git.example/rec.git",
            "host": "github",
            "default_branch": "main",
            "created_at": 5.0,
            "state": "unpublished",
        }
    ]
    assert removal.is_known(graph, "rec-1") and not removal.is_known(graph, "rec-2")
    assert some(show_repository(settings, graph, es, "rec-1"))["state"] == "unpublished"
    report = _removal(settings, graph, es, "rec-1").run()
    assert (report.marked, report.repository_deleted, report.record_deleted) == (False, 0, 1)
    assert list_repositories(graph) == []


def test_alias_and_indexes_of_a_key_never_reach_a_longer_key(
    settings: Settings, es: Elasticsearch
) -> None:
    index = SearchIndex(es, settings)
    for key in ("ab", "ab-cd"):
        name = index.create_staging(key, "run1", 8)
        index.flip_alias(key, name)
    assert index.repository_indexes("ab") == [index.staging_name("ab", "run1")]
    assert index.remove_alias("ab") is True
    assert index.remove_alias("ab") is False
    assert index.live_index("ab") is None
    assert index.live_index("ab-cd") == index.staging_name("ab-cd", "run1")
    assert index.repository_indexes("ab-cd") == [index.staging_name("ab-cd", "run1")]
    assert index.repository_indexes("nope") == []


@pytest.fixture
def worker_settings(settings: Settings) -> Settings:
    register_job_kinds(KINDS)
    return settings.model_copy(update={"poll_interval_s": 0.05, "heartbeat_s": 0.2})


def test_the_removal_runs_through_the_queue_and_meets_pushes_newest_first(
    worker_settings: Settings, graph: Graph, es: Elasticsearch, two: tuple[str, str]
) -> None:
    gone, _ = two
    settings = worker_settings
    store = JobStore(graph, settings)
    push = {"source": "/nowhere", "commit": "c" * 40}
    now = time.time()
    # a removal requested while a reindex is pending becomes that job
    pending = store.enqueue(gone, now=now, args=push, commit="c" * 40).job_id
    asked = removal.request_removal(store, gone, now=now + 1, requested_by="test")
    assert (asked.job_id, asked.outcome) == (pending, "coalesced")
    assert some(store.get(pending)).kind == "remove"
    # a push while the removal is pending wins (newest request): the job is a reindex again
    store.enqueue(gone, now=now + 2, args=push, commit="d" * 40)
    assert some(store.get(pending)).kind == "reindex"
    again = removal.request_removal(store, gone, now=now + 3, requested_by="test")
    assert again.job_id == pending and some(store.get(pending)).kind == "remove"

    worker = Worker(settings, graph, hard_exit=lambda code: None, tick_s=0.01)
    assert worker.run(once=True) == 0
    job = some(store.get(pending))
    assert job.status is JobStatus.SUCCEEDED, job.last_error
    assert gr.GraphRemoval(graph, gone).counts()["repository"] == 0
    # a push after the removal completed is an ordinary fresh reindex
    fresh = store.enqueue(gone, now=now + 4, args=push, commit="e" * 40)
    assert fresh.outcome == "created" and fresh.job_id != pending
    assert some(store.get(fresh.job_id)).kind == "reindex"


def test_a_removal_queued_behind_a_running_reindex_survives_its_retry(
    settings: Settings, graph: Graph
) -> None:
    store = JobStore(graph, settings)
    now = time.time()
    running_id = store.enqueue("r-k", now=now, args={"source": "/x"}).job_id
    running = some(store.claim("w1", ["reindex"], now=now + 1))
    behind = removal.request_removal(store, "r-k", now=now + 2, requested_by="test")
    assert behind.outcome == "follow_up"
    store.fail(running_id, some(running.claim_token), now=now + 3, message="transient")
    job = some(store.get(running_id))
    # the failed reindex went back to pending and absorbed the removal: it is the removal now
    assert (job.status, job.kind) == (JobStatus.PENDING, "remove")
    assert store.get(behind.job_id) is None


def test_abandons_pending_jobs_queued_before_the_request_only(
    settings: Settings, graph: Graph, es: Elasticsearch
) -> None:
    store = JobStore(graph, settings)
    old = store.enqueue("r-old", now=100.0, args={"source": "/x"}).job_id
    report = removal.Removal(
        settings, graph, es, "r-old", job_id="other", requested_at=200.0, faults=Faults()
    ).run(now=300.0)
    assert report.abandoned == [old]
    assert some(store.get(old)).status is JobStatus.ABANDONED
    graph.query("record", "CREATE (:RepoRecord {key: 'r-new', source: '/x'})")
    newer = store.enqueue("r-new", now=500.0, args={"source": "/x"}).job_id
    report = removal.Removal(
        settings, graph, es, "r-new", job_id="other", requested_at=400.0, faults=Faults()
    ).run(now=600.0)
    assert report.abandoned == [] and some(store.get(newer)).status is JobStatus.PENDING
    # the push queued after the request indexes it again: its record stays
    assert (report.record_kept_for, report.record_deleted) == (newer, 0)
    assert record_props(graph, "r-new") == {"key": "r-new", "source": "/x"}


def test_a_push_after_a_removal_that_stopped_part_way_makes_it_live_again(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "back", FILES)
    first = _index(settings, graph, es, repo)
    complete = gr.GraphRemoval(graph, first.repo_key).counts()
    faults = Faults()
    faults.arm("remove.after_graph", _stop)
    with pytest.raises(Boom):
        _removal(settings, graph, es, first.repo_key, faults=faults).run()
    assert gr.GraphRemoval(graph, first.repo_key).counts()["files"] == 0
    # the same commit again (the removal failed for good, then a push came): not a no-op
    again = _index(settings, graph, es, repo)
    assert again.status.value == "succeeded" and again.run_id != first.run_id
    assert gr.GraphRemoval(graph, first.repo_key).counts() == {**complete, "runs": 1}
    assert [r["key"] for r in GraphReader(graph).repositories()] == [first.repo_key]
    assert list_repositories(graph)[0]["state"] == "live"
    hits = search(es, settings, shared_embedder(settings), "helper", repo=first.repo_key, k=3)
    assert hits
