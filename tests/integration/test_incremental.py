"""Incremental reindex against the real Bolt server and Elasticsearch: a small push parses
only its files (parse cache) and rewrites only their documents (a clone of the live index),
and the result is exactly what a full reindex produces. Every fallback to a full load is
exercised, and a failure after the clone leaves the live index serving. With issue 25's
shortcuts on and off, a push gives what a full reindex gives."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.faults import Faults
from semgraph.indexer.parsecache import CACHE_FILE, cache_dir
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest, ReindexResult
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex
from semgraph.search.query import search
from tests.repos import POLYGLOT, commit, make_repo
from tests.shared_kinds import shared_embedder

pytestmark = pytest.mark.integration

EXTRA = {f"lib/mod{i}.py": f"def helper_{i}(x):\n    return x + {i}\n" for i in range(10)}
DOC_FIELDS = ["path", "start_line", "end_line", "code", "symbol", "kind", "vector_key", "name"]


class Boom(RuntimeError):
    pass


@pytest.fixture(scope="module")
def embedder(settings: Settings) -> Embedder:
    return shared_embedder(settings)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "incr", {**POLYGLOT, **EXTRA})


@pytest.fixture
def run_index(
    settings: Settings, graph: Graph, es: Elasticsearch, embedder: Embedder
) -> Callable[..., ReindexResult]:
    def run(source: Path, *, use_settings: Any = None, **kw: Any) -> ReindexResult:
        faults = kw.pop("faults", Faults())
        request = ReindexRequest(source=str(source), **kw)
        return Reindex(
            use_settings or settings, graph, es, request, embedder=embedder, faults=faults
        ).run()

    return run


def _docs(es: Elasticsearch, settings: Settings, repo_key: str) -> list[tuple[Any, ...]]:
    index = SearchIndex(es, settings)
    live = index.live_index(repo_key)
    assert live is not None
    # the client is typed for _source as bool or dict; Elasticsearch takes a list of fields too
    chunks = {"exists": {"field": "path"}}  # the commit history's documents have none
    resp = es.search(index=live, size=1000, source=DOC_FIELDS, query=chunks)  # type: ignore[arg-type]
    assert resp["hits"]["total"]["value"] < 1000
    return sorted(tuple(h["_source"].get(f) for f in DOC_FIELDS) for h in resp["hits"]["hits"])


def _history(es: Elasticsearch, settings: Settings, repo_key: str) -> list[tuple[Any, ...]]:
    """The live index's commit-history documents: (path, sha, time, subject)."""
    live = SearchIndex(es, settings).live_index(repo_key)
    assert live is not None
    resp = es.search(index=live, size=1000, query={"exists": {"field": "history_path"}})
    fields = ("history_path", "history_sha", "history_time", "history_subject")
    return sorted(tuple(h["_source"][f] for f in fields) for h in resp["hits"]["hits"])


def _change(repo: Path) -> None:
    commit(
        repo,
        {
            "lib/mod3.py": "def helper_3(x):\n    return rotate_ledger(x) * 3\n",
            "lib/ledger.py": "def rotate_ledger(book):\n    return book.rotate()\n",
            "lib/mod7.py": None,
        },
    )


# issue 25's shortcuts (git blob ids, cached frames in the spill, the cache updated in
# place, the staging index's raw filter) off: the slow paths, which must give the same result
SLOW_PATHS = {
    "parse_git_blob_ids": False,
    "spill_cached_frames": False,
    "parse_cache_in_place": False,
    "staging_filter_raw": False,
}


@pytest.mark.parametrize("shortcuts", [True, False], ids=["shortcuts", "slow-paths"])
def test_small_push_is_incremental_and_equals_a_full_reindex(
    settings: Settings,
    es: Elasticsearch,
    embedder: Embedder,
    repo: Path,
    run_index: Callable[..., ReindexResult],
    shortcuts: bool,
) -> None:
    use = settings if shortcuts else settings.model_copy(update=SLOW_PATHS)
    first = run_index(repo, use_settings=use)
    assert "incremental" not in first.stats  # nothing live yet
    assert first.stats["parse"]["files_reused"] == 0
    _change(repo)
    second = run_index(repo, use_settings=use)
    assert second.status == "succeeded"
    # every step of the push is timed on the run (issue 25's phase table)
    assert {"walk", "hash", "cache_read", "cache_write", "spill_reused", "cache_commit"} <= set(
        second.stats["parse"]["timings_s"]
    )
    assert {"plan", "clone", "delete", "load", "refresh"} <= set(second.stats["index_timings_s"])
    inc = second.stats["incremental"]
    assert inc["changed_files"] == 2 and inc["removed_files"] == 1
    assert inc["deleted_docs"] >= 2  # the old documents of mod3 and mod7
    assert second.stats["index"]["files"] == 2  # only the changed files were loaded
    indexed = sum(second.stats["parse"]["files_by_status"].values())
    assert second.stats["parse"]["files_reused"] == indexed - 2  # only two files parsed
    incremental_docs = _docs(es, settings, second.repo_key)
    paths = {d[0] for d in incremental_docs}
    assert "lib/ledger.py" in paths and "lib/mod7.py" not in paths
    hits = search(es, settings, embedder, "rotate_ledger", repo=second.repo_key, k=5)
    assert hits[0].path == "lib/ledger.py"
    assert {h.run_id for h in hits} == {second.run_id}  # the serving index's run

    assert second.stats["history"]["mode"] == "append" and second.stats["history"]["commits"] == 1
    incremental_history = _history(es, settings, second.repo_key)
    assert {h[0] for h in incremental_history} == paths  # lib/mod7.py's history went with it

    full = run_index(repo, force=True)  # fresh index, no parse cache
    assert "incremental" not in full.stats and full.stats["parse"]["files_reused"] == 0
    assert _docs(es, settings, full.repo_key) == incremental_docs
    assert full.stats["history"]["mode"] == "full"
    assert _history(es, settings, full.repo_key) == incremental_history  # append == rebuild


