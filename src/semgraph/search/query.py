"""Hybrid search: BM25 and kNN run separately, fused client-side (works on every license
tier: no server-side retriever needed).

Fusion is score-normalised (:func:`minmax_fusion`): each retriever's scores over its window
are scaled to 0..1 by their own minimum and maximum and summed with equal weights. On the
outside evaluation's tuning half it beat the reciprocal rank fusion used before at every
``k`` tried: recall@5 0.795 against 0.769-0.778 (``bench/NOTES.md``), because it keeps how
far ahead a retriever's best hit is, which ranks throw away.

Both searches go in one ``_msearch`` request against the *concrete* indexes behind the
aliases, resolved once per attempt, so the two rankings always come from the same run. If an
alias flipped and its old index was deleted in between, the search is retried from the
alias resolution (bounded), so searches during a reindex neither fail nor mix runs.
"""

from __future__ import annotations

import logging
from typing import Any, TypedDict, Unpack

import elasticsearch

from semgraph.config import Settings
from semgraph.db import search_errors
from semgraph.errors import SearchNotIndexed, SearchQueryError, SearchRequestError
from semgraph.faults import PROCESS, Faults
from semgraph.logs import event
from semgraph.search.bodies import (
    bm25_body,
    history_body,
    history_filters,
    knn_body,
    msearch_searches,
    search_filters,
    semantic_counts_body,
)
from semgraph.search.embed import Embedder
from semgraph.search.history_query import (
    HISTORY_HITS,
    FileHistory,
    evidence_of,
    lifted,
    per_file,
)
from semgraph.search.hits import (
    SearchAnswer,
    SearchHit,
    minmax_fusion,
    semantic_of,
    snippet,
    snippet_words,
)
from semgraph.search.index import SearchIndex
from semgraph.search.longquery import BoundedQuery, bound_query, embedding_windows, pool
from semgraph.search.roles import ROLES

log = logging.getLogger(__name__)

__all__ = [
    "MODES",
    "SearchAnswer",
    "SearchHit",
    "minmax_fusion",
    "search",
    "search_answer",
    "snippet",
    "validate",
]

MODES = ("hybrid", "bm25", "knn")
MAX_K = 200
RESOLVE_ATTEMPTS = 3
# the weight of BM25 and of kNN in the hybrid (equal: 0.3-0.5 for BM25 tied on the tuning
# half's recall@5, 0.5 had the best MRR@10)
HYBRID_WEIGHTS = (0.5, 0.5)


def validate(
    query: str, *, k: int, mode: str, settings: Settings, role: str | None = None
) -> BoundedQuery:
    """The query as searched: cleaned and cut to ``search_max_query_chars`` (never refused
    for its length); a bad ``k``, ``mode`` or ``role``, or an empty query, is an error that
    does not repeat the query."""
    bounded = bound_query(query, settings.search_max_query_chars)
    if not bounded.text:
        raise SearchQueryError("the search query is empty")
    if not 1 <= k <= MAX_K:
        raise SearchQueryError(f"k must be between 1 and {MAX_K}, got {k}")
    if mode not in MODES:
        raise SearchQueryError(f"mode must be one of {', '.join(MODES)}, got {mode[:40]!r}")
    if role is not None and role not in ROLES:
        raise SearchQueryError(f"role must be one of {', '.join(ROLES)}, got {role[:40]!r}")
    return bounded


def query_vector(embedder: Embedder, text: str) -> list[float]:
    """The query's vector: its windows' vectors pooled (one window: its own vector)."""
    return pool(embedder.embed(embedding_windows(text)))


def resolve_targets(manager: SearchIndex, repo: str | None) -> list[str]:
    """The concrete indexes to search: the one behind ``repo``'s alias, or all of them."""
    if repo is not None:
        index = manager.live_index(repo)
        if index is None:
            raise SearchNotIndexed(
                f"repository {repo!r} is not indexed (no alias {manager.alias_name(repo)}); "
                "run `semgraph index` for it first"
            )
        return [index]
    targets = sorted(set(manager.live_indexes().values()))
    if not targets:
        raise SearchNotIndexed(
            f"no repository is indexed yet (no {manager.prefix}-* alias); "
            "run `semgraph index PATH` first"
        )
    return targets


def _run_msearch(
    es: elasticsearch.Elasticsearch, targets: list[str], bodies: list[dict[str, Any]]
) -> list[dict[str, Any]] | None:
    """The responses, or None when an index vanished (flip + delete raced us)."""
    with search_errors("search"):
        resp = es.msearch(searches=msearch_searches(targets, bodies))
    responses: list[dict[str, Any]] = list(resp["responses"])
    for r in responses:
        error = r.get("error")
        if error is None:
            continue
        if error.get("type") == "index_not_found_exception":
            return None
        # the reason may quote the query: bounded, and the query never added
        reason = str(error.get("reason"))[:200]
        raise SearchRequestError(f"search: {error.get('type')}: {reason}")
    return responses


def _ranked(response: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(f"{h['_index']}/{h['_id']}", h) for h in response["hits"]["hits"]]


class SearchArgs(TypedDict, total=False):
    """The keyword arguments :func:`search` passes on to :func:`search_answer`."""

    repo: str | None
    lang: str | None
    path_prefix: str | None
    k: int
    mode: str
    role: str | None
    faults: Faults
    history_weight: float | None


def search(
    es: elasticsearch.Elasticsearch,
    settings: Settings,
    embedder: Embedder | None,
    query: str,
    **kwargs: Unpack[SearchArgs],
) -> list[SearchHit]:
    """The ``k`` best chunks for ``query``: :func:`search_answer`'s hits."""
    return search_answer(es, settings, embedder, query, **kwargs).hits


