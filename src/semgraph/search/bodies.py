"""Every Elasticsearch mapping, settings block and request body semgraph sends, as named
constants and ``*_body`` builders (pure: no client, no I/O).

Every index we create carries ``_meta`` in its mapping (:func:`staging_meta`): the marker
``semgraph_index``, the repository key, the run id, the model id, the vector size, the
creation time passed in from Python, and the fingerprint of what the documents depend on
(incremental staging reuses an index only under the same one).

Sections: the staging index (:mod:`semgraph.search.index`), bulk loading
(:mod:`semgraph.search.loader`), incremental staging (:mod:`semgraph.search.incremental`) and
hybrid search (:mod:`semgraph.search.query`), and progressive publish's pending vectors
(:mod:`semgraph.search.vectors`).

The module is over 300 lines because every body the product sends is here, next to the
mapping it must agree with.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterable
from typing import Any

from semgraph.search.longquery import bm25_words

# bump when the mapping or what a document holds changes incompatibly (2: the embedded text
# leads with the symbol's name words, see embedding_text; an incremental run must not keep
# vectors of the old text for unchanged files)
# 3: symbols named as the graph names them (no source-root prefix); 4: each document records
# its file's role (semgraph.search.roles), so the next run restages once (vectors reused)
# 5: the index also holds each file's commit messages (semgraph.search.history)
# 6: each chunk document's context words (context_text, semgraph.search.context)
INDEX_FORMAT = 6
META_MARKER = "semgraph_index"

_KEYWORD = {"type": "keyword", "ignore_above": 8191}  # 8191 chars <= Lucene's 32766 bytes
_TEXT = {"type": "text", "analyzer": "standard"}
EMBED_TEXT_FIELD: dict[str, Any] = {"type": "keyword", "index": False, "doc_values": False}
HAS_VECTOR: dict[str, Any] = {"exists": {"field": "embedding"}}

# -- the staging index: mapping, settings, alias and read filters -------------------------------

CREATE_STAGING_SETTINGS: dict[str, Any] = {
    "index": {
        "number_of_shards": 1,
        "number_of_replicas": 0,
        "refresh_interval": "-1",  # loaded once, then refreshed explicitly; never written again
    }
}

CREATE_STAGING_MAPPING: dict[str, Any] = {
    "dynamic": "strict",
    "_meta": {},
    "properties": {
        "repo": _KEYWORD,
        "run_id": _KEYWORD,
        "path": _KEYWORD,
        "path_text": _TEXT,
        "language": _KEYWORD,
        "role": _KEYWORD,
        "kind": _KEYWORD,
        "symbol": _KEYWORD,
        "name": _KEYWORD,
        "symbol_text": _TEXT,
        "chunk_hash": _KEYWORD,
        "vector_key": _KEYWORD,
        "start_line": {"type": "integer"},
        "end_line": {"type": "integer"},
        "code": _TEXT,
        "identifiers": _TEXT,
        "context_text": _TEXT,
        "embedding": {"type": "dense_vector", "dims": 0, "index": True, "similarity": "cosine"},
        # a chunk whose vector is pending (progressive publish, semgraph.search.vectors)
        # carries the text to embed until its vector arrives; never searched
        "embed_text": EMBED_TEXT_FIELD,
        # a history document (one per file and commit) has only these, the repo and the run:
        # no chunk query matches it (its fields are its own), no history query a chunk
        "history_path": _KEYWORD,
        "history_sha": _KEYWORD,
        "history_time": {"type": "long"},
        "history_subject": {"type": "keyword", "index": False, "doc_values": False},
        "history_text": _TEXT,
    },
}

LIVE_INDEX_FILTER = "*.aliases"
LIST_INDEXES_FILTER = ["*.aliases", "*.mappings._meta"]
INDEX_META_FILTER = "*.mappings._meta"
RUN_IDS_FILTER = "*.mappings._meta.run_id"


def create_staging_body(
    *, dims: int, meta: dict[str, Any], shards: int, replicas: int
) -> dict[str, Any]:
    settings = copy.deepcopy(CREATE_STAGING_SETTINGS)
    settings["index"]["number_of_shards"] = shards
    settings["index"]["number_of_replicas"] = replicas
    mappings = copy.deepcopy(CREATE_STAGING_MAPPING)
    mappings["_meta"] = meta
    mappings["properties"]["embedding"]["dims"] = dims
    return {"settings": settings, "mappings": mappings}


def staging_meta(
    repo_key: str,
    run_id: str,
    dims: int,
    model_id: str,
    now: float | None,
    docs_fingerprint: str,
) -> dict[str, Any]:
    """The ``_meta`` of a run's index (see the module docstring)."""
    return {
        META_MARKER: INDEX_FORMAT,
        "repo": repo_key,
        "run_id": run_id,
        "model_id": model_id,
        "dims": dims,
        "created_at": time.time() if now is None else now,
        "docs_fingerprint": docs_fingerprint,
    }