def test_fallbacks_to_a_full_load(
    settings: Settings,
    graph: Graph,
    es: Elasticsearch,
    repo: Path,
    run_index: Callable[..., ReindexResult],
) -> None:
    first = run_index(repo)
    # a document option changed: the live documents are not what this job would write
    other = settings.model_copy(update={"search_max_code_chars": 5000})
    commit(repo, {"lib/mod1.py": "def helper_1(x):\n    return x - 1\n"})
    assert "incremental" not in run_index(repo, use_settings=other).stats
    # incremental staging switched off
    off = settings.model_copy(update={"search_incremental_max_changed_ratio": 0.0})
    commit(repo, {"lib/mod1.py": "def helper_1(x):\n    return x - 2\n"})
    assert "incremental" not in run_index(repo, use_settings=off).stats
    # too large a change
    commit(repo, {f"lib/mod{i}.py": f"def helper_{i}(y):\n    return y\n" for i in range(10)})
    assert "incremental" not in run_index(repo).stats
    # the graph's run is not the live index's run (e.g. a diverged publish): full load
    graph.query("t", "MATCH (r:Repository {key: $k}) SET r.run_id = 'other'", k=first.repo_key)
    commit(repo, {"lib/mod2.py": "def helper_2(x):\n    return x * 2\n"})
    again = run_index(repo)
    assert again.status == "succeeded" and "incremental" not in again.stats
    # and back in step, the next small push is incremental again
    commit(repo, {"lib/mod2.py": "def helper_2(x):\n    return x * 4\n"})
    assert run_index(repo).stats["incremental"]["changed_files"] == 1


def test_failure_after_the_clone_leaves_the_live_index_serving(
    settings: Settings,
    es: Elasticsearch,
    embedder: Embedder,
    repo: Path,
    run_index: Callable[..., ReindexResult],
) -> None:
    first = run_index(repo)
    index = SearchIndex(es, settings)
    live = index.live_index(first.repo_key)
    before = _docs(es, settings, first.repo_key)
    _change(repo)

    def boom(**_: object) -> None:
        raise Boom("after the clone")

    faults = Faults()
    faults.arm("reindex.during_staging", boom)

    with pytest.raises(Boom):
        run_index(repo, faults=faults)
    assert index.live_index(first.repo_key) == live
    assert _docs(es, settings, first.repo_key) == before
    leftovers = [i.name for i in index.list_indexes() if not i.aliases]
    assert leftovers == []  # the clone was deleted
    hits = search(es, settings, embedder, "compute checksum", repo=first.repo_key, k=3)
    assert hits and {h.run_id for h in hits} == {first.run_id}
    # the parse cache of the failed job is kept (content-addressed), so the retry reuses it
    retry = run_index(repo)
    assert retry.stats["incremental"]["changed_files"] == 2
    assert retry.stats["parse"]["files_reused"] == sum(
        retry.stats["parse"]["files_by_status"].values()
    )


def test_a_corrupt_parse_cache_is_a_miss_not_an_error(
    settings: Settings, repo: Path, run_index: Callable[..., ReindexResult]
) -> None:
    first = run_index(repo)
    cache = cache_dir(settings, first.repo_key) / CACHE_FILE
    assert cache.is_file()
    cache.write_bytes(b"this is not a database" * 100)
    _change(repo)
    second = run_index(repo)
    assert second.status == "succeeded" and second.stats["parse"]["files_reused"] == 0
    commit(repo, {"lib/mod4.py": "def helper_4(x):\n    return 4\n"})
    third = run_index(repo)  # the cache was rewritten by the second job
    indexed = sum(third.stats["parse"]["files_by_status"].values())
    assert third.stats["parse"]["files_reused"] == indexed - 1