def search_answer(
    es: elasticsearch.Elasticsearch,
    settings: Settings,
    embedder: Embedder | None,
    query: str,
    *,
    repo: str | None = None,
    lang: str | None = None,
    path_prefix: str | None = None,
    k: int = 10,
    mode: str = "hybrid",
    role: str | None = None,
    faults: Faults = PROCESS,
    snippets: bool = True,
    history_weight: float | None = None,
    history_files: bool = False,
) -> SearchAnswer:
    """The ``k`` best chunks for ``query`` (``mode``: hybrid, bm25 or knn; ``role``: only
    files of that role), and whether the query was cut to the bound (``snippets=False``:
    hits without their snippet, which costs ~1 ms a hit; localisation ranks 200). A hybrid
    search lifts the chunks of files whose commit messages match by ``history_weight``
    (None: ``search_history_weight``; :mod:`semgraph.search.history_query`);
    ``history_files`` also returns those files (the localisation's ``history`` part). Fault
    point ``search.targets_resolved``, between resolving the alias and querying its
    indexes."""
    bounded = validate(query, k=k, mode=mode, settings=settings, role=role)
    text = bounded.text
    if mode != "bm25" and embedder is None:
        raise SearchQueryError(f"mode {mode} needs an embedder")
    manager = SearchIndex(es, settings)
    filters = search_filters(repo=repo, lang=lang, path_prefix=path_prefix, role=role)
    window = max(k, settings.search_rank_window)
    bodies: list[dict[str, Any]] = []
    if mode in ("hybrid", "bm25"):
        bodies.append(bm25_body(text, filters, window))
    if mode in ("hybrid", "knn"):
        assert embedder is not None
        vector = query_vector(embedder, text)
        bodies.append(knn_body(vector, filters, window, settings.search_knn_num_candidates))
    lift = settings.search_history_weight if history_weight is None else history_weight
    lift = lift if mode == "hybrid" else 0.0
    with_history = lift > 0 or history_files
    if with_history:
        where = history_filters(repo=repo, path_prefix=path_prefix)
        bodies.append(history_body(text, where, HISTORY_HITS))
    # last: each repository's chunks and pending vectors, from the same indexes
    bodies.append(semantic_counts_body([repo] if repo is not None else None))
    for _attempt in range(RESOLVE_ATTEMPTS):
        targets = resolve_targets(manager, repo)
        faults.point("search.targets_resolved", targets=targets)
        responses = _run_msearch(es, targets, bodies)
        runs = manager.run_ids(targets) if responses is not None else None
        if responses is not None and runs is not None:
            break
        event(log, logging.INFO, "search_retry_flipped", "an index vanished; resolving again")
    else:
        raise SearchRequestError("search: the indexes kept changing under the query; try again")
    assert responses is not None and runs is not None  # the loop breaks only then
    semantic = semantic_of(responses.pop())
    history = per_file(responses.pop()["hits"]["hits"]) if with_history else {}
    return SearchAnswer(
        hits=_fuse(responses, runs, mode, text, k, snippets, history, lift),
        query_chars=bounded.chars,
        searched_chars=len(text),
        truncated=bounded.truncated,
        notice=bounded.notice(settings.search_max_query_chars),
        history=sorted(history.values(), key=lambda f: (-f.score, f.index, f.path)),
        semantic=semantic,
    )


def _fuse(
    responses: list[dict[str, Any]],
    runs: dict[str, str],
    mode: str,
    query: str,
    k: int,
    snippets: bool = True,
    history: dict[tuple[str, str], FileHistory] | None = None,
    lift: float = 0.0,
) -> list[SearchHit]:
    """Fused hits, each lifted by ``lift`` times its file's history score; a hit's
    ``run_id`` is the run its index serves (from the index's ``_meta``): an incremental
    index keeps older runs' documents of unchanged files."""
    ranked = [_ranked(r) for r in responses]
    by_id = {doc_id: hit for ranking in ranked for doc_id, hit in ranking}
    ranks = [{doc_id: i for i, (doc_id, _) in enumerate(ranking, start=1)} for ranking in ranked]
    bm25_ranks = ranks[0] if mode in ("hybrid", "bm25") else {}
    knn_ranks = ranks[-1] if mode in ("hybrid", "knn") else {}
    fused = minmax_fusion(
        [[(doc_id, float(hit["_score"] or 0.0)) for doc_id, hit in ranking] for ranking in ranked],
        list(HYBRID_WEIGHTS) if mode == "hybrid" else [1.0],
    )
    history = history if lift > 0 and history else {}
    if history:
        fused = lifted(fused, {d: _file_of(h) for d, h in by_id.items()}, history, lift)
    hits: list[SearchHit] = []
    words = snippet_words(query)
    for doc_id, score in fused[:k]:
        hit = by_id[doc_id]
        src = hit["_source"]
        hits.append(
            SearchHit(
                repo=src["repo"],
                path=src["path"],
                start_line=int(src["start_line"]),
                end_line=int(src["end_line"]),
                symbol=src.get("symbol"),
                kind=src.get("kind"),
                language=src.get("language", ""),
                score=round(score, 6),
                snippet=snippet(src.get("code", ""), words) if snippets else "",
                run_id=runs.get(hit["_index"]) or src.get("run_id", ""),
                index=hit["_index"],
                bm25_rank=bm25_ranks.get(doc_id),
                knn_rank=knn_ranks.get(doc_id),
                role=src.get("role"),
                history=evidence_of(history, _file_of(hit)),
            )
        )
    return hits


def _file_of(hit: dict[str, Any]) -> tuple[str, str]:
    return (str(hit["_index"]), str(hit["_source"].get("path", "")))
