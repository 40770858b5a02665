"""Incremental staging requests against the real Elasticsearch: clone of the live index,
deletion of a file's documents (scrolled), the run ids of searched indexes, and the orphan GC
of a clone that never got its own ``_meta``."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings, load_settings
from semgraph.errors import SearchRequestError
from semgraph.model import Chunk, FileFacts, content_hash
from semgraph.search import incremental
from semgraph.search.bodies import clone_settings, staging_meta
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex

pytestmark = pytest.mark.integration

NOW = 1_700_000_000.0
DIMS = 8


class FakeVectors(Embedder):
    """The real Embedder's keys and texts; vectors from a hash (ES is what is tested)."""

    @property
    def dims(self) -> int:
        return DIMS

    def embed(self, texts: list[str], on_batch: object = None) -> list[list[float]]:
        out = []
        for text in texts:
            digest = hashlib.sha256(text.encode()).digest()
            out.append([1.0 + b / 255 for b in digest[:DIMS]])
        return out


def facts(path: str, n_chunks: int, blob: str = "a" * 40) -> FileFacts:
    texts = [f"def f{i}_{len(path)}():\n    return {i}" for i in range(n_chunks)]
    chunks = [
        Chunk(i * 3 + 1, i * 3 + 2, text, content_hash(text), None, None)
        for i, text in enumerate(texts)
    ]
    return FileFacts(
        path=path,
        language="python",
        blob_sha=blob,
        size_bytes=100,
        line_count=n_chunks * 3,
        parse_status="ok",
        chunks=chunks,
    )


@pytest.fixture
def manager(es: Elasticsearch, settings: Settings) -> SearchIndex:
    return SearchIndex(es, settings)


@pytest.fixture(scope="module")
def embedder() -> FakeVectors:
    return FakeVectors(load_settings())


def _live(manager: SearchIndex, embedder: Embedder, files: list[FileFacts]) -> str:
    name = manager.create_staging("demo", "r1", DIMS, model_id="m", now=NOW, docs_fingerprint="d")
    manager.index_files(name, "demo", "r1", files, embedder)
    manager.refresh(name)
    manager.flip_alias("demo", name)
    return name


def _meta(run: str) -> dict[str, object]:
    return staging_meta("demo", run, DIMS, "m", NOW, "d")


def test_clone_then_delete_a_files_documents_across_scroll_pages(
    manager: SearchIndex, embedder: FakeVectors, es: Elasticsearch
) -> None:
    # 1,150 documents for one path: the stale-id scroll must page past SCROLL_PAGE
    hostile = 'src/we"ird path/ünï\\code.py'
    files = [facts("big.py", 1150), facts(hostile, 3), facts("keep.py", 4)]
    live = _live(manager, embedder, files)
    target = incremental.clone_live(manager, "demo", "r2", live, _meta("r2"))
    assert target == manager.staging_name("demo", "r2")
    assert manager.index_run_id(target) == "r2" and manager.index_run_id(live) == "r1"
    assert manager.count(target) == 1157
    assert incremental.delete_paths(manager, target, ["big.py", hostile, "absent.py"]) == 1153
    manager.index_files(target, "demo", "r2", [facts(hostile, 2, blob="b" * 40)], embedder)
    manager.refresh(target)
    assert manager.count(target) == 6 and manager.count(live) == 1157  # live untouched
    paths = {h["_source"]["path"] for h in es.search(index=target, size=10)["hits"]["hits"]}
    assert paths == {"keep.py", hostile}
    assert manager.run_ids([live, target]) == {live: "r1", target: "r2"}
    assert manager.run_ids([live, "code-demo--gone"]) is None  # vanished: the caller retries
    manager.flip_alias("demo", target)
    assert manager.live_index("demo") == target and not es.indices.exists(index=live)


def test_clone_refuses_an_index_that_is_not_ours(manager: SearchIndex) -> None:
    with pytest.raises(SearchRequestError):
        incremental.clone_live(manager, "demo", "r2", "other-index", _meta("r2"))
    with pytest.raises(SearchRequestError):
        incremental.clone_live(manager, "demo", "r2", "code-*", _meta("r2"))


def test_a_clone_without_its_own_meta_is_an_orphan(
    manager: SearchIndex, embedder: FakeVectors, es: Elasticsearch
) -> None:
    live = _live(manager, embedder, [facts("a.py", 2)])
    es.indices.add_block(index=live, block="write")
    stray = manager.staging_name("demo", "r9")
    es.indices.clone(index=live, target=stray, settings=clone_settings(0))
    es.cluster.health(index=stray, wait_for_status="green", timeout="30s")
    keep = {("demo", "r1")}  # the live run: its meta is what the stray clone carries
    assert manager.orphaned_staging(keep) == [stray]
    assert manager.gc_orphans(keep) == [stray] and manager.live_index("demo") == live


def blobs(files: list[FileFacts]) -> list[tuple[str, str]]:
    return [(f.path, f.blob_sha) for f in files]


def test_plan_decides_incremental_or_full(manager: SearchIndex, embedder: FakeVectors) -> None:
    files = [facts(f"m{i}.py", 1) for i in range(10)]
    live = _live(manager, embedder, files)
    graph_files = {f.path: f.blob_sha for f in files}

    def plan(**kw: object) -> incremental.Plan | None:
        args: dict[str, Any] = {
            "docs_fp": "d",
            "model_id": "m",
            "dims": DIMS,
            "graph_run_id": "r1",
            "graph_files": lambda: dict(graph_files),
            "files": blobs(files),
        }
        args.update(kw)
        return incremental.plan(manager, "demo", **args)

    changed = [*files[:9], facts("new.py", 1), facts("m0.py", 1, blob="c" * 40)]
    p = plan(files=blobs(changed[1:]))  # m0 changed, m9 removed, new.py added
    assert p is not None and p.live == live
    assert (p.changed, p.removed, p.files) == ({"m0.py", "new.py"}, {"m9.py"}, 10)
    assert p.stale == ["m0.py", "m9.py", "new.py"]
    assert plan(docs_fp="other") is None
    assert plan(model_id="other") is None
    assert plan(dims=DIMS + 1) is None
    assert plan(graph_run_id="r0") is None  # graph and index disagree: rebuild
    assert plan(graph_run_id=None) is None
    everything = [facts(f"m{i}.py", 1, blob="d" * 40) for i in range(10)]
    assert plan(files=blobs(everything)) is None  # 100%
    assert (
        incremental.plan(
            manager,
            "nothing-live",
            docs_fp="d",
            model_id="m",
            dims=DIMS,
            graph_run_id="r1",
            graph_files=dict,
            files=blobs(files),
        )
        is None
    )