def flip_alias_actions(alias: str, new_index: str, old: Iterable[str]) -> list[dict[str, Any]]:
    """Remove every old target and add the new one: applied atomically by ``_aliases``."""
    actions: list[dict[str, Any]] = [
        {"remove": {"index": name, "alias": alias}} for name in old if name != new_index
    ]
    actions.append({"add": {"index": new_index, "alias": alias}})
    return actions


# -- bulk loading -------------------------------------------------------------------------------

LOOKUP_VECTORS_SOURCE = ["vector_key", "embedding"]


def lookup_vectors_body(keys: list[str]) -> dict[str, Any]:
    """One hit per key (collapsed), with just the key and the vector."""
    return {
        # a chunk whose vector is pending has the key but no vector
        "query": {"bool": {"filter": [{"terms": {"vector_key": keys}}, HAS_VECTOR]}},
        "collapse": {"field": "vector_key"},
        "size": len(keys),
        "_source": LOOKUP_VECTORS_SOURCE,
        "track_total_hits": False,
    }


def bulk_index_operations(
    staging: str, docs: list[tuple[str, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The ``_bulk`` body that indexes ``(id, document)`` pairs into ``staging``."""
    operations: list[dict[str, Any]] = []
    for doc_id, doc in docs:
        operations.append({"index": {"_index": staging, "_id": doc_id}})
        operations.append(doc)
    return operations


# -- vectors pending (progressive publish, semgraph.search.vectors) ----------------------------

# a chunk document whose vector has not arrived: it has a key, no vector
PENDING_QUERY: dict[str, Any] = {
    "bool": {"filter": [{"exists": {"field": "vector_key"}}], "must_not": [HAS_VECTOR]}
}
PENDING_SOURCE = ["vector_key", "embed_text"]


def pending_page_body(size: int, after: list[Any] | None) -> dict[str, Any]:
    """The next ``size`` chunks whose vectors are pending, with their keys and texts, in
    key order (``after``: the last page's last sort values)."""
    body: dict[str, Any] = {
        "size": size,
        "query": PENDING_QUERY,
        "_source": PENDING_SOURCE,
        "sort": [{"vector_key": "asc"}, {"path": "asc"}, {"start_line": "asc"}],
        "track_total_hits": False,
    }
    if after is not None:
        body["search_after"] = after
    return body


def semantic_counts_body(repos: list[str] | None) -> dict[str, Any]:
    """Per repository: its chunk documents and those whose vectors are pending."""
    filters: list[dict[str, Any]] = [{"exists": {"field": "vector_key"}}]
    if repos is not None:
        filters.append({"terms": {"repo": repos}})
    return {
        "size": 0,
        "query": {"bool": {"filter": filters}},
        "aggs": {
            "repos": {
                "terms": {"field": "repo", "size": max(len(repos or ()), 100)},
                "aggs": {"pending": {"filter": {"bool": {"must_not": [HAS_VECTOR]}}}},
            }
        },
        "track_total_hits": False,
    }


def vector_update_operations(
    index: str, updates: list[tuple[str, list[float]]]
) -> list[dict[str, Any]]:
    """The ``_bulk`` body that gives documents their vectors and drops their pending text."""
    operations: list[dict[str, Any]] = []
    for doc_id, vector in updates:
        operations.append({"update": {"_index": index, "_id": doc_id}})
        operations.append({"doc": {"embedding": vector, "embed_text": None}})
    return operations


# -- incremental staging ------------------------------------------------------------------------


def clone_settings(replicas: int) -> dict[str, Any]:
    """Settings of the clone: writable, and the configured replica count (not copied)."""
    return {"index.blocks.write": None, "index.number_of_replicas": replicas}


def stale_docs_body(paths: list[str]) -> dict[str, Any]:
    """Every document of ``paths``, ids only."""
    return {"query": {"terms": {"path": paths}}, "_source": False, "sort": ["_doc"]}


def bulk_delete_operations(target: str, ids: list[str]) -> list[dict[str, Any]]:
    """The ``_bulk`` body that deletes the documents ``ids`` from ``target``."""
    return [{"delete": {"_index": target, "_id": doc_id}} for doc_id in ids]


# -- commit history (semgraph.search.history) ---------------------------------------------------

HISTORY_SOURCE = ["history_path", "history_sha", "history_subject", "history_time"]


def history_docs_body(paths: list[str] | None) -> dict[str, Any]:
    """The history documents of ``paths`` (every one when None), newest first per path."""
    query: dict[str, Any] = (
        {"exists": {"field": "history_path"}}
        if paths is None
        else {"terms": {"history_path": paths}}
    )
    return {
        "query": query,
        "_source": HISTORY_SOURCE,
        "sort": [{"history_path": "asc"}, {"history_time": "desc"}, {"history_sha": "asc"}],
    }


def history_filters(*, repo: str | None, path_prefix: str | None) -> list[dict[str, Any]]:
    filters: list[dict[str, Any]] = []
    if repo is not None:
        filters.append({"term": {"repo": repo}})
    if path_prefix:
        filters.append({"prefix": {"history_path": path_prefix}})
    return filters


def history_body(query: str, filters: list[dict[str, Any]], size: int) -> dict[str, Any]:
    """BM25 over the commit messages' words, the query's words chosen as the chunks' BM25
    chooses them (bounded: :func:`semgraph.search.longquery.bm25_words`)."""
    return {
        "size": size,
        "query": {
            "bool": {
                "must": [{"match": {"history_text": " ".join(bm25_words(query))}}],
                "filter": filters,
            }
        },
        "_source": HISTORY_SOURCE,
        "track_total_hits": False,
    }


# -- hybrid search ------------------------------------------------------------------------------

HIT_SOURCE = {
    "excludes": [
        "embedding",
        "embed_text",
        "identifiers",
        "path_text",
        "symbol_text",
        "context_text",
    ]
}

# one text per field, scores summed (most_fields): the split identifiers of the code, the
# symbol's and the path's words, and the chunk's context (its class, signature, calls); the
# raw code field (standard analyzer, identifiers unsplit) and best_fields' maximum both ranked
# worse on the outside evaluation (bench/NOTES.md)
BM25_FIELDS = ["identifiers", "symbol_text", "path_text^0.5", "context_text^0.5"]
BM25_NAME_BOOST = 5.0
# a case-insensitive term query is an automaton; ES refuses large ones (identifiers are short)
MAX_NAME_TERM_CHARS = 128


def search_filters(
    *,
    repo: str | None,
    lang: str | None,
    path_prefix: str | None,
    role: str | None = None,
) -> list[dict[str, Any]]:
    filters: list[dict[str, Any]] = []
    if repo is not None:
        filters.append({"term": {"repo": repo}})
    if lang is not None:
        filters.append({"term": {"language": lang}})
    if path_prefix:
        filters.append({"prefix": {"path": path_prefix}})
    if role is not None:
        filters.append({"term": {"role": role}})
    return filters


def bm25_body(query: str, filters: list[dict[str, Any]], size: int) -> dict[str, Any]:
    """BM25 over the client-split identifiers, the symbol and the path, with the query split
    the same way and its stop words dropped (a long query: its informative words, bounded,
    :func:`semgraph.search.longquery.bm25_words`); plus the exact name for a single token."""
    should: list[dict[str, Any]] = [
        {
            "multi_match": {
                "query": " ".join(bm25_words(query)),
                "fields": BM25_FIELDS,
                "type": "most_fields",
            }
        },
    ]
    token = query.strip()
    if 0 < len(token) <= MAX_NAME_TERM_CHARS and not any(c.isspace() for c in token):
        should.append(
            {"term": {"name": {"value": token, "case_insensitive": True, "boost": BM25_NAME_BOOST}}}
        )
    return {
        "size": size,
        "query": {"bool": {"should": should, "minimum_should_match": 1, "filter": filters}},
        "_source": HIT_SOURCE,
        "track_total_hits": False,
    }


def knn_body(
    vector: list[float], filters: list[dict[str, Any]], size: int, num_candidates: int
) -> dict[str, Any]:
    """Approximate kNN on the chunk vectors (cosine), with the same filters."""
    knn: dict[str, Any] = {
        "field": "embedding",
        "query_vector": vector,
        "k": size,
        "num_candidates": max(num_candidates, size),
    }
    if filters:
        knn["filter"] = filters
    return {"size": size, "knn": knn, "_source": HIT_SOURCE, "track_total_hits": False}


def msearch_searches(targets: list[str], bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``_msearch`` body: each search body after its header naming the ``targets``."""
    searches: list[dict[str, Any]] = []
    for body in bodies:
        searches.append({"index": targets, "ignore_unavailable": False})
        searches.append(body)
    return searches
