"""One naming for symbols (issue 27): in a src-layout repository a search hit names a
symbol as the graph does (``pkg.mod.f``, not ``src.pkg.mod.f``), so its ``symbol`` can be
handed to a graph query as it is; a repository without a source root is unchanged. Real
Bolt server and Elasticsearch, through the reindex job."""

from __future__ import annotations

from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.reader import GraphReader
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest
from semgraph.search.query import search
from tests.repos import make_repo
from tests.shared_kinds import shared_embedder

pytestmark = pytest.mark.integration

SRC_LAYOUT = {
    "pyproject.toml": '[project]\nname = "ledgerkit"\n',
    "src/ledgerkit/__init__.py": "from .books import Journal\n",
    "src/ledgerkit/books.py": (
        "def reconcile_ledger_entries(book):\n    return sorted(book)\n\n\n"
        "class Journal:\n    def post_entry(self, entry):\n        return entry\n"
    ),
    "tools/run.py": "def reconcile_tool():\n    return 1\n",
}


def test_search_hits_name_symbols_as_the_graph_does(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    embedder = shared_embedder(settings)
    repo = make_repo(tmp_path / "srclayout", SRC_LAYOUT)
    result = Reindex(settings, graph, es, ReindexRequest(source=str(repo)), embedder=embedder).run()
    assert result.status == "succeeded"
    reader = GraphReader(graph)
    hits = search(es, settings, embedder, "reconcile ledger entries", repo=result.repo_key, k=10)
    by_path = {h.path: h for h in hits if h.symbol}
    hit = next(h for h in hits if h.symbol and h.symbol.endswith("reconcile_ledger_entries"))
    assert hit.symbol == "ledgerkit.books.reconcile_ledger_entries"
    # the hit's name is what the graph answers to, qualified, as it is
    answer = reader.definitions(hit.symbol, repo=result.repo_key)
    assert [m["qualified_name"] for m in answer.matches] == [hit.symbol]
    method = search(es, settings, embedder, "post_entry", repo=result.repo_key, mode="bm25", k=5)
    assert "ledgerkit.books.Journal" in {h.symbol for h in method}  # the class's chunk
    assert not any(h.symbol.startswith("src.") for h in hits + method if h.symbol)
    # outside the source root nothing is renamed
    if "tools/run.py" in by_path:
        assert by_path["tools/run.py"].symbol == "tools.run.reconcile_tool"
    tool = search(es, settings, embedder, "reconcile_tool", repo=result.repo_key, mode="bm25")
    assert "tools.run.reconcile_tool" in {h.symbol for h in tool}
