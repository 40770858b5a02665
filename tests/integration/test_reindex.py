"""The reindex job end to end against the real Bolt server and Elasticsearch: index a
multi-language repository, search it, query the graph, reindex after a change, reindex
unchanged content, and inject a failure at every phase boundary (DESIGN.md invariants 4, 5)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from semgraph.check import check_repositories
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import JobError, SearchRequestError
from semgraph.faults import Faults
from semgraph.graph.reader import GraphReader
from semgraph.graph.runs import RunStore
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest, ReindexResult
from semgraph.indexer.run_state import PublishDiverged
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex
from semgraph.search.query import search
from tests.optional import some
from tests.repos import POLYGLOT, commit, make_repo
from tests.shared_kinds import shared_embedder

pytestmark = pytest.mark.integration


class Boom(RuntimeError):
    pass


def _raise(**_: object) -> None:
    raise Boom("injected")


def at(point: str, action: Callable[..., None]) -> Faults:
    """A fault registry with ``action`` armed at the reindex's ``point``."""
    faults = Faults()
    faults.arm(f"reindex.{point}", action)
    return faults


@pytest.fixture(scope="module")
def embedder(settings: Settings) -> Embedder:
    return shared_embedder(settings)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "polyglot", POLYGLOT)


@pytest.fixture
def run_index(
    settings: Settings, graph: Graph, es: Elasticsearch, embedder: Embedder
) -> Callable[..., ReindexResult]:
    # the job embeds every chunk itself: these tests are about its phases and reuse (the
    # vectors job of progressive publish: tests/integration/test_progressive.py)
    whole = settings.model_copy(update={"embed_inline_max_chunks": -1})

    def run(source: Path, **kw: Any) -> ReindexResult:
        faults = kw.pop("faults", Faults())
        use_embedder = kw.pop("embedder_override", embedder)
        request = ReindexRequest(source=str(source), **kw)
        return Reindex(whole, graph, es, request, embedder=use_embedder, faults=faults).run()

    return run


def _live(settings: Settings, es: Elasticsearch, repo_key: str) -> tuple[str | None, str | None]:
    index = SearchIndex(es, settings)
    live = index.live_index(repo_key)
    return live, index.index_run_id(live) if live else None


def _graph_run(graph: Graph, repo_key: str) -> str | None:
    repos = {r["key"]: r for r in GraphReader(graph).repositories()}
    return repos[repo_key]["run_id"] if repo_key in repos else None


def _top(
    settings: Settings, es: Elasticsearch, embedder: Embedder, query: str, repo_key: str, k: int = 3
) -> list[Any]:
    return search(es, settings, embedder, query, repo=repo_key, k=k)


def test_index_then_search_and_query_the_graph(
    settings: Settings,
    graph: Graph,
    es: Elasticsearch,
    embedder: Embedder,
    repo: Path,
    run_index: Callable[..., ReindexResult],
) -> None:
    result = run_index(repo)
    assert result.status == "succeeded"
    key = result.repo_key

    by_name = _top(settings, es, embedder, "compute_checksum", key)
    assert "app.models.compute_checksum" in [h.symbol for h in by_name]
    by_meaning = _top(settings, es, embedder, "calculate a crc hash of some bytes", key)
    assert "app.models.compute_checksum" in [h.symbol for h in by_meaning]
    js = _top(settings, es, embedder, "handle an http request", key)
    assert any(h.path == "web/server.js" for h in js)
    assert all(h.run_id == result.run_id for h in by_name + by_meaning + js)

    callers = GraphReader(graph).callers("compute_checksum", repo=key)
    assert {e["qualified_name"] for e in callers.edges} == {
        "app.models.Repository.save",
        "app.service.fingerprint",
    }

    run = RunStore(graph).get(result.run_id)
    assert run is not None and run["status"] == "succeeded"
    assert _graph_run(graph, key) == result.run_id == _live(settings, es, key)[1]


