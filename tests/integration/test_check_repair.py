"""The divergence check and its repair against the real servers, for the repository states
a crash leaves behind: a first index that never published is not diverged, and a repair
never enqueues over a pending job or from a source nobody recorded (issue 19's defect 1:
the repair used the repository key as the source and corrupted the pending job)."""

from __future__ import annotations

import logging

import pytest
from elasticsearch import Elasticsearch
from prometheus_client import REGISTRY

from semgraph.check import check_repositories
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.runs import RunStore
from semgraph.indexer.request import ReindexArgs
from semgraph.queue.store import JobStore
from tests.optional import some

pytestmark = pytest.mark.integration

SOURCE = "https://git.example/org/app.git"


def _diverged(graph: Graph, key: str, *, url: str | None) -> None:
    """A repository whose graph names a run no index holds (the alias flip never ran)."""
    graph.query(
        "diverged repository",
        "MERGE (r:Repository {key: $key}) SET r.run_id = 'r-lost', r.url = $url",
        key=key,
        url=url,
    )


def test_a_first_index_that_died_is_unpublished_not_diverged(
    graph: Graph, es: Elasticsearch, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    RunStore(graph).start("run-1", "org-app", "c1", "job-1", "w", 1.0)  # then the worker died
    with caplog.at_level(logging.WARNING, logger="semgraph"):
        found = check_repositories(settings, graph, es, repair=True)
    assert [(c.repo, c.status) for c in found] == [("org-app", "unpublished")]
    assert not any(getattr(r, "action", "") == "index_diverged" for r in caplog.records)
    assert REGISTRY.get_sample_value("semgraph_index_diverged", {"repo": "org-app"}) == 0
    assert JobStore(graph, settings).list() == []  # nothing enqueued


def test_repair_leaves_a_pending_job_alone(
    graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    store = JobStore(graph, settings)
    pushed = ReindexArgs(SOURCE, ref="main", commit="c" * 40).to_json()
    job_id = store.enqueue("org-app", now=1.0, args=pushed, commit="c" * 40).job_id
    _diverged(graph, "org-app", url=None)
    found = check_repositories(settings, graph, es, repair=True, alert=False)
    assert [(c.status, c.detail) for c in found] == [
        ("in_flight", f"job {job_id} (pending) will publish it")
    ]
    job = some(store.get(job_id))
    assert job.args == pushed and job.commit == "c" * 40  # the push is intact


def test_repair_never_enqueues_from_a_source_nobody_recorded(
    graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    _diverged(graph, "org-app", url=None)
    found = check_repositories(settings, graph, es, repair=True, alert=False)
    assert found[0].status == "diverged" and "no recorded source" in found[0].detail
    assert JobStore(graph, settings).list() == []


def test_repair_requeues_from_the_recorded_source(
    graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    _diverged(graph, "org-app", url=SOURCE)
    found = check_repositories(settings, graph, es, repair=True, alert=False)
    assert found[0].status == "requeued"
    (job,) = JobStore(graph, settings).list()
    assert ReindexArgs.from_json(job.id, job.args) == ReindexArgs(SOURCE, force=True)
    (entry,) = job.history  # what the repair did is on the job
    assert entry.what.startswith("check --repair: graph run r-lost but index run None")


def test_repair_requeues_from_the_record_when_the_graph_has_no_url(
    graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    """A repository whose first index crashed before a publish wrote its URL: the record
    written at its first enqueue says where to reindex from."""
    store = JobStore(graph, settings)
    first = store.enqueue("org-app", now=1.0, args=ReindexArgs(SOURCE).to_json(), source=SOURCE)
    store.abandon(first.job_id, now=2.0, reason="op")
    _diverged(graph, "org-app", url=None)
    found = check_repositories(settings, graph, es, repair=True, alert=False)
    assert found[0].status == "requeued", found[0]
    (job,) = store.list(status="pending")
    assert job.args["source"] == SOURCE and job.args["force"] is True
