"""The BM25 request and the score-normalised fusion against the real Elasticsearch: stop words
of a question do not match code by themselves, the split fields are summed, and the hybrid's
scores are the fused, normalised ones."""

from __future__ import annotations

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings, load_settings
from semgraph.model import Chunk, FileFacts, content_hash
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex
from semgraph.search.query import SearchHit, search
from tests.optional import some

pytestmark = pytest.mark.integration

REPO = "bm25"

CHUNKS = [
    (
        "def read_header(stream):\n    line = stream.readline()\n    return parse_line(line)",
        "read_header",
    ),
    (
        "def check_choice(value):\n"
        '    raise ValueError("the value is not one of the choices; it has to be in the list")',
        "check_choice",
    ),
    ("def stream_size(stream):\n    return len(stream.getvalue())", "stream_size"),
    ("def header_names(headers):\n    return sorted(h.name for h in headers)", "header_names"),
]


def corpus() -> list[FileFacts]:
    items, line = [], 1
    for text, name in CHUNKS:
        end = line + text.count("\n")
        items.append(Chunk(line, end, text, content_hash(text), f"io.{name}", "function"))
        line = end + 2
    return [FileFacts("io.py", "python", "0" * 40, 100, line, "ok", chunks=items)]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(load_settings())


@pytest.fixture
def indexed(es: Elasticsearch, settings: Settings, embedder: Embedder) -> SearchIndex:
    manager = SearchIndex(es, settings)
    staging = manager.create_staging(REPO, "r1", embedder.dims)
    manager.index_files(staging, REPO, "r1", corpus(), embedder)
    manager.refresh(staging)
    manager.flip_alias(REPO, staging)
    return manager


def names(hits: list[SearchHit]) -> list[str]:
    return [some(h.symbol).rsplit(".", 1)[-1] for h in hits]


def test_stop_words_alone_match_nothing(
    indexed: SearchIndex, es: Elasticsearch, settings: Settings, embedder: Embedder
) -> None:
    question = "where is the header of the stream read"
    hits = search(es, settings, embedder, question, repo=REPO, k=10, mode="bm25")
    # check_choice shares only "the", "is", "of" ... with the question: not a BM25 hit
    assert "check_choice" not in names(hits)
    assert names(hits)[0] == "read_header"
    # a question of stop words only still searches with them
    assert names(search(es, settings, embedder, "it is to be", repo=REPO, mode="bm25")) == [
        "check_choice"
    ]


def test_split_fields_are_summed(
    indexed: SearchIndex, es: Elasticsearch, settings: Settings, embedder: Embedder
) -> None:
    # read_header matches "read" and "header" in its name and code and "stream" in its code;
    # stream_size and header_names match one word each
    hits = search(es, settings, embedder, "readHeader stream", repo=REPO, k=10, mode="bm25")
    assert names(hits)[0] == "read_header"
    assert set(names(hits)) == {"read_header", "stream_size", "header_names"}


def test_fused_scores_are_normalised_and_ordered(
    indexed: SearchIndex, es: Elasticsearch, settings: Settings, embedder: Embedder
) -> None:
    hits = search(es, settings, embedder, "read the header line of a stream", repo=REPO, k=4)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert names(hits)[0] == "read_header"
    assert hits[0].bm25_rank == 1 and hits[0].knn_rank is not None
    # single retriever: its own top scores 1 after normalisation
    for mode in ("bm25", "knn"):
        single = search(es, settings, embedder, "read the header", repo=REPO, k=4, mode=mode)
        assert single[0].score == 1.0