def test_reindex_after_change_serves_new_content_and_drops_old_index(
    settings: Settings,
    graph: Graph,
    es: Elasticsearch,
    embedder: Embedder,
    repo: Path,
    run_index: Callable[..., ReindexResult],
) -> None:
    first = run_index(repo)
    old_index, _ = _live(settings, es, first.repo_key)
    commit(
        repo,
        {
            "app/secrets.py": 'def rotate_credentials(vault):\n    """Rotate every '
            'API credential stored in the vault."""\n    return vault.rotate()\n',
            "web/server.js": None,
        },
    )
    second = run_index(repo)
    assert second.status == "succeeded" and second.commit != first.commit
    new_index, new_run = _live(settings, es, first.repo_key)
    assert new_run == second.run_id and new_index != old_index
    assert not es.indices.exists(index=some(old_index))
    hits = _top(settings, es, embedder, "rotate_credentials", second.repo_key)
    assert hits[0].symbol == "app.secrets.rotate_credentials"
    js = search(es, settings, embedder, "parseQuery", repo=second.repo_key, k=20)
    assert all(h.path != "web/server.js" for h in js)
    reader = GraphReader(graph)
    assert reader.definitions("rotate_credentials", repo=second.repo_key).matches
    assert not reader.definitions("handleRequest", repo=second.repo_key).matches


def test_unchanged_reindex_embeds_nothing(
    settings: Settings,
    graph: Graph,
    es: Elasticsearch,
    repo: Path,
    run_index: Callable[..., ReindexResult],
) -> None:
    first = run_index(repo)
    noop = run_index(repo)
    assert noop.status == "noop"
    assert _live(settings, es, first.repo_key)[1] == first.run_id
    forced = run_index(repo, force=True)
    assert forced.status == "succeeded"
    stats = forced.stats["index"]
    assert stats["embedded"] == 0 and stats["reused"] == stats["chunks"] > 0
    assert forced.stats["publish"]["mode"] == "full"  # a forced job never trusts a delta


def test_a_reindex_after_a_push_publishes_a_delta(
    settings: Settings,
    graph: Graph,
    es: Elasticsearch,
    repo: Path,
    run_index: Callable[..., ReindexResult],
) -> None:
    first = run_index(repo)
    assert first.stats["publish"]["mode"] == "first"
    commit(repo, {"app/extra.py": "def extra_helper(x):\n    return x\n"})
    second = run_index(repo)
    publish = second.stats["publish"]
    assert (publish["mode"], publish["files_changed"], publish["dropped_rows"]) == ("delta", 1, 0)
    assert publish["nodes"].get("Symbol", 0) >= 2  # the new file's module and function
    reader = GraphReader(graph)
    assert reader.definitions("extra_helper", repo=second.repo_key).matches


class _FailingEmbedder:
    def __init__(self, real: Any) -> None:
        self.real = real
        self.model_id = real.model_id
        self.dims = real.dims

    def text_for(self, *a: Any) -> Any:
        return self.real.text_for(*a)

    def key_for(self, *a: Any) -> Any:
        return self.real.key_for(*a)

    def embed(self, texts: list[str], on_batch: object = None) -> list[list[float]]:
        raise Boom("embedding model crashed")


def _refuse_bulk(**_: object) -> None:
    raise SearchRequestError("bulk: injected item failure")


