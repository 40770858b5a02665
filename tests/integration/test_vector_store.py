"""The shared vector store and in-run deduplication against the real Elasticsearch.

Vectors come from a hash of the text (the real Embedder's texts and keys): what is tested is
which texts reach the model and what the store holds, not the model. Note the embedded text
starts with the path, so identical code under two paths is two texts; identical texts within
one run are repeated chunks of one file (or one path in two repositories: a fork).
"""

from __future__ import annotations

import base64
import hashlib
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings, load_settings
from semgraph.db import Graph
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest
from semgraph.model import Chunk, FileFacts, content_hash
from semgraph.search import store_bodies
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex
from semgraph.search.loader import IndexStats
from semgraph.search.store_bodies import decode_vector
from semgraph.search.vectorstore import VectorStore, store_name
from tests.repos import POLYGLOT, commit, make_repo
from tests.shared_kinds import shared_embedder

pytestmark = pytest.mark.integration

NOW = 1_700_000_000.0
DIMS = 8
HOUR = 3600


class Counting(Embedder):
    """Hash vectors of ``DIMS`` floats; records every text given to the model."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.texts: list[str] = []

    @property
    def dims(self) -> int:
        return DIMS

    def embed(self, texts: list[str], on_batch: object = None) -> list[list[float]]:
        self.texts.extend(texts)
        out = []
        for text in texts:
            digest = hashlib.sha256(text.encode()).digest()
            vec = np.array([1.0 + b / 255 for b in digest[:DIMS]], dtype=np.float32)
            out.append((vec / np.linalg.norm(vec)).tolist())
        return out


def chunk(text: str, start: int = 1, symbol: str | None = None) -> Chunk:
    return Chunk(start, start + text.count("\n"), text, content_hash(text), symbol, "function")


def facts(path: str, *chunks: Chunk) -> FileFacts:
    return FileFacts(
        path=path,
        language="python",
        blob_sha="0" * 40,
        size_bytes=sum(len(c.text) for c in chunks),
        line_count=max((c.end_line for c in chunks), default=0),
        parse_status="ok",
        chunks=list(chunks),
    )


def project(n_files: int = 6, tag: str = "") -> list[FileFacts]:
    return [
        facts(
            f"pkg/mod{i}.py",
            chunk(f"def f{i}():\n    return {i}{tag}", 1, f"pkg.mod{i}.f{i}"),
            chunk(f"def g{i}(x):\n    return x * {i}", 4, f"pkg.mod{i}.g{i}"),
        )
        for i in range(n_files)
    ]


def load(
    es: Elasticsearch,
    settings: Settings,
    embedder: Embedder,
    repo: str,
    run: str,
    files: list[FileFacts],
) -> tuple[str, IndexStats]:
    manager = SearchIndex(es, settings)
    staging = manager.create_staging(repo, run, DIMS, model_id="m", now=NOW)
    stats = manager.index_files(staging, repo, run, files, embedder)
    manager.refresh(staging)
    return staging, stats


def vectors_by_path(es: Elasticsearch, index: str) -> dict[tuple[str, int], list[float]]:
    hits = es.search(index=index, size=1000, query={"match_all": {}})["hits"]["hits"]
    return {
        (h["_source"]["path"], h["_source"]["start_line"]): h["_source"]["embedding"] for h in hits
    }


@pytest.fixture
def settings_small() -> Settings:
    return load_settings(search_embed_window_chunks=2)


def test_identical_texts_are_embedded_once_across_windows(es: Elasticsearch) -> None:
    settings = load_settings(search_embed_window_chunks=2, search_vector_store=False)
    embedder = Counting(settings)
    same = chunk("x = compute()\nprint(x)", 1)
    files = [facts("gen/table.py", *([same] * 7)), facts("gen/other.py", same)]
    staging, stats = load(es, settings, embedder, "dup", "r1", files)
    # one text for the seven repeats of gen/table.py, one for gen/other.py (another path)
    assert len(embedder.texts) == 2 and len(set(embedder.texts)) == 2
    assert (stats.chunks, stats.embedded, stats.deduplicated, stats.docs) == (8, 2, 6, 8)
    assert stats.embedded + stats.reused + stats.store_reused + stats.deduplicated == 8
    by_path = vectors_by_path(es, staging)
    table = {tuple(v) for (p, _), v in by_path.items() if p == "gen/table.py"}
    assert len(table) == 1  # every repeat carries the one vector


def test_a_fork_reuses_the_store(es: Elasticsearch, settings_small: Settings) -> None:
    embedder = Counting(settings_small)
    _, first = load(es, settings_small, embedder, "origin", "r1", project())
    assert (first.embedded, first.store_written, first.store_reused) == (12, 12, 0)
    fork = project()
    fork[0] = facts("pkg/mod0.py", chunk("def f0():\n    return 'forked'", 1, "pkg.mod0.f0"))
    fork.append(facts("pkg/new.py", chunk("def n():\n    pass", 1, "pkg.new.n")))
    embedder.texts.clear()
    staging, stats = load(es, settings_small, embedder, "fork", "r1", fork)
    # pkg/mod0.py lost g0 and changed f0; pkg/new.py is new: 2 embedded, 10 from the store
    assert (stats.chunks, stats.embedded, stats.store_reused) == (12, 2, 10)
    assert stats.store_errors == 0 and stats.store_invalid == 0
    assert stats.hit_rate == pytest.approx(10 / 12)
    origin = vectors_by_path(es, SearchIndex(es, settings_small).staging_name("origin", "r1"))
    forked = vectors_by_path(es, staging)
    assert forked[("pkg/mod3.py", 4)] == origin[("pkg/mod3.py", 4)]


def test_vendored_and_monorepo_copies_reuse_the_store(
    es: Elasticsearch, settings_small: Settings
) -> None:
    """A copy of a package under a deeper path (vendored, or a second service of a monorepo)
    embeds the same texts as the original: only the path's last two parts are embedded."""
    embedder = Counting(settings_small)
    load(es, settings_small, embedder, "lib-origin", "r1", project())
    vendored = [facts(f"third_party/acme/{f.path}", *f.chunks) for f in project()] + [
        facts(f"services/billing/{f.path}", *f.chunks) for f in project(2)
    ]
    embedder.texts.clear()
    staging, stats = load(es, settings_small, embedder, "monorepo", "r1", vendored)
    assert embedder.texts == []  # nothing embedded: every vector from the store or this run
    assert stats.embedded == 0 and stats.store_reused + stats.deduplicated == stats.chunks == 16
    origin = vectors_by_path(es, SearchIndex(es, settings_small).staging_name("lib-origin", "r1"))
    copied = vectors_by_path(es, staging)
    assert copied[("third_party/acme/pkg/mod3.py", 4)] == origin[("pkg/mod3.py", 4)]
    assert copied[("services/billing/pkg/mod1.py", 1)] == origin[("pkg/mod1.py", 1)]


