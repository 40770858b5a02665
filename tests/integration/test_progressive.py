"""Progressive publish against the real Bolt server and Elasticsearch (docs/search.md,
"Progressive publish"; DESIGN.md invariant 4): a reindex publishes the graph and keywords with
its vectors pending, a vectors job of its own kind fills them in (a second step any worker
resumes), a push in the pending window is embedded at once and re-targets the pending work
without embedding any text twice, and the end state equals a job that embedded everything
itself."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from elasticsearch import Elasticsearch

from semgraph.check import check_repositories
from semgraph.commands.progress import vectors_line
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import SearchBulkError
from semgraph.faults import Faults
from semgraph.indexer.sources import repo_key_for
from semgraph.jobs import register_job_kinds
from semgraph.localize.locate import localize
from semgraph.mcp.backend import Backend
from semgraph.mcp.tokens import TokenCounter
from semgraph.mcp.tools import Tools
from semgraph.queue.models import VECTORS_KIND, VECTORS_PRIORITY, JobStatus, role_kinds
from semgraph.queue.store import JobStore
from semgraph.queue.worker import Worker
from semgraph.repos.listing import show_repository
from semgraph.search.index import SearchIndex
from semgraph.search.progress import VectorsProgress
from semgraph.search.query import search_answer
from semgraph.search.vectors import VectorsFill, pending_count, semantic_states
from semgraph.web.app import create_app
from semgraph.web.fixtures import serve_in_thread
from tests.repos import POLYGLOT, commit, make_repo
from tests.shared_kinds import KINDS, shared_embedder

pytestmark = pytest.mark.integration

QUERY = "compute a checksum of the payload"


def _settings(settings: Settings, **update: object) -> Settings:
    base = {"poll_interval_s": 0.01, "backoff_base_s": 0, "claim_affinity_s": 0}
    return settings.model_copy(update={**base, **update})


def _enqueue(store: JobStore, repo: Path) -> str:
    key = repo_key_for(str(repo))
    url = f"file://{repo}"
    return store.enqueue(key, now=time.time(), args={"source": str(repo)}, source=url).job_id


def _jobs(store: JobStore, key: str) -> list[tuple[str, str, int]]:
    return sorted(
        (j.kind, j.status.value, j.priority)
        for status in ("pending", "running")
        for j in store.list(status=status, repo=key)
    )


@dataclass
class Published:
    """POLYGLOT first-indexed by a worker's reindex with every vector left pending."""

    repo: Path
    key: str
    settings: Settings
    store: JobStore
    worker: Worker
    index: SearchIndex

    def pending(self) -> int:
        return pending_count(self.index, self.index.live_index(self.key) or "")


def _published(
    tmp_path: Path, graph: Graph, es: Elasticsearch, settings: Settings, **update: object
) -> Published:
    """The repository published (graph + keywords), its vectors job pending behind it."""
    repo = make_repo(tmp_path / "poly", POLYGLOT)
    deferred = _settings(settings, embed_inline_max_chunks=0, **update)
    register_job_kinds(KINDS)
    store = JobStore(graph, deferred)
    _enqueue(store, repo)
    worker = Worker(deferred, graph, store=store)
    assert worker.run(once=True) == 0  # the reindex only: the vectors job waits behind it
    key = repo_key_for(str(repo))
    return Published(repo, key, deferred, store, worker, SearchIndex(es, deferred))


def _knn(es: Elasticsearch, settings: Settings, key: str) -> list[tuple[str, int]]:
    answer = search_answer(
        es, settings, shared_embedder(settings), QUERY, repo=key, mode="knn", k=20
    )
    return [(h.path, h.start_line) for h in answer.hits]


