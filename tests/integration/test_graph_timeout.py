"""A transaction the real server aborts at its timeout is GraphTimeout: never a conflict,
never retried by the queue, and an ordinary counted failure of the job that ran it.

Neo4j's server-wide ``db.transaction.timeout`` cannot be changed at runtime on Community
Edition (and would hit every other test), so the timeout here is the one a client may set at
BEGIN (``begin_transaction(timeout=...)``): the server aborts such a transaction exactly as it
does at ``db.transaction.timeout`` (Memgraph's ``--query-execution-timeout-sec`` abort is
recorded verbatim in tests/unit/test_graph_errors.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from semgraph.config import Settings, load_settings
from semgraph.db import Graph, graph_errors
from semgraph.errors import GraphConflict, GraphTimeout
from semgraph.queue import registry
from semgraph.queue.models import JobStatus
from semgraph.queue.registry import JobContext
from semgraph.queue.store import JobStore
from semgraph.queue.worker import Worker

pytestmark = pytest.mark.integration

# seconds of work on the server, far past the 0.5 s the transactions below may take
SLOW = "UNWIND range(1, 500000000) AS x WITH x WHERE x < 0 RETURN count(*) AS n"
TIMEOUT_S = 0.5


def run_past_timeout(graph: Graph, what: str) -> None:
    """Run SLOW in an explicit transaction the server must abort after TIMEOUT_S."""
    with graph_errors(what), graph.session() as session:
        tx = session.begin_transaction(timeout=TIMEOUT_S)
        try:
            tx.run(SLOW).consume()
        finally:
            if not tx.closed():
                tx.rollback()


def test_the_server_aborting_a_transaction_at_its_timeout_is_graph_timeout(graph: Graph) -> None:
    started = time.monotonic()
    with pytest.raises(GraphTimeout) as caught:
        run_past_timeout(graph, "publish")
    assert time.monotonic() - started < 30  # aborted by the server, not run to the end
    assert not isinstance(caught.value, GraphConflict)
    message = str(caught.value)
    assert "TransactionTimedOut" in message and "db.transaction.timeout" in message
    assert graph.query("still usable", "RETURN 1 AS one") == [{"one": 1}]


def test_the_queue_does_not_retry_a_timeout(graph: Graph, settings: Settings) -> None:
    sleeps: list[float] = []
    store = JobStore(graph, settings, sleep=sleeps.append)
    calls: list[int] = []

    def fn(tx: object) -> None:
        calls.append(1)
        run_past_timeout(graph, "claim")

    with pytest.raises(GraphTimeout):
        store._write("claim", fn)
    assert calls == [1] and sleeps == []


@pytest.fixture
def wsettings() -> Settings:
    return load_settings(
        heartbeat_s=1, lease_s=30, backoff_base_s=0, job_max_attempts=2, poll_interval_s=0.01
    )


@pytest.fixture
def timing_out_kind() -> Iterator[str]:
    def job(ctx: JobContext) -> None:
        ctx.checkpoint("start")
        run_past_timeout(ctx.graph, "publish graph")

    registry.register("wt_graph_timeout", job)
    yield "wt_graph_timeout"
    registry.unregister("wt_graph_timeout")


def test_a_job_whose_transaction_times_out_fails_like_any_error(
    graph: Graph, wsettings: Settings, timing_out_kind: str
) -> None:
    """Each attempt is charged, the error names the setting, and after max_attempts the job
    is failed: no endless retry."""
    store = JobStore(graph, wsettings)
    job_id = store.enqueue("r/slow-publish", now=time.time(), kind=timing_out_kind).job_id
    worker = Worker(wsettings, graph, tick_s=0.01)
    assert worker.run(once=True) == 0
    job = store.get(job_id)
    assert job is not None and (job.status, job.attempts) == (JobStatus.PENDING, 1)
    assert job.errors[-1].kind == "error"
    assert "GraphTimeout" in (job.last_error or "")
    assert "db.transaction.timeout" in (job.last_error or "")
    assert Worker(wsettings, graph, tick_s=0.01).run(once=True) == 0
    job = store.get(job_id)
    assert job is not None and (job.status, job.attempts) == (JobStatus.FAILED, 2)
    assert [e.kind for e in job.errors] == ["error", "error"]