def test_store_off_embeds_everything(es: Elasticsearch) -> None:
    settings = load_settings(search_vector_store=False)
    embedder = Counting(settings)
    load(es, settings, embedder, "origin", "r1", project())
    _, stats = load(es, settings, embedder, "fork", "r1", project())
    assert (stats.embedded, stats.store_reused) == (12, 0)
    assert not es.indices.exists(index=store_name(settings.search_index_prefix))


def _put_raw(es: Elasticsearch, name: str, key: str, source: dict[str, Any]) -> None:
    es.index(index=name, id=key, document=source, refresh=True)


def test_corrupt_foreign_and_wrong_size_documents_are_ignored_and_rewritten(
    es: Elasticsearch, settings_small: Settings
) -> None:
    embedder = Counting(settings_small)
    load(es, settings_small, embedder, "origin", "r1", project(3))
    name = store_name(settings_small.search_index_prefix)
    keys = [embedder.key_for(embedder.text_for(f.path, c)) for f in project(3) for c in f.chunks]
    good = es.get(index=name, id=keys[0])["_source"]
    short = store_bodies.encode_vector([0.5] * (DIMS - 1))
    nan = base64.b64encode(np.full(DIMS, np.nan, dtype="<f4").tobytes()).decode()
    zero = store_bodies.encode_vector([0.0] * DIMS)
    bad = {
        keys[0]: {**good, "vector": "!!not base64!!" + good["vector"][14:]},
        keys[1]: {**good, "vector": short},
        keys[2]: {**good, "model_id": "another-model"},
        keys[3]: {**good, "vector": nan},
        keys[4]: {**good, "vector": zero},
        keys[5]: {"model_id": good["model_id"], "dims": DIMS, "last_used": 1},  # no vector
    }
    for key, source in bad.items():
        _put_raw(es, name, key, source)
    embedder.texts.clear()
    _, stats = load(es, settings_small, embedder, "fork", "r1", project(3))
    assert (stats.chunks, stats.store_invalid, stats.embedded, stats.store_reused) == (6, 6, 6, 0)
    assert stats.store_errors == 0
    for key in keys:  # the fresh vectors replaced every bad document
        source = es.get(index=name, id=key)["_source"]
        assert decode_vector(source, good["model_id"], DIMS) is not None
    assert es.get(index=name, id=keys[0])["_source"]["vector"] == good["vector"]
    _, again = load(es, settings_small, embedder, "fork2", "r1", project(3))
    assert (again.embedded, again.store_reused, again.store_invalid) == (0, 6, 0)