def test_graph_and_keywords_first_then_the_vectors_job_completes_the_commit(
    tmp_path: Path, graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    pub = _published(tmp_path, graph, es, settings)
    repo, key, deferred, store, worker = pub.repo, pub.key, pub.settings, pub.store, pub.worker
    assert _jobs(store, key) == [(VECTORS_KIND, "pending", VECTORS_PRIORITY)]
    index = SearchIndex(es, deferred)
    live = index.live_index(key)
    assert live is not None
    pending = pending_count(index, live)
    assert pending > 0
    # graph + keywords of the commit answer, kNN answers from what is there and says so
    bm25 = search_answer(es, deferred, None, "checksum", repo=key, mode="bm25")
    assert bm25.hits and bm25.semantic[key].state == "pending"
    assert bm25.semantic[key].pending == pending
    assert bm25.semantic[key].line() == f"semantic: pending {pending:,} of {pending:,} chunks"
    assert _knn(es, deferred, key) == []
    [checked] = check_repositories(deferred, graph, es)
    assert checked.status == "ok" and checked.semantic == f"pending {pending} of {pending} chunks"

    assert worker.run(once=True) == 0  # the vectors job
    assert _jobs(store, key) == []
    assert pending_count(index, live) == 0 and index.live_index(key) == live
    done = search_answer(es, deferred, None, "checksum", repo=key, mode="bm25")
    assert done.semantic[key].state == "complete"
    assert check_repositories(deferred, graph, es)[0].semantic == "complete"
    progressive = _knn(es, deferred, key)
    assert progressive

    # the same commit indexed by a job that embeds everything itself: the same answers
    whole = _settings(settings, embed_inline_max_chunks=-1)
    es.indices.delete(index=live)
    graph.query("test reset", "MATCH (n) DETACH DELETE n")
    store = JobStore(graph, whole)
    _enqueue(store, repo)
    assert Worker(whole, graph, store=store).run(once=True) == 0
    assert _jobs(store, key) == []
    assert pending_count(index, index.live_index(key) or "") == 0
    assert _knn(es, whole, key) == progressive


def test_a_push_while_vectors_are_pending_embeds_its_change_and_retargets_the_rest(
    tmp_path: Path, graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    pub = _published(tmp_path, graph, es, settings)
    repo, key, first, store = pub.repo, pub.key, pub.settings, pub.store
    index = SearchIndex(es, first)
    before = pending_count(index, index.live_index(key) or "")
    assert before > 0

    # the push: merged into the pending vectors job, which becomes the push's reindex
    commit(repo, {"app/extra.py": "def quokka_extra_sum(xs):\n    return sum(xs)\n"})
    push = _settings(settings, embed_inline_max_chunks=64)
    store = JobStore(graph, push)
    job_id = _enqueue(store, repo)
    assert _jobs(store, key) == [("reindex", "pending", 0)]
    worker = Worker(push, graph, store=store)
    assert worker.run(once=True) == 0
    assert store.get(job_id).status is JobStatus.SUCCEEDED  # type: ignore[union-attr]
    live = index.live_index(key) or ""
    # its own chunk has its vector at once; the first commit's pending chunks are still there
    hits = _knn_paths(es, push, key, "quokka extra sum")
    assert "app/extra.py" in hits
    assert pending_count(index, live) == before
    assert _jobs(store, key) == [(VECTORS_KIND, "pending", VECTORS_PRIORITY)]

    # the vectors job embeds exactly the first commit's pending texts: none the push made
    waiting = {k for k, has in _keys(es, live).items() if not has}
    stats = VectorsFill(index, shared_embedder(push), key).run()
    assert stats.filled == before and stats.pending_left == 0
    assert stats.embedded == len(waiting) and stats.store_reused == 0
    assert all(_keys(es, live).values())


def _knn_paths(es: Elasticsearch, settings: Settings, key: str, text: str) -> list[str]:
    answer = search_answer(es, settings, shared_embedder(settings), text, repo=key, mode="knn", k=5)
    return [h.path for h in answer.hits]


def test_the_vectors_job_stops_for_a_push_and_a_second_pass_finds_what_a_page_cut(
    tmp_path: Path, graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    pub = _published(tmp_path, graph, es, settings, vectors_window_chunks=2)
    key, deferred = pub.key, pub.settings
    index = SearchIndex(es, deferred)
    live = index.live_index(key) or ""
    pending = pending_count(index, live)
    assert pending > 4

    calls = iter([True])  # asked after the first window (each job makes one at least)
    stats = VectorsFill(
        index, shared_embedder(deferred), key, should_yield=lambda: next(calls)
    ).run()
    assert stats.yielded and stats.filled == 2 and stats.pending_left == pending - 2

    stats = VectorsFill(index, shared_embedder(deferred), key).run()
    assert not stats.yielded and stats.pending_left == 0
    assert stats.filled == pending - 2 and stats.windows >= (pending - 2) // 2
    assert semantic_states(es, [live])[key].state == "complete"


def _keys(es: Elasticsearch, live: str) -> dict[str, bool]:
    """Each chunk's vector key, and whether its document has its vector."""
    es.indices.refresh(index=live)
    resp = es.search(index=live, size=1000, query={"exists": {"field": "vector_key"}})
    found: dict[str, bool] = {}
    for hit in resp["hits"]["hits"]:
        key = hit["_source"]["vector_key"]
        found[key] = found.get(key, False) or "embedding" in hit["_source"]
    return found


def test_roles_and_the_follow_on_merge() -> None:
    kinds = ["reindex", "remove", VECTORS_KIND]
    assert role_kinds("all", kinds) == kinds
    assert role_kinds("push", kinds) == ["reindex", "remove"]
    assert role_kinds("embed", kinds) == [VECTORS_KIND]


def test_check_repair_queues_a_vectors_job_for_pending_vectors_without_one(
    tmp_path: Path, graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    pub = _published(tmp_path, graph, es, settings, vectors_stuck_after_s=0.001)
    key, deferred, store = pub.key, pub.settings, pub.store
    [vectors] = store.list(status="pending", repo=key)
    # an operator abandoned it: no repair queues another (a crash loop would come back)
    store.abandon(vectors.id, now=time.time(), reason="test: stop it")
    [seen] = check_repositories(deferred, graph, es, repair=True)
    assert seen.semantic is not None and seen.semantic.startswith("pending")
    assert f"its vectors job {vectors.id} (abandoned)" in seen.semantic
    assert _jobs(store, key) == []
    # the job is lost (purged): the repair queues one
    graph.query("lose the job", "MATCH (j:JobQueue {id: $id}) DETACH DELETE j", id=vectors.id)
    [repaired] = check_repositories(deferred, graph, es, repair=True)
    assert "; vectors job " in (repaired.semantic or "")
    assert _jobs(store, key) == [(VECTORS_KIND, "pending", VECTORS_PRIORITY)]


def test_vectors_written_by_a_job_that_died_before_its_refresh_reach_the_next_push(
    tmp_path: Path, graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    pub = _published(tmp_path, graph, es, settings, vectors_window_chunks=3)
    repo, key, deferred, store = pub.repo, pub.key, pub.settings, pub.store
    index = SearchIndex(es, deferred)
    pending = pending_count(index, index.live_index(key) or "")

    class Died(RuntimeError):
        pass

    windows = iter(range(100))

    def die_at_second(**_: object) -> None:
        if next(windows) == 1:
            raise Died("the worker died here")

    faults = Faults()
    faults.arm("vectors.window", die_at_second)
    with pytest.raises(Died):
        VectorsFill(index, shared_embedder(deferred), key, faults=faults).run()
    # the first window's three vectors are written, not refreshed: a push clones them
    commit(repo, {"app/extra.py": "def quokka_extra_sum(xs):\n    return sum(xs)\n"})
    push = _settings(settings, embed_inline_max_chunks=64)
    store = JobStore(graph, push)
    _enqueue(store, repo)
    assert Worker(push, graph, store=store).run(once=True) == 0
    assert pending_count(index, index.live_index(key) or "") == pending - 3


def test_a_failed_write_in_flight_fails_the_job_and_its_vectors_are_in_the_store(
    tmp_path: Path, graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    """A window's writes run in a thread while the next window embeds: their failure is the
    job's, and the vectors they had put in the store come back without the model."""
    pub = _published(tmp_path, graph, es, settings, vectors_window_chunks=3)
    index, key = pub.index, pub.key
    pending = pub.pending()
    fill = VectorsFill(index, shared_embedder(pub.settings), key)

    def refused(live: str, updates: list[tuple[str, list[float]]]) -> None:
        raise SearchBulkError(f"update vectors in {live}: {len(updates)} rejected")

    fill._update = refused  # type: ignore[method-assign]
    with pytest.raises(SearchBulkError, match="rejected"):
        fill.run()
    assert pub.pending() == pending  # no document changed
    shown: list[VectorsProgress] = []  # what `semgraph index` draws on a terminal
    again = VectorsFill(index, shared_embedder(pub.settings), key, progress=shown.append).run()
    assert again.filled == pending and again.store_reused >= 1  # the first window's vectors
    assert pub.pending() == 0
    assert [p.filled for p in shown] == sorted({p.filled for p in shown})
    assert shown[-1].filled == shown[-1].total == pending
    assert vectors_line(shown[-1]).startswith(f"vectors: {pending:,}/{pending:,} chunks, ")


def test_every_surface_says_the_semantic_state(
    tmp_path: Path, graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    pub = _published(tmp_path, graph, es, settings)
    key, deferred, store, worker = pub.key, pub.settings, pub.store, pub.worker
    pending = pub.pending()
    shown = show_repository(deferred, graph, es, key)
    assert shown is not None
    assert shown["semantic"] == {"state": "pending", "chunks": pending, "pending": pending}
    located = localize(es, graph, deferred, shared_embedder(deferred), "checksum", repo=key)
    assert located.to_dict()["semantic"] == shown["semantic"]
    tools = Tools(Backend(deferred, graph, es, store, TokenCounter(deferred)))
    got = tools.call("search_code", None, {"text": "checksum", "repo": key})
    assert got["status"] == "ok" and got["semantic"] == {key: shown["semantic"]}
    with serve_in_thread(create_app(deferred, graph=graph, search=es)) as base:
        resp = httpx.get(f"{base}/search", params={"q": "checksum", "repo": key}, timeout=60)
        assert resp.status_code == 200, resp.text
        assert resp.json()["semantic"] == {key: shown["semantic"]}
        page = httpx.get(f"{base}/console/repos/{key}", timeout=60)
        assert f"pending {pending:,} of {pending:,} chunks" in page.text
        assert worker.run(once=True) == 0  # the vectors job
        resp = httpx.get(f"{base}/search", params={"q": "checksum", "repo": key}, timeout=60)
        assert resp.json()["semantic"][key]["state"] == "complete"


def test_due_work_sees_a_claimable_push_of_any_repository_or_only_its_own(
    graph: Graph, settings: Settings
) -> None:
    store = JobStore(graph, _settings(settings))
    now = time.time()
    assert not store.due_work(["reindex"], now=now, repo="a")
    store.enqueue("b", now=now, kind="reindex")
    assert store.due_work(["reindex"], now=now + 1, repo="a")
    assert not store.due_work(["reindex"], now=now + 1, repo="a", any_repo=False)
    assert not store.due_work(["remove"], now=now + 1, repo="a")
    assert not store.due_work(["reindex"], now=now - 60, repo="a")  # not due yet
    claimed = store.claim("w", ["reindex"], now=now + 1)
    assert claimed is not None and claimed.repo_key == "b"
    store.enqueue("b", now=now + 2, kind="reindex")  # a follow-up behind the running job
    assert not store.due_work(["reindex"], now=now + 3, repo="a")  # b runs: not claimable
    assert store.due_work(["reindex"], now=now + 3, repo="b", any_repo=False)  # b's own


def test_a_vectors_job_stops_for_another_repositorys_push_and_comes_back(
    tmp_path: Path, graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    first = make_repo(tmp_path / "first", POLYGLOT)
    second = make_repo(tmp_path / "second", {"lib/x.py": "def tiny():\n    return 1\n"})
    key = repo_key_for(str(first))
    deferred = _settings(settings, embed_inline_max_chunks=0, vectors_window_chunks=2)
    register_job_kinds(KINDS)
    store = JobStore(graph, deferred)
    _enqueue(store, first)
    worker = Worker(deferred, graph, store=store)
    assert worker.run(once=True) == 0
    index = SearchIndex(es, deferred)
    pending = pending_count(index, index.live_index(key) or "")
    [vectors] = store.list(status="pending", repo=key)
    _enqueue(store, second)  # a push of another repository, due now
    assert worker.run(once=True, job_id=vectors.id) == 0
    assert store.get(vectors.id).status is JobStatus.SUCCEEDED  # type: ignore[union-attr]
    assert pending_count(index, index.live_index(key) or "") == pending - 2  # one window
    assert _jobs(store, key) == [(VECTORS_KIND, "pending", VECTORS_PRIORITY)]
    assert worker.run(once=True) == 0  # the push goes first (its own vectors wait too)
    other = repo_key_for(str(second))
    assert _jobs(store, other) == [(VECTORS_KIND, "pending", VECTORS_PRIORITY)]
    assert pending_count(index, index.live_index(key) or "") == pending - 2
    assert worker.run(once=True) == 0  # then the vectors, in the order they were queued
    assert worker.run(once=True) == 0
    assert pending_count(index, index.live_index(key) or "") == 0
    assert pending_count(index, index.live_index(other) or "") == 0


def test_a_live_index_left_write_blocked_by_a_failed_push_is_filled(
    tmp_path: Path, graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    pub = _published(tmp_path, graph, es, settings)
    key, deferred = pub.key, pub.settings
    index = SearchIndex(es, deferred)
    live = index.live_index(key) or ""
    es.indices.add_block(index=live, block="write")  # a push's clone blocked it, then failed
    stats = VectorsFill(index, shared_embedder(deferred), key).run()
    assert stats.pending_left == 0 and stats.filled > 0
    assert pending_count(index, live) == 0