@pytest.mark.parametrize("where", ["embedding", "bulk", "graph_transaction"])
def test_failure_before_graph_commit_leaves_live_state_untouched(
    settings: Settings,
    graph: Graph,
    es: Elasticsearch,
    embedder: Embedder,
    repo: Path,
    run_index: Callable[..., ReindexResult],
    where: str,
) -> None:
    first = run_index(repo)
    before_live = _live(settings, es, first.repo_key)
    commit(repo, {"app/extra.py": "def brand_new_function():\n    return 1\n"})
    kwargs: dict[str, Any] = {}
    if where == "embedding":
        kwargs["embedder_override"] = _FailingEmbedder(embedder)
    elif where == "bulk":
        kwargs["faults"] = Faults()
        kwargs["faults"].arm("search.bulk", _refuse_bulk)
    else:
        kwargs["faults"] = Faults()
        kwargs["faults"].arm("publish.before_commit", _raise)
    with pytest.raises((Boom, SearchRequestError, JobError)):
        run_index(repo, **kwargs)
    assert _live(settings, es, first.repo_key) == before_live
    assert _graph_run(graph, first.repo_key) == first.run_id
    staging = [n for n in es.indices.get(index="code-*") if n != before_live[0]]
    assert staging == [], "the staging index must be deleted"
    assert not GraphReader(graph).definitions("brand_new_function", repo=first.repo_key).matches
    failed = [r for r in RunStore(graph).list(repo=first.repo_key) if r["status"] == "failed"]
    assert len(failed) == 1


def test_alias_flip_failure_is_diverged_alerted_and_repaired(
    settings: Settings,
    graph: Graph,
    es: Elasticsearch,
    embedder: Embedder,
    repo: Path,
    run_index: Callable[..., ReindexResult],
    caplog: pytest.LogCaptureFixture,
) -> None:
    first = run_index(repo)
    commit(repo, {"app/extra.py": "def brand_new_function():\n    return 1\n"})
    with caplog.at_level(logging.CRITICAL, logger="semgraph"), pytest.raises(PublishDiverged):
        run_index(repo, faults=at("alias_flip", _raise))
    assert any(getattr(r, "action", "") == "index_diverged" for r in caplog.records)
    runs = RunStore(graph).list(repo=first.repo_key)
    diverged = [r for r in runs if r["status"] == "diverged"]
    assert len(diverged) == 1
    assert _graph_run(graph, first.repo_key) == diverged[0]["id"]
    assert _live(settings, es, first.repo_key)[1] == first.run_id  # old index still served

    found = check_repositories(settings, graph, es, repair=False, alert=False)
    assert [(c.repo, c.status) for c in found] == [(first.repo_key, "diverged")]
    repaired = check_repositories(settings, graph, es, repair=True, alert=False)
    assert repaired[0].status == "repaired"
    (note,) = some(RunStore(graph).get(diverged[0]["id"]))["repairs"]  # the repair is on record
    assert "check --repair" in note and "flipped it to" in note
    assert _live(settings, es, first.repo_key)[1] == diverged[0]["id"]
    assert check_repositories(settings, graph, es, alert=False)[0].status == "ok"
    hits = _top(settings, es, embedder, "brand_new_function", first.repo_key)
    assert hits and hits[0].symbol == "app.extra.brand_new_function"


def test_searches_during_a_reindex_never_fail_and_never_mix_runs(
    settings: Settings,
    graph: Graph,
    es: Elasticsearch,
    embedder: Embedder,
    repo: Path,
    run_index: Callable[..., ReindexResult],
) -> None:
    first = run_index(repo)
    commit(repo, {"app/models.py": POLYGLOT["app/models.py"] + "\n\ndef later(): pass\n"})
    stop = threading.Event()
    seen_runs: set[str] = set()
    errors: list[BaseException] = []
    searches = 0

    def loop() -> None:
        nonlocal searches
        while not stop.is_set():
            try:
                hits = search(
                    es, settings, embedder, "checksum repository", repo=first.repo_key, k=8
                )
            except BaseException as exc:  # every failure is recorded and fails the test
                errors.append(exc)
                return
            runs = {h.run_id for h in hits}
            assert len(runs) == 1, f"one search mixed runs {runs}"
            seen_runs.update(runs)
            searches += 1

    reader = threading.Thread(target=loop)
    reader.start()
    try:
        second = run_index(repo)
    finally:
        stop.set()
        reader.join(timeout=60)
    assert not errors, errors
    assert searches > 0
    assert seen_runs <= {first.run_id, second.run_id}
    final = search(es, settings, embedder, "checksum repository", repo=first.repo_key, k=8)
    assert {h.run_id for h in final} == {second.run_id}
