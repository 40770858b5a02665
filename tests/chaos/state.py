"""Reading the end state of a chaos scenario: graph run vs. live index, leftovers."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from semgraph.check import check_repositories
from semgraph.db import connect_search
from semgraph.graph.reader import GraphReader
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest
from semgraph.indexer.sources import repo_key_for
from semgraph.queue.store import JobStore
from semgraph.search.index import SearchIndex
from semgraph.search.query import search
from tests.chaos.conftest import Chaos
from tests.optional import some
from tests.shared_kinds import shared_embedder, shared_search

# a tiny repository: six Python files, so a parse window of 2 files checkpoints mid-parse
SMALL: dict[str, str | bytes | None] = {
    "pkg/__init__.py": "",
    **{
        f"pkg/mod{i}.py": (
            f'"""Module {i}."""\n\n\ndef helper_{i}(x):\n    return x + {i}\n\n\n'
            f"def caller_{i}(y):\n    return helper_{i}(y) * 2\n"
        )
        for i in range(5)
    },
}


def first_index(chaos: Chaos, repo: Path) -> str:
    """Index ``repo`` in the test process (the state a fault must not damage)."""
    embedder = shared_embedder(chaos.settings)
    result = Reindex(
        chaos.settings,
        chaos.graph,
        shared_search(chaos.settings),
        ReindexRequest(source=str(repo)),
        embedder=embedder,
    ).run()
    assert result.status == "succeeded"
    return result.run_id


def enqueue_paused_reindex(
    store: JobStore,
    repo: Path,
    new_commit: str,
    point: str,
    signals: Path,
    *,
    now: float | None = None,
    priority: int = 0,
) -> str:
    """Enqueue a ``chaos_reindex`` of ``new_commit`` whose first attempt pauses at ``point``
    (``<signals>/<point>.reached``, released by ``.go``); returns the job id."""
    signals.mkdir(exist_ok=True)
    return store.enqueue(
        repo_key_for(str(repo)),
        now=time.time() if now is None else now,
        kind="chaos_reindex",
        commit=new_commit,
        priority=priority,
        args={"source": str(repo), "pause_at": point, "signal_dir": str(signals)},
    ).job_id


def graph_repo(chaos: Chaos, key: str) -> dict[str, Any]:
    repos = {r["key"]: r for r in GraphReader(chaos.graph).repositories()}
    return repos.get(key, {})


def live_run(chaos: Chaos, key: str) -> str | None:
    es = connect_search(chaos.settings)
    try:
        index = SearchIndex(es, chaos.settings)
        live = index.live_index(key)
        return index.index_run_id(live) if live else None
    finally:
        es.close()


def index_names(chaos: Chaos) -> list[str]:
    es = connect_search(chaos.settings)
    try:
        return [info.name for info in SearchIndex(es, chaos.settings).list_indexes()]
    finally:
        es.close()


def check_statuses(chaos: Chaos) -> dict[str, str]:
    return {
        c.repo: c.status
        for c in check_repositories(
            chaos.settings, chaos.graph, shared_search(chaos.settings), alert=False
        )
    }


def job_dirs(chaos: Chaos) -> list[str]:
    root = chaos.settings.state_dir / "jobs"
    return sorted(p.name for p in root.iterdir()) if root.is_dir() else []


def run_status(chaos: Chaos, run_id: str) -> str | None:
    rows = chaos.graph.query("run", "MATCH (r:IndexRun {id: $id}) RETURN r.status AS s", id=run_id)
    return rows[0]["s"] if rows else None


def assert_consistent(chaos: Chaos, key: str, commit: str, symbol: str) -> str:
    """Graph and live index name the same run of ``commit``, nothing else is left in
    Elasticsearch or the jobs folder, and search finds ``symbol``. Returns the run id."""
    repo = graph_repo(chaos, key)
    assert repo.get("commit") == commit, repo
    assert live_run(chaos, key) == repo["run_id"]
    assert check_statuses(chaos) == {key: "ok"}
    es = connect_search(chaos.settings)
    try:
        index = SearchIndex(es, chaos.settings)
        assert index_names(chaos) == [index.live_index(key)], "orphan staging index left"
        hits = search(es, chaos.settings, shared_embedder(chaos.settings), symbol, repo=key, k=3)
    finally:
        es.close()
    assert hits and some(hits[0].symbol).endswith(symbol), hits
    assert job_dirs(chaos) == [], "job workdir left behind"
    return str(repo["run_id"])