def test_a_failing_store_never_fails_the_run(es: Elasticsearch, settings_small: Settings) -> None:
    embedder = Counting(settings_small)
    load(es, settings_small, embedder, "origin", "r1", project())
    name = store_name(settings_small.search_index_prefix)
    es.indices.close(index=name)
    staging, stats = load(es, settings_small, embedder, "fork", "r1", project())
    assert (stats.docs, stats.embedded, stats.store_reused) == (12, 12, 0)
    assert stats.store_errors >= 3  # then off for the rest of the run
    assert SearchIndex(es, settings_small).count(staging) == 12
    es.indices.open(index=name, wait_for_active_shards="1")
    es.indices.add_block(index=name, block="write")
    fresh = [facts("other/x.py", chunk("def q():\n    return 7", 1, "q"))]
    _, blocked = load(es, settings_small, embedder, "fork2", "r1", fresh)
    assert (blocked.docs, blocked.embedded, blocked.store_written) == (1, 1, 0)
    assert blocked.store_errors == 1


def test_a_missing_store_is_created_on_first_write(
    es: Elasticsearch, settings_small: Settings
) -> None:
    name = store_name(settings_small.search_index_prefix)
    store = VectorStore(es, settings_small)
    assert store.lookup("m", DIMS, ["a" * 64]) == {} and store.stats.errors == 0
    assert store.meta() is None and store.maybe_gc() is None
    store.put("m", [("a" * 64, [0.5] * DIMS)])
    mapping = es.indices.get_mapping(index=name)[name]["mappings"]
    assert mapping["_meta"][store_bodies.STORE_MARKER] == store_bodies.STORE_FORMAT
    assert mapping["properties"]["vector"]["type"] == "binary"
    assert store.lookup("m", DIMS, ["a" * 64]) == {"a" * 64: [0.5] * DIMS}
    assert store.lookup("m", DIMS + 1, ["a" * 64]) == {}  # another size: ignored


def test_lookups_are_batched_and_hostile_keys_are_misses(
    es: Elasticsearch, settings: Settings
) -> None:
    store = VectorStore(es, settings)
    items = [(f"{i:064x}", [float(i + 1)] * DIMS) for i in range(2500)]
    store.put("m", items)
    hostile = ["", "../../_doc", "x" * 600, "\u0000\ud7ff", "*", "a,b"]
    found = store.lookup("m", DIMS, [k for k, _ in items] + hostile)
    assert len(found) == 2500 and found[f"{7:064x}"] == [8.0] * DIMS
    assert store.stats.errors == 0 and store.stats.invalid == 0


def test_last_used_is_rewritten_only_when_stale(es: Elasticsearch, settings: Settings) -> None:
    clock = [NOW]
    store = VectorStore(es, settings, clock=lambda: clock[0])
    store.put("m", [("k1" * 32, [0.1] * DIMS)])
    name = store.name
    clock[0] = NOW + 60  # fresh: no write
    store.lookup("m", DIMS, ["k1" * 32])
    assert store.stats.touched == 0
    assert es.get(index=name, id="k1" * 32)["_source"]["last_used"] == int(NOW)
    clock[0] = NOW + settings.search_vector_store_touch_s + 1
    store.lookup("m", DIMS, ["k1" * 32])
    assert store.stats.touched == 1
    assert es.get(index=name, id="k1" * 32)["_source"]["last_used"] == int(clock[0])


def _fill(es: Elasticsearch, settings: Settings, per_hour: list[int]) -> VectorStore:
    clock = [NOW]
    store = VectorStore(es, settings, clock=lambda: clock[0])
    n = 0
    for hour, count in enumerate(per_hour):
        clock[0] = NOW + hour * HOUR
        store.put("m", [(f"{n + i:064x}", [1.0] * DIMS) for i in range(count)])
        n += count
    return store


def _last_used(es: Elasticsearch, name: str) -> list[int]:
    es.indices.refresh(index=name)
    hits = es.search(index=name, size=1000, source_includes=["last_used"])["hits"]["hits"]
    return sorted(h["_source"]["last_used"] for h in hits)


