"""The console's reads against the real graph server: every statement of
:mod:`semgraph.queue.browse_queries` (filtered, paged job list and its count, ids, counts
by state, kinds, workers, the timeline) and of the file view
(:data:`semgraph.graph.queries.FILE_OUTLINE`, ``FILE_CALLS``)."""

from __future__ import annotations

import pytest

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import QueueInputError
from semgraph.graph import fileview
from semgraph.queue import browse
from semgraph.queue.models import FailureKind
from semgraph.queue.store import JobStore

pytestmark = pytest.mark.integration

HOSTILE_TEXTS = [
    "<script>alert(1)</script>",
    "' OR 1=1 //",
    "}) MATCH (n) DETACH DELETE n //",
    "\x00\x01\x7f",
    "javascript:alert(1)",
    "\u202e\ufeff",
    "x" * 5000,
    "",
]


def _fill(graph: Graph, settings: Settings) -> tuple[JobStore, list[str]]:
    store = JobStore(graph, settings.model_copy(update={"job_max_attempts": 1}))
    ids = []
    for i in range(12):
        repo = f"repo-{i % 3}"
        ids.append(
            store.enqueue(f"{repo}-{i}", now=1000.0 + i, kind="k1" if i % 2 else "k2").job_id
        )
    # fail one with a recognisable error
    job = store.claim("w1", ["k2"], now=2000.0)
    assert job is not None
    done = store.fail(
        job.id,
        str(job.claim_token),
        now=2001.0,
        message="Checkout Failed: <b>boom</b>",
        kind=FailureKind.ERROR,
    )
    assert done is not None and done.status.value == "failed", done
    return store, ids


def test_page_count_and_filters(graph: Graph, settings: Settings) -> None:
    store, ids = _fill(graph, settings)
    everything = browse.page(graph, browse.JobFilter(), offset=0, limit=5)
    assert everything.total == 12 and len(everything.jobs) == 5 and everything.has_more
    assert [j.created_at for j in everything.jobs] == sorted(
        (j.created_at for j in everything.jobs), reverse=True
    )
    last = browse.page(graph, browse.JobFilter(), offset=10, limit=5)
    assert len(last.jobs) == 2 and not last.has_more
    seen = {
        j.id
        for o in (0, 5, 10)
        for j in browse.page(graph, browse.JobFilter(), offset=o, limit=5).jobs
    }
    assert seen == set(ids)
    failed = browse.JobFilter(status="failed")
    assert browse.count(graph, failed) == 1
    by_error = browse.JobFilter(error="checkout FAILED")  # case-insensitive
    assert [j.last_error for j in browse.page(graph, by_error).jobs] == [
        "Checkout Failed: <b>boom</b>"
    ]
    assert browse.count(graph, browse.JobFilter(kind="k1")) == 6
    assert browse.count(graph, browse.JobFilter(repo="repo-1-4")) == 1
    allow = browse.JobFilter(repos=("repo-0-0", "repo-0-3"))
    assert {j.repo_key for j in browse.page(graph, allow).jobs} == {"repo-0-0", "repo-0-3"}
    assert browse.count(graph, browse.JobFilter(repos=())) == 0
    assert len(browse.ids(graph, browse.JobFilter(kind="k2"), limit=3)) == 3
    counts = browse.state_counts(graph, None)
    assert counts["pending"] == 11 and counts["failed"] == 1 and counts["running"] == 0
    assert browse.state_counts(graph, ("repo-0-3",))["pending"] == 1
    assert browse.kinds(graph) == ["k1", "k2"]
    assert store.get(ids[0]) is not None


