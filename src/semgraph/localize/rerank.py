"""The localisation's ``rerank`` part: the best files' code cut into windows of
:data:`RERANK_WINDOW_LINES` lines, embedded with the bi-encoder and compared with the
question (no cross-encoder ships in a package we can install)."""

from __future__ import annotations

import elasticsearch
import numpy as np

from semgraph.config import Settings
from semgraph.db import search_errors
from semgraph.errors import SearchNotIndexed
from semgraph.localize import queries as lq
from semgraph.localize.rank import Board
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex
from semgraph.search.longquery import embedding_windows

RERANK_WINDOW_LINES = 12
RERANK_MAX_CHUNKS = 400
RERANK_MAX_WINDOWS = 192


def rerank(
    es: elasticsearch.Elasticsearch,
    settings: Settings,
    embedder: Embedder,
    board: Board,
    repo: str,
    text: str,
) -> None:
    """The best files' code in windows of a few lines, compared with the question's first
    window by the bi-encoder; each file gets ``rerank`` times its best window's cosine."""
    ranked = board.ranked(board.options.rerank_files)
    paths = [f["path"] for f in ranked]
    if not paths:
        return
    index = SearchIndex(es, settings).live_index(repo)
    if index is None:
        raise SearchNotIndexed(f"repository {repo!r} is not indexed")
    with search_errors("localize rerank"):
        resp = es.search(index=index, body=lq.file_chunks_body(paths, RERANK_MAX_CHUNKS))
    windows: list[tuple[str, str, str]] = []  # path, lines, text
    for hit in resp["hits"]["hits"]:
        src = hit["_source"]
        lines = str(src.get("code", "")).splitlines()
        start = int(src["start_line"])
        for i in range(0, len(lines), RERANK_WINDOW_LINES):
            piece = "\n".join(lines[i : i + RERANK_WINDOW_LINES]).strip()
            if piece:
                where = f"{start + i}-{start + i + RERANK_WINDOW_LINES - 1}"
                windows.append((str(src["path"]), where, piece))
    windows = windows[:RERANK_MAX_WINDOWS]
    if not windows:
        return
    vectors = np.asarray(
        embedder.embed(embedding_windows(text)[:1] + [w[2] for w in windows]), dtype=np.float32
    )
    cosines = vectors[1:] @ vectors[0]
    best: dict[str, tuple[float, str]] = {}
    for (path, where, _), cos in zip(windows, cosines.tolist(), strict=True):
        if cos > best.get(path, (-2.0, ""))[0]:
            best[path] = (cos, where)
    for path, (cos, where) in best.items():
        detail = f"rerank {path}:{where} cosine {cos:.3f}"
        board.file_evidence(path, "rerank", detail, board.options.rerank * max(0.0, cos))
