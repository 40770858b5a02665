"""Chunk context in a real index (``search_chunk_context``): switching it on re-indexes the
repository once (the setting is part of the fingerprint), the later window of a long method
then carries its class, its signature and its calls as BM25 words in ``context_text`` and in
its embedded text, and keyword search finds that window by a parameter only its signature
names. Switched off, the field is empty and the same query does not reach the window."""

from __future__ import annotations

from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings, load_settings
from semgraph.db import Graph
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest, ReindexResult
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex
from semgraph.search.query import search
from tests.repos import make_repo

pytestmark = pytest.mark.integration

BODY = "\n".join(f"        total += helper_{i}(value)" for i in range(30))
SOURCE = f"""class Session:
    def send(self, request, frobnicate_budget=None):
        total = self.prepare(request, frobnicate_budget)
{BODY}
        return total
"""


def _run(settings: Settings, graph: Graph, es: Elasticsearch, repo: Path) -> ReindexResult:
    request = ReindexRequest(source=str(repo))
    # the job embeds every chunk itself (its embedding is what this test is about; the
    # vectors job of progressive publish: tests/integration/test_progressive.py)
    settings = settings.model_copy(update={"embed_inline_max_chunks": -1})
    return Reindex(settings, graph, es, request, embedder=Embedder(settings)).run()


def _windows(es: Elasticsearch, settings: Settings, repo_key: str) -> list[dict[str, object]]:
    index = SearchIndex(es, settings)
    live = index.live_index(repo_key)
    assert live is not None
    es.indices.refresh(index=live)
    resp = es.search(
        index=live,
        query={"term": {"symbol": "pkg.sessions.Session.send"}},
        source_includes=["start_line", "context_text"],
        sort=[{"start_line": "asc"}],
        size=50,
    )
    return [hit["_source"] for hit in resp["hits"]["hits"]]


def test_context_on_reindexes_once_and_a_later_window_is_found_by_its_signature(
    graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "ctx", {"pkg/__init__.py": "", "pkg/sessions.py": SOURCE})
    base = {"chunk_max_lines": 12, "embedding_backend": "torch"}
    off = load_settings(**base)
    on = load_settings(**base, search_chunk_context="module,class,signature,calls")
    assert off.search_chunk_context == ""  # off unless asked for

    first = _run(off, graph, es, repo)
    assert first.status == "succeeded"
    windows = _windows(es, off, first.repo_key)
    assert len(windows) >= 3 and all(w["context_text"] == "" for w in windows)
    later = windows[1]["start_line"]
    hits = search(es, off, None, "frobnicate_budget", repo=first.repo_key, mode="bm25", k=10)
    assert later not in {h.start_line for h in hits}  # its own lines do not name it

    switched = _run(on, graph, es, repo)
    assert switched.status == "succeeded", "the context is part of the fingerprint"
    stats = switched.stats["index"]
    assert stats["embedded"] > 0  # a chunk with context embeds another text
    windows = _windows(es, on, first.repo_key)
    text = str(windows[1]["context_text"])
    for word in ("module", "pkg", "sessions", "class", "session", "frobnicate", "budget"):
        assert word in text.split()
    assert {"helper_10", "helper", "10"} <= set(text.split())  # split like the code's words
    hits = search(es, on, None, "frobnicate_budget", repo=first.repo_key, mode="bm25", k=10)
    assert later in {h.start_line for h in hits}
    assert _run(on, graph, es, repo).status == "noop"
