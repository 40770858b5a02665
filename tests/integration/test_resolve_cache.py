"""Incremental resolution in the reindex job, against the real Bolt server and Elasticsearch
(issue 25): a push whose change is one function body resolves that one file again from the
host's cached resolution, and the graph it publishes equals a full publish of the commit
(``semgraph check --graph-parity``, which resolves fully); a forced job resolves fully."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from semgraph.check import graph_parity
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest, ReindexResult
from semgraph.indexer.resolvecache import cache_path
from semgraph.search.embed import Embedder
from tests.repos import POLYGLOT, commit, make_repo
from tests.shared_kinds import shared_embedder

pytestmark = pytest.mark.integration

EXTRA = {
    "lib/ledger.py": "def rotate_ledger(book):\n    return book.rotate()\n",
    "lib/user.py": (
        "from lib.ledger import rotate_ledger\n\n\ndef run(b):\n    return rotate_ledger(b)\n"
    ),
}


@pytest.fixture(scope="module")
def cached(settings: Settings) -> Settings:
    """The session's settings with the resolve cache on (whatever the default)."""
    return settings.model_copy(update={"resolve_cache": True})


@pytest.fixture(scope="module")
def embedder(settings: Settings) -> Embedder:
    return shared_embedder(settings)


@pytest.fixture
def run_index(
    cached: Settings, graph: Graph, es: Elasticsearch, embedder: Embedder
) -> Callable[..., ReindexResult]:
    def run(source: Path, **kw: Any) -> ReindexResult:
        return Reindex(
            cached, graph, es, ReindexRequest(source=str(source), **kw), embedder=embedder
        ).run()

    return run


def test_a_body_push_resolves_one_file_and_publishes_what_a_full_resolve_does(
    cached: Settings, graph: Graph, tmp_path: Path, run_index: Callable[..., ReindexResult]
) -> None:
    repo = make_repo(tmp_path / "rescache", {**POLYGLOT, **EXTRA})
    first = run_index(repo)
    assert first.stats["resolve_incremental"]["mode"] == "full"
    assert cache_path(cached, first.repo_key).is_file()  # kept after the publish

    commit(repo, {"lib/user.py": EXTRA["lib/user.py"] + "\n\ndef twice(b):\n    return run(b)\n"})
    commit(repo, {"lib/ledger.py": "def rotate_ledger(book):\n    return book.rotate(2)\n"})
    second = run_index(repo)
    inc = second.stats["resolve_incremental"]
    assert inc["mode"] == "incremental", inc
    assert inc["files_changed"] == 2  # a cache two commits old: diffed by content
    # the job moved the cache into its work directory and kept its own resolution after
    # the publish: the next job finds one again
    assert cache_path(cached, first.repo_key).is_file()
    third_commit = {"lib/ledger.py": "def rotate_ledger(book):\n    return book.rotate(3)\n"}
    commit(repo, third_commit)
    third = run_index(repo)
    inc = third.stats["resolve_incremental"]
    assert inc["mode"] == "incremental" and inc["files_resolved"] == 1, inc  # body only
    report = graph_parity(cached, graph, third.repo_key, alert=False)
    assert report.ok, report

    forced = run_index(repo, force=True)
    assert forced.stats["resolve_incremental"]["mode"] == "full"
    assert forced.stats["resolve_incremental"]["reason"] == "forced job"
    assert graph_parity(cached, graph, forced.repo_key, alert=False).ok


def test_a_corrupt_cache_is_a_full_resolve_not_an_error(
    cached: Settings, tmp_path: Path, run_index: Callable[..., ReindexResult]
) -> None:
    repo = make_repo(tmp_path / "rescorrupt", {**POLYGLOT, **EXTRA})
    first = run_index(repo)
    cache_path(cached, first.repo_key).write_bytes(b"not a sqlite file" * 100)
    commit(repo, {"lib/ledger.py": "def rotate_ledger(book):\n    return book.rotate(9)\n"})
    second = run_index(repo)
    assert second.status == "succeeded"
    inc = second.stats["resolve_incremental"]
    assert inc["mode"] == "full" and "unreadable" in inc["reason"], inc
