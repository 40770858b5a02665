"""The vectors job kind (progressive publish) in the real worker process: a vectors job that
SIGKILLs its worker at every window is quarantined like any crash-looping job and the rest of
the queue keeps flowing; the next vectors job finishes the commit; a push-only worker
publishes a repository without loading the embedding model."""

from __future__ import annotations

import time
from pathlib import Path

from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.indexer.sources import repo_key_for
from semgraph.jobs import register_job_kinds
from semgraph.queue.models import VECTORS_KIND, JobStatus
from semgraph.queue.store import JobStore
from semgraph.queue.worker import Worker
from semgraph.search.index import SearchIndex
from semgraph.search.vectors import pending_count
from tests.e2e.test_worker_process import finish, start_worker
from tests.optional import some
from tests.repos import POLYGLOT, make_repo
from tests.shared_kinds import KINDS


def _publish_pending(graph: Graph, settings: Settings, repo: Path) -> tuple[JobStore, str]:
    """Index ``repo`` in this process with every vector left pending; its vectors job waits."""
    deferred = settings.model_copy(
        update={"embed_inline_max_chunks": 0, "job_max_crashes": 2, "job_max_attempts": 5}
    )
    register_job_kinds(KINDS)
    store = JobStore(graph, deferred)
    key = repo_key_for(str(repo))
    store.enqueue(key, now=time.time(), args={"source": str(repo)}, source=f"file://{repo}")
    assert Worker(deferred, graph, store=store).run(once=True) == 0
    [vectors] = store.list(status="pending", repo=key)
    assert vectors.kind == VECTORS_KIND
    return store, vectors.id


def test_a_vectors_job_that_kills_its_worker_is_quarantined_and_the_queue_flows(
    graph: Graph, es: Elasticsearch, settings: Settings, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "poly", POLYGLOT)
    store, vectors_id = _publish_pending(graph, settings, repo)
    tally = tmp_path / "tally"
    good = store.enqueue("r/good", now=time.time(), kind="test_record", args={"tally": str(tally)})
    codes: list[int] = []
    out = ""
    for _ in range(6):  # a supervisor restarting the worker; the loop must end by itself
        code, out = finish(
            start_worker("--idle-exit-s", "0", env={"SEMGRAPH_FAULTS": "vectors.window=sigkill"})
        )
        codes.append(code)
        if code == 0:
            break
    assert codes == [-9, -9, 0], out
    job = some(store.get(vectors_id))
    assert (job.status, job.crash_count) == (JobStatus.QUARANTINED, 2)
    assert some(store.get(good.job_id)).status is JobStatus.SUCCEEDED
    assert "job_quarantined" in out

    # no vector was lost or half-written: the next vectors job (a requeue) finishes the commit
    store.requeue(vectors_id, now=time.time())
    code, out = finish(start_worker("--idle-exit-s", "0", "--role", "embed"))
    assert code == 0, out
    index = SearchIndex(es, settings)
    assert pending_count(index, index.live_index(repo_key_for(str(repo))) or "") == 0


def test_a_push_only_worker_publishes_without_the_model_and_leaves_the_vectors(
    graph: Graph, es: Elasticsearch, settings: Settings, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "poly", POLYGLOT)
    key = repo_key_for(str(repo))
    store = JobStore(graph, settings)
    store.enqueue(key, now=time.time(), args={"source": str(repo)}, source=f"file://{repo}")
    code, out = finish(start_worker("--idle-exit-s", "0", "--role", "push"))
    assert code == 0, out
    index = SearchIndex(es, settings)
    live = index.live_index(key)
    assert live is not None and pending_count(index, live) == index.count(live) - _history(es, live)
    # the push worker ran until idle and left the vectors job to a worker that embeds
    [vectors] = store.list(status="pending", repo=key)
    assert vectors.kind == VECTORS_KIND
    assert "embedding_model_loaded" not in out


def _history(es: Elasticsearch, live: str) -> int:
    """The index's commit-history documents (they have no vector to wait for)."""
    return int(es.count(index=live, query={"exists": {"field": "history_path"}})["count"])
