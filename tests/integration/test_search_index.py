"""The search index manager against the real Elasticsearch (and the real embedding model)."""

from __future__ import annotations

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings, load_settings
from semgraph.errors import EmbeddingError, SearchBulkError, SearchRequestError
from semgraph.model import Chunk, FileFacts, content_hash
from semgraph.search.bodies import INDEX_FORMAT, META_MARKER
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex
from semgraph.search.loader import IndexStats, lookup_vectors

pytestmark = pytest.mark.integration

NOW = 1_700_000_000.0


def chunk(text: str, start: int = 1, symbol: str | None = None, kind: str | None = None) -> Chunk:
    end = start + text.count("\n")
    return Chunk(start, end, text, content_hash(text), symbol, kind)


def facts(path: str, *chunks: Chunk, language: str = "python") -> FileFacts:
    return FileFacts(
        path=path,
        language=language,
        blob_sha="0" * 40,
        size_bytes=sum(len(c.text) for c in chunks),
        line_count=max((c.end_line for c in chunks), default=0),
        parse_status="ok",
        chunks=list(chunks),
    )


def corpus() -> list[FileFacts]:
    return [
        facts(
            "pkg/alias.py",
            chunk(
                "def flip_alias(repo, new):\n    return swap(repo, new)",
                1,
                "pkg.alias.flip_alias",
                "function",
            ),
            chunk("def drop_index(name):\n    delete(name)", 4, "pkg.alias.drop_index", "function"),
        ),
        facts(
            "web/server.go",
            chunk(
                "func ServeHTTP(w Writer, r *Request) {\n\tw.Write(ok)\n}",
                1,
                "web.server.ServeHTTP",
                "function",
            ),
            language="go",
        ),
    ]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(load_settings())


@pytest.fixture
def manager(es: Elasticsearch, settings: Settings) -> SearchIndex:
    return SearchIndex(es, settings)


def load(
    manager: SearchIndex, embedder: Embedder, repo: str, run: str, files: list[FileFacts]
) -> tuple[str, IndexStats]:
    staging = manager.create_staging(repo, run, embedder.dims, model_id=embedder.model_id, now=NOW)
    stats = manager.index_files(staging, repo, run, files, embedder)
    manager.refresh(staging)
    return staging, stats


def test_staging_index_has_meta_mapping_and_legal_name(
    manager: SearchIndex, es: Elasticsearch
) -> None:
    name = manager.create_staging("GitHub.com/Org/Repo", "Run-01", 384, model_id="m", now=NOW)
    assert name == manager.staging_name("GitHub.com/Org/Repo", "Run-01")
    assert name.startswith(manager.alias_name("GitHub.com/Org/Repo") + "--")
    assert name == name.lower()
    meta = manager.index_meta(name)
    assert meta is not None
    assert meta[META_MARKER] == INDEX_FORMAT == 6
    assert meta["repo"] == "GitHub.com/Org/Repo"
    assert meta["created_at"] == NOW
    assert manager.index_run_id(name) == "Run-01"
    mapping = es.indices.get_mapping(index=name)[name]["mappings"]
    assert mapping["properties"]["embedding"] == {
        "type": "dense_vector",
        "dims": 384,
        "index": True,
        "similarity": "cosine",
        "index_options": mapping["properties"]["embedding"]["index_options"],
    }
    assert mapping["properties"]["path"]["type"] == "keyword"
    assert (
        es.indices.get_settings(index=name)[name]["settings"]["index"]["refresh_interval"] == "-1"
    )
    with pytest.raises(SearchRequestError, match="resource_already_exists"):
        manager.create_staging("GitHub.com/Org/Repo", "Run-01", 384, now=NOW)


def test_missing_things_read_as_none(manager: SearchIndex) -> None:
    assert manager.live_index("nope") is None
    assert manager.live_indexes() == {}
    assert manager.index_meta("code-nope--x") is None
    assert manager.index_run_id("code-nope--x") is None
    assert manager.delete_index("code-nope--x") is False
    assert manager.list_indexes() == []
    with pytest.raises(SearchRequestError, match="refusing"):
        manager.delete_index("code-*")
    with pytest.raises(SearchRequestError, match="refusing"):
        manager.delete_index(".security")