def test_hostile_and_oversized_filters(graph: Graph, settings: Settings) -> None:
    _fill(graph, settings)
    for text in filter(None, HOSTILE_TEXTS):
        flt = browse.JobFilter(repo=text[:512] or None, kind=text[:100] or None)
        assert browse.count(graph, flt) == 0  # bound parameters: never part of the statement
        try:
            assert browse.count(graph, browse.JobFilter(error=text)) == 0
        except QueueInputError:
            assert len(text) > browse.MAX_ERROR_FILTER_CHARS
    with pytest.raises(QueueInputError):
        browse.page(graph, browse.JobFilter(status="nope"))
    with pytest.raises(QueueInputError):
        browse.page(graph, browse.JobFilter(), limit=browse.MAX_PAGE + 1)
    with pytest.raises(QueueInputError):
        browse.page(graph, browse.JobFilter(), offset=-1)
    with pytest.raises(QueueInputError):
        browse.count(graph, browse.JobFilter(error="x" * 10_000))


def test_workers_and_timeline(graph: Graph, settings: Settings) -> None:
    store, _ = _fill(graph, settings)
    store.register_worker("w9", {"name": "pod-9", "host": "h9", "lane": "small"}, now=3000.0)
    running = store.claim("w9", ["k1"], now=3001.0)
    assert running is not None
    rows = browse.worker_rows(graph)
    mine = next(r for r in rows if r.worker["id"] == "w9")
    assert mine.worker["host"] == "h9" and mine.worker["lane"] == "small"
    assert [j.id for j in mine.jobs] == [running.id]
    timeline = browse.timeline(graph, since=1005.0, repos=None)
    assert len(timeline) == 7 and all(r["created_at"] >= 1005.0 for r in timeline)
    claimed = [r for r in browse.timeline(graph, since=0.0, repos=None) if r["claimed_at"]]
    assert len(claimed) == 2  # the failed job and the running one
    assert claimed and all(r["claimed_at"] >= r["created_at"] for r in claimed)
    assert browse.timeline(graph, since=0.0, repos=("repo-0-0",))[0]["created_at"] == 1000.0


def test_file_outline_and_calls(graph: Graph) -> None:
    graph.query(
        "test file",
        """
        CREATE (f:File {key: 'r|a.py', repo: 'r', path: 'a.py'})
        CREATE (s1:Symbol {key: 'r|a.f', repo: 'r', name: 'f', qualified_name: 'a.f',
                           kind: 'function', path: 'a.py', start_line: 1, end_line: 3})
        CREATE (s2:Symbol {key: 'r|a.g', repo: 'r', name: 'g', qualified_name: 'a.g',
                           kind: 'function', path: 'a.py', start_line: 5, end_line: 9})
        CREATE (s3:Symbol {key: 'r|b.g', repo: 'r', name: 'g', qualified_name: 'b.g',
                           kind: 'function', path: 'b.py', start_line: 2, end_line: 4})
        CREATE (f)-[:DEFINES]->(s1), (f)-[:DEFINES]->(s2)
        CREATE (s1)-[:CALLS {line: 2, tier: 'ambiguous', candidates: 2}]->(s2)
        CREATE (s1)-[:CALLS {line: 2, tier: 'ambiguous', candidates: 2}]->(s3)
        CREATE (s2)-[:CALLS {line: 7, tier: 'resolved'}]->(s1)
        """,
    )
    outline = fileview.outline(graph, "r", "a.py")
    assert [(o["qualified_name"], o["start_line"]) for o in outline] == [("a.f", 1), ("a.g", 5)]
    assert [o["qualified_name"] for o in fileview.outline(graph, "r", "a.py", 4, 20)] == ["a.g"]
    assert fileview.outline(graph, "r", "a.py", 10, 20) == []
    calls = fileview.calls(graph, "r", "a.py", 1, 3)
    assert [(c["line"], c["qualified_name"], c["tier"], c["candidates"]) for c in calls] == [
        (2, "a.g", "ambiguous", 2),
        (2, "b.g", "ambiguous", 2),
    ]
    assert [c["candidates"] for c in fileview.calls(graph, "r", "a.py", 5, 9)] == [1]
    assert fileview.calls(graph, "r", "a.py", 10, 20) == []
    assert fileview.outline(graph, "r", "<script>.py") == []