def test_gc_keeps_the_store_under_its_bound_least_recently_used_first(
    es: Elasticsearch,
) -> None:
    settings = load_settings(search_vector_store_max_vectors=20, search_vector_store_max_age_days=0)
    store = _fill(es, settings, [10, 10, 10])  # 30 vectors over three hours
    result = store.gc(NOW + 3 * HOUR)
    assert (result.before, result.expired, result.evicted) == (30, 0, 12)
    left = _last_used(es, store.name)
    assert len(left) == 18  # 90 % of the bound
    assert left.count(int(NOW)) == 0 and left.count(int(NOW + HOUR)) == 8
    assert left.count(int(NOW + 2 * HOUR)) == 10
    assert store.gc(NOW + 3 * HOUR).evicted == 0  # under the bound: nothing more


def test_gc_expires_old_vectors_and_runs_at_its_interval(es: Elasticsearch) -> None:
    settings = load_settings(
        search_vector_store_max_age_days=1, search_vector_store_gc_interval_s=HOUR
    )
    store = _fill(es, settings, [5] + [0] * 47 + [3])  # 5 two days old, 3 now
    now = NOW + 48 * HOUR
    store.clock = lambda: now
    result = store.maybe_gc()  # created at NOW (the first write): the interval has passed
    assert result is not None and (result.before, result.expired) == (8, 5)
    assert _last_used(es, store.name) == [int(now)] * 3
    assert store.maybe_gc() is None  # the last GC is recorded in _meta
    store.clock = lambda: now + HOUR
    assert store.maybe_gc() is not None


def test_a_store_with_a_foreign_mapping_is_recreated(es: Elasticsearch, settings: Settings) -> None:
    name = store_name(settings.search_index_prefix)
    es.index(index=name, id="x", document={"vector": [1, 2, 3]}, refresh=True)  # dynamic
    store = VectorStore(es, settings)
    assert store.lookup("m", DIMS, ["x"]) == {} and store.stats.invalid == 1
    assert store.maybe_gc() is None
    assert es.count(index=name)["count"] == 0
    meta = store.meta() or {}
    assert meta.get(store_bodies.STORE_MARKER) == store_bodies.STORE_FORMAT
    mapping = es.indices.get_mapping(index=name)[name]["mappings"]
    assert mapping["properties"]["vector"]["type"] == "binary"


def test_removing_a_repository_leaves_the_store(
    es: Elasticsearch, settings_small: Settings
) -> None:
    embedder = Counting(settings_small)
    manager = SearchIndex(es, settings_small)
    staging, _ = load(es, settings_small, embedder, "origin", "r1", project())
    manager.flip_alias("origin", staging)
    name = store_name(settings_small.search_index_prefix)
    assert name not in manager.repository_indexes("origin")
    assert name not in {i.name for i in manager.list_indexes()}
    for index in manager.repository_indexes("origin"):  # what `semgraph repos remove` deletes
        manager.delete_index(index)
    manager.remove_alias("origin")
    assert manager.gc_orphans(set(), now=NOW + 10**6) == []
    es.indices.refresh(index=name)
    assert es.count(index=name)["count"] == 12
    _, stats = load(es, settings_small, embedder, "fork", "r1", project())
    assert (stats.embedded, stats.store_reused) == (0, 12)


def test_a_forks_first_index_through_the_job_reuses_every_unchanged_chunk(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    """The real job and the real model: a copy of the repository under another path (a
    fork: another key, no live index) with one file changed and one added embeds only
    those files' chunks; every other vector comes from the store and equals the origin's."""
    embedder = shared_embedder(settings)
    origin = make_repo(tmp_path / "origin", POLYGLOT)
    fork = tmp_path / "fork"
    shutil.copytree(origin, fork)
    commit(fork, {"app/extra.py": "def extra(n):\n    return n + 1\n"}, "fork: a new file")

    whole = settings.model_copy(update={"embed_inline_max_chunks": -1})  # the job embeds

    def run(source: Path) -> dict[str, Any]:
        request = ReindexRequest(source=str(source))
        result = Reindex(whole, graph, es, request, embedder=embedder).run()
        assert result.status == "succeeded"
        return dict(result.stats["index"])

    first = run(origin)
    assert first["embedded"] == first["chunks"] - first["deduplicated"] > 0
    assert first["store_written"] == first["embedded"]
    second = run(fork)
    assert second["chunks"] == first["chunks"] + 1
    assert (second["embedded"], second["store_reused"]) == (1, first["embedded"])
    assert second["reused"] == 0 and second["store_errors"] == 0