def test_first_index_embeds_everything_then_flip_publishes(
    manager: SearchIndex, embedder: Embedder, es: Elasticsearch
) -> None:
    staging, stats = load(manager, embedder, "demo", "r1", corpus())
    assert (stats.files, stats.chunks, stats.docs) == (2, 3, 3)
    assert (stats.embedded, stats.reused, stats.hit_rate) == (3, 0, 0.0)
    assert stats.embed_seconds > 0 and stats.bulk_seconds > 0
    assert manager.count(staging) == 3
    doc = es.search(index=staging, query={"term": {"name": "flip_alias"}})["hits"]["hits"][0][
        "_source"
    ]
    assert doc["repo"] == "demo" and doc["run_id"] == "r1" and doc["path"] == "pkg/alias.py"
    assert doc["symbol"] == "pkg.alias.flip_alias" and doc["kind"] == "function"
    assert "flip alias" in doc["identifiers"] and doc["path_text"] == "pkg alias py"
    assert len(doc["embedding"]) == embedder.dims

    assert manager.live_index("demo") is None
    assert manager.flip_alias("demo", staging) is None
    assert manager.live_index("demo") == staging
    assert manager.live_indexes() == {manager.alias_name("demo"): staging}
    assert manager.index_run_id(manager.alias_name("demo")) == "r1"


def test_unchanged_reindex_embeds_nothing_and_flip_deletes_old(
    manager: SearchIndex, embedder: Embedder, es: Elasticsearch
) -> None:
    first, _ = load(manager, embedder, "demo", "r1", corpus())
    manager.flip_alias("demo", first)

    class Refuses(Embedder):
        def embed(self, texts: list[str], on_batch: object = None) -> list[list[float]]:
            raise AssertionError(f"nothing should be embedded, got {len(texts)} texts")

    second, stats = load(manager, Refuses(load_settings()), "demo", "r2", corpus())
    assert (stats.chunks, stats.embedded, stats.reused, stats.hit_rate) == (3, 0, 3, 1.0)
    old_vec = lookup_vectors(
        manager.es,
        first,
        [embedder.key_for(embedder.text_for("pkg/alias.py", corpus()[0].chunks[0]))],
    )
    new_vec = lookup_vectors(manager.es, second, list(old_vec))
    assert old_vec == new_vec and len(old_vec) == 1

    assert manager.flip_alias("demo", second) == first
    assert manager.live_index("demo") == second
    assert not es.indices.exists(index=first)


def test_changed_chunk_is_the_only_one_embedded(manager: SearchIndex, embedder: Embedder) -> None:
    first, _ = load(manager, embedder, "demo", "r1", corpus())
    manager.flip_alias("demo", first)
    files = corpus()
    files[1].chunks[0] = chunk(
        "func ServeHTTP(w Writer, r *Request) {\n\tw.Write(changed)\n}",
        1,
        "web.server.ServeHTTP",
        "function",
    )
    files.append(facts("pkg/alias_copy.py", files[0].chunks[1]))  # same text, other path: new key
    _, stats = load(manager, embedder, "demo", "r2", files)
    assert (stats.chunks, stats.embedded, stats.reused) == (4, 2, 2)
    assert stats.hit_rate == 0.5


def test_duplicate_chunks_in_one_window_are_embedded_once(
    manager: SearchIndex, embedder: Embedder
) -> None:
    same = chunk("x = 1", 1)
    files = [facts("a.py", same, same), facts("a.py", same)]
    _, stats = load(manager, embedder, "dup", "r1", files)
    assert (stats.chunks, stats.embedded, stats.deduplicated, stats.docs) == (3, 1, 2, 3)


def test_bulk_is_bounded_by_docs_and_bytes(es: Elasticsearch, embedder: Embedder) -> None:
    settings = load_settings(search_bulk_batch_docs=2, search_embed_window_chunks=3)
    manager = SearchIndex(es, settings)
    files = [facts(f"f{i}.py", chunk(f"value_{i} = {i}", 1)) for i in range(7)]
    staging, stats = load(manager, embedder, "bounded", "r1", files)
    assert stats.bulk_requests == 5  # windows of 3, 3, 1 -> batches 2+1, 2+1, 1
    assert manager.count(staging) == 7

    by_bytes = SearchIndex(es, load_settings(search_bulk_max_bytes=10_000))
    big = [facts(f"g{i}.py", chunk("y = 'word' " * 300, 1)) for i in range(3)]
    staging2, stats2 = load(by_bytes, embedder, "bounded", "r2", big)
    assert stats2.bulk_requests == 3 and by_bytes.count(staging2) == 3


def test_rejected_documents_raise_a_bulk_error(manager: SearchIndex, embedder: Embedder) -> None:
    staging = manager.create_staging("demo", "r1", 8, now=NOW)  # the model gives 384-d vectors
    with pytest.raises(SearchBulkError, match=r"3 of 3 documents rejected.*pkg/alias.py:1-2"):
        manager.index_files(staging, "demo", "r1", corpus(), embedder)
    assert isinstance(SearchBulkError(), SearchRequestError)


