"""The commit history in the search index, against the real Elasticsearch: the full build,
the append of a push on a clone (with its rename, its removed files and the trim back to
the bound), the rebuild when the old commit is no ancestor, a failed walk, the history
search and the chunk searches keeping to their own documents, and the alias flip serving
the old history or the new one, never a mix."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.errors import CheckoutError
from semgraph.search import history as h
from semgraph.search import incremental
from semgraph.search.bodies import (
    bm25_body,
    history_body,
    history_filters,
    search_filters,
    staging_meta,
)
from semgraph.search.history_query import per_file
from semgraph.search.index import SearchIndex
from tests.integration.test_search_incremental import DIMS, NOW, FakeVectors, facts

pytestmark = pytest.mark.integration

FP = "hist-fp"


def commit(n: int, subject: str, *paths: str, body: str = "") -> h.Commit:
    return h.Commit((f"{n:x}" * 40)[:40], 1_000 + n, subject, body, paths)


OLD = [  # newest first, as git walks
    commit(5, "fix timezone parsing in clock", "clock.py"),
    commit(4, "rename helpers", "util.py"),
    commit(3, "speed up the cart total", "cart.py", "util.py"),
    commit(2, "cart: handle discounts", "cart.py"),
    commit(1, "add clock and cart", "clock.py", "cart.py", "util.py"),
]


def source(full: list[h.Commit], appended: list[h.Commit] | None = None, **kw: Any) -> Any:
    def walk_full(wanted: set[str]) -> Iterator[h.Commit]:
        for c in full:
            kept = tuple(p for p in c.paths if p in wanted)
            if kept:
                yield h.Commit(c.sha, c.time, c.subject, c.body, kept)

    def since(old: str, wanted: set[str]) -> h.Appended | None:
        if appended is None:
            return None
        return h.Appended(iter(appended), lambda: dict(kw.get("renames", {})))

    return h.HistorySource(kw.get("head", "head"), kw.get("fp", FP), walk_full, since)


@pytest.fixture
def small(settings: Settings) -> Settings:
    # one-document bulk batches: every trim and delete flushes mid-scroll
    return settings.model_copy(update={"history_commits_per_file": 2, "search_bulk_batch_docs": 1})


def _index(manager: SearchIndex, run: str, files: list[str]) -> str:
    name = manager.create_staging("demo", run, DIMS, model_id="m", now=NOW, docs_fingerprint="d")
    manager.index_files(
        name, "demo", run, [facts(p, 2) for p in files], FakeVectors(manager.settings)
    )
    return name


def _history(es: Elasticsearch, index: str) -> dict[str, list[str]]:
    es.indices.refresh(index=index)
    hits = es.search(index=index, size=1000, query={"exists": {"field": "history_path"}})
    out: dict[str, list[str]] = {}
    for hit in sorted(hits["hits"]["hits"], key=lambda x: -x["_source"]["history_time"]):
        out.setdefault(hit["_source"]["history_path"], []).append(hit["_source"]["history_subject"])
    return out


def test_full_build_bounded_per_file_and_recorded(es: Elasticsearch, small: Settings) -> None:
    manager = SearchIndex(es, small)
    name = _index(manager, "r1", ["clock.py", "cart.py", "util.py"])
    files = {"clock.py", "cart.py", "util.py"}
    walk = source(OLD, head="c1")
    # the walk itself bounds each file (git's reader); the fake gives every commit
    stats = h.stage_history(manager, name, "demo", "r1", walk, files, live_meta=None)
    assert stats.mode == "full" and stats.commits == 5 and stats.docs == 8
    got = _history(es, name)
    assert got["clock.py"] == ["fix timezone parsing in clock", "add clock and cart"]
    assert (manager.index_meta(name) or {})["history"] == {"commit": "c1", "fingerprint": FP}


def test_history_and_chunk_queries_keep_to_their_own_documents(
    es: Elasticsearch, settings: Settings
) -> None:
    manager = SearchIndex(es, settings)
    name = _index(manager, "r1", ["clock.py", "cart.py"])
    h.stage_history(
        manager, name, "demo", "r1", source(OLD), {"clock.py", "cart.py"}, live_meta=None
    )
    manager.refresh(name)
    chunks = es.search(
        index=name,
        **bm25_body(
            "cart clock return def", search_filters(repo="demo", lang=None, path_prefix=None), 100
        ),
    )
    assert chunks["hits"]["hits"] and all("path" in x["_source"] for x in chunks["hits"]["hits"])
    body = history_body(
        "Timezone parsing is wrong in the clock", history_filters(repo="demo", path_prefix=None), 50
    )
    found = es.search(index=name, **body)["hits"]["hits"]
    assert found and all("history_path" in x["_source"] for x in found)
    files = per_file(found)
    best = max(files.values(), key=lambda f: f.score)
    assert best.path == "clock.py" and best.score == 1.0
    assert best.evidence()[0] == "commit 5555555: fix timezone parsing in clock"
    only = history_body("cart", history_filters(repo="demo", path_prefix="clock"), 50)
    assert {
        x["_source"]["history_path"] for x in es.search(index=name, **only)["hits"]["hits"]
    } == {"clock.py"}
    other = history_body("cart", history_filters(repo="elsewhere", path_prefix=None), 50)
    assert es.search(index=name, **other)["hits"]["hits"] == []


def test_a_push_appends_renames_removes_and_trims(es: Elasticsearch, small: Settings) -> None:
    manager = SearchIndex(es, small)
    files = {"clock.py", "cart.py", "util.py"}
    live = _index(manager, "r1", sorted(files))
    h.stage_history(manager, live, "demo", "r1", source(OLD, head="c1"), files, live_meta=None)
    manager.refresh(live)
    manager.flip_alias("demo", live)
    live_meta = manager.index_meta(live)
    meta = staging_meta("demo", "r2", DIMS, "m", NOW, "d")
    target = incremental.clone_live(manager, "demo", "r2", live, meta)
    pushed = [
        commit(7, "cart: round the total", "cart.py"),
        commit(6, "move util to helpers", "helpers.py"),
    ]
    walk = source(OLD, pushed, head="c2", renames={"util.py": "helpers.py"})
    now = {"clock.py", "cart.py", "helpers.py"}
    stats = h.stage_history(
        manager, target, "demo", "r2", walk, now, live_meta=live_meta, removed={"util.py"}
    )
    assert stats.mode == "append" and stats.commits == 2 and stats.renamed == 3
    got = _history(es, target)
    assert got["cart.py"] == ["cart: round the total", "speed up the cart total"]  # trimmed
    assert got["helpers.py"] == ["move util to helpers", "rename helpers"]  # moved + trimmed
    assert "util.py" not in got
    assert got["clock.py"] == ["fix timezone parsing in clock", "add clock and cart"]
    assert (manager.index_meta(target) or {})["history"]["commit"] == "c2"
    # the live index still serves the old history until the flip
    assert "util.py" in _history(es, live)
    manager.refresh(target)
    manager.flip_alias("demo", target)
    assert "util.py" not in _history(es, manager.alias_name("demo"))


def test_no_ancestor_or_other_settings_rebuild(es: Elasticsearch, small: Settings) -> None:
    manager = SearchIndex(es, small)
    files = {"clock.py", "cart.py"}
    live = _index(manager, "r1", sorted(files))
    h.stage_history(manager, live, "demo", "r1", source(OLD), files, live_meta=None)
    manager.refresh(live)
    manager.flip_alias("demo", live)
    live_meta = manager.index_meta(live)
    for run, walk in (
        ("r2", source([commit(9, "rewritten history", "cart.py")])),  # since: no ancestor
        ("r3", source([commit(9, "rewritten history", "cart.py")], [], fp="other")),
    ):
        target = incremental.clone_live(
            manager,
            "demo",
            run,
            manager.live_index("demo") or live,
            staging_meta("demo", run, DIMS, "m", NOW, "d"),
        )
        stats = h.stage_history(manager, target, "demo", run, walk, files, live_meta=live_meta)
        assert stats.mode == "full" and stats.deleted > 0
        assert _history(es, target) == {"cart.py": ["rewritten history"]}
        manager.refresh(target)
        manager.flip_alias("demo", target)
        live_meta = manager.index_meta(target)


def test_a_failed_walk_is_recorded_and_rebuilt_next_time(
    es: Elasticsearch, settings: Settings
) -> None:
    manager = SearchIndex(es, settings)
    name = _index(manager, "r1", ["clock.py"])

    def broken(wanted: set[str]) -> Iterator[h.Commit]:
        yield OLD[0]
        raise CheckoutError("git log: timed out")

    walk = h.HistorySource("c1", FP, broken, lambda old, wanted: None)
    stats = h.stage_history(manager, name, "demo", "r1", walk, {"clock.py"}, live_meta=None)
    assert stats.mode == "failed" and "timed out" in (stats.error or "")
    assert "history" not in (manager.index_meta(name) or {})
    assert _history(es, name) == {"clock.py": ["fix timezone parsing in clock"]}
    off = h.stage_history(manager, name, "demo", "r1", None, {"clock.py"}, live_meta={})
    assert off.mode == "off" and _history(es, name) == {}