def test_embedding_failure_leaves_live_state_untouched(
    manager: SearchIndex, embedder: Embedder
) -> None:
    first, _ = load(manager, embedder, "demo", "r1", corpus())
    manager.flip_alias("demo", first)

    class Broken(Embedder):
        def embed(self, texts: list[str], on_batch: object = None) -> list[list[float]]:
            raise EmbeddingError("CUDA out of memory")

    files = corpus()
    files[0].chunks[0] = chunk("def other(): pass", 1)
    staging = manager.create_staging("demo", "r2", embedder.dims, now=NOW)
    with pytest.raises(EmbeddingError):
        manager.index_files(staging, "demo", "r2", files, Broken(load_settings()))
    assert manager.delete_index(staging) is True
    assert manager.live_index("demo") == first
    assert manager.count(first) == 3


def test_flip_refuses_missing_or_foreign_index_and_changes_nothing(
    manager: SearchIndex, embedder: Embedder
) -> None:
    first, _ = load(manager, embedder, "demo", "r1", corpus())
    manager.flip_alias("demo", first)
    other = manager.create_staging("other", "r1", embedder.dims, now=NOW)
    with pytest.raises(SearchRequestError, match="does not exist"):
        manager.flip_alias("demo", manager.staging_name("demo", "r9"))
    with pytest.raises(SearchRequestError, match="belongs to 'other'"):
        manager.flip_alias("demo", other)
    assert manager.live_index("demo") == first


def test_flip_repairs_an_alias_with_two_targets(manager: SearchIndex, es: Elasticsearch) -> None:
    a = manager.create_staging("demo", "a", 4, now=NOW)
    b = manager.create_staging("demo", "b", 4, now=NOW)
    c = manager.create_staging("demo", "c", 4, now=NOW)
    alias = manager.alias_name("demo")
    es.indices.update_aliases(
        actions=[{"add": {"index": a, "alias": alias}}, {"add": {"index": b, "alias": alias}}]
    )
    with pytest.raises(Exception, match="points at 2 indexes"):
        manager.live_index("demo")
    assert manager.flip_alias("demo", c) in (a, b)
    assert manager.live_index("demo") == c
    assert not es.indices.exists(index=a) and not es.indices.exists(index=b)


def test_orphan_gc_keeps_live_running_young_and_foreign_indexes(
    manager: SearchIndex, es: Elasticsearch
) -> None:
    live = manager.create_staging("demo", "r1", 4, now=NOW)
    manager.flip_alias("demo", live)
    crashed = manager.create_staging("demo", "r2", 4, now=NOW)
    running = manager.create_staging("demo", "r3", 4, now=NOW)
    diverged = manager.create_staging("other", "r7", 4, now=NOW)
    young = manager.create_staging("other", "r8", 4, now=NOW + 500)
    es.indices.create(index="code-foreign")  # ours by prefix only: no marker, never touched
    keep = {("demo", "r3"), ("other", "r7")}
    assert manager.orphaned_staging(keep) == sorted([crashed, young])
    assert manager.orphaned_staging(keep, now=NOW + 600, min_age_s=300) == [crashed]
    assert manager.gc_orphans(keep, now=NOW + 600, min_age_s=300) == [crashed]
    remaining = {i.name for i in manager.list_indexes()}
    assert remaining == {live, running, diverged, young, "code-foreign"}


def test_hostile_content_is_indexed_cleanly(
    manager: SearchIndex, embedder: Embedder, es: Elasticsearch
) -> None:
    settings = load_settings(search_max_code_chars=5000)
    small = SearchIndex(es, settings)
    weird = [
        chunk("bad = '\udcff\udcfe' # undecodable bytes", 1),
        chunk("nul = '\x00\x01' ; emoji = '🦀' ; rtl = 'שלום'", 2),
        chunk("blob = '" + "A" * 200_000 + "'", 3),
        chunk("x" * 300 + "_" + "Y" * 300, 4, "m." + "q" * 5000, "function"),
    ]
    files = [facts("dir with space/ünïcode/" + "deep/" * 100 + "f.py", *weird)]
    repo = "Ünïcode Repo/with:colons*and?stars"
    staging = small.create_staging(repo, "RUN 1/2", embedder.dims, now=NOW)
    stats = small.index_files(staging, repo, "RUN 1/2", files, embedder)
    small.refresh(staging)
    assert stats.docs == 4 and small.count(staging) == 4
    small.flip_alias(repo, staging)
    assert small.live_index(repo) == staging
    docs = {
        h["_source"]["start_line"]: h["_source"]
        for h in es.search(index=staging, size=10)["hits"]["hits"]
    }
    assert "\ufffd" in docs[1]["code"]
    assert len(docs[3]["code"]) == 5000
    assert docs[4]["name"] == "q" * 5000
