"""Running a retrieval evaluation through the product: index a corpus the way a run does,
ask every query through :func:`semgraph.search.query.search` (the path ``GET /search``
takes), and score the rankings (recall@5, MRR@10, a paired bootstrap).

Vectors are cached across runs of the benchmark in ``$SEMGRAPH_STATE_DIR/bench-vectors.sqlite``
keyed by the product's own ``vector_key`` (model id + embedded text), so a rerun with the same
model and the same embedded text embeds nothing; a change to either embeds again.
"""

from __future__ import annotations

import random
import sqlite3
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from semgraph.search.embed import Embedder, vector_key

MODES = ("bm25", "knn", "hybrid")
RECALL_AT = 5
MRR_AT = 10
DEPTH = 10  # hits asked for per query


@dataclass(frozen=True)
class Query:
    id: str
    repo: str  # the corpus (index) it runs against
    text: str
    targets: tuple[tuple[str, int, int], ...]  # (path, first line, last line) of a symbol
    kind: str  # "docstring" or "question"
    half: str  # "tune" or "test"


class CachedEmbedder(Embedder):
    """The product's embedder with a vector cache on disk in front of it."""

    def __init__(self, settings: Any, cache: Path) -> None:
        super().__init__(settings)
        self.cache = sqlite3.connect(cache)
        self.cache.execute("CREATE TABLE IF NOT EXISTS v (k TEXT PRIMARY KEY, b BLOB)")
        self.hits = 0
        self.misses = 0

    def embed(
        self, texts: list[str], on_batch: Callable[[int], None] | None = None
    ) -> list[list[float]]:
        keys = [vector_key(self.model_id, t) for t in texts]
        found: dict[str, list[float]] = {}
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            marks = ",".join("?" * len(part))
            for key, blob in self.cache.execute(f"SELECT k, b FROM v WHERE k IN ({marks})", part):
                found[key] = list(struct.unpack(f"{len(blob) // 4}f", blob))
        missing = sorted({i for i, k in enumerate(keys) if k not in found})
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            fresh = super().embed([texts[i] for i in missing], on_batch)
            rows = [
                (keys[i], struct.pack(f"{len(v)}f", *v))
                for i, v in zip(missing, fresh, strict=True)
            ]
            self.cache.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)", rows)
            self.cache.commit()
            for (key, _), vector in zip(rows, fresh, strict=True):
                found[key] = vector
        return [found[k] for k in keys]


def build_index(es: Any, settings: Any, embedder: Embedder, repo_key: str, files: list[Any]) -> int:
    """A fresh live index of ``files`` for ``repo_key`` (the product's staging + flip);
    returns the number of chunks."""
    from semgraph.search.index import SearchIndex

    manager = SearchIndex(es, settings)
    drop_index(es, settings, repo_key)
    staging = manager.create_staging(repo_key, "eval", embedder.dims, model_id=embedder.model_id)
    manager.index_files(staging, repo_key, "eval", files, embedder)
    manager.refresh(staging)
    manager.flip_alias(repo_key, staging)
    return sum(len(f.chunks) for f in files)


def drop_index(es: Any, settings: Any, repo_key: str) -> None:
    from semgraph.search.index import SearchIndex

    manager = SearchIndex(es, settings)
    for name in manager.repository_indexes(repo_key):
        manager.delete_index(name)


def spans(files: Sequence[Any], targets: Sequence[tuple[str, str]]) -> tuple[Any, ...]:
    """The (path, first line, last line) of every symbol named by ``targets`` (path,
    qualified name) in ``files``."""
    wanted = set(targets)
    return tuple(
        sorted(
            (f.path, s.start_line, s.end_line)
            for f in files
            for s in f.symbols
            if (f.path, s.qualified_name) in wanted
        )
    )


def rank_of(hits: Sequence[Any], targets: Sequence[tuple[str, int, int]]) -> int | None:
    """1-based rank of the first hit on a target, or None. A hit is on a target when it is a
    chunk of the same file whose lines overlap the symbol's: the symbol's own chunk, one of
    its windows, or the chunk of a small class that holds the whole method."""
    for rank, hit in enumerate(hits, start=1):
        for path, first, last in targets:
            if hit.path == path and hit.start_line <= last and hit.end_line >= first:
                return rank
    return None


def run_queries(
    es: Any,
    settings: Any,
    embedder: Embedder,
    queries: Sequence[Query],
    index_of: Callable[[Query], str],
    modes: Sequence[str] = MODES,
) -> dict[str, list[int | None]]:
    """mode -> the target's rank for each query (None: not in the first ``DEPTH``)."""
    from semgraph.search.query import search

    out: dict[str, list[int | None]] = {}
    for mode in modes:
        out[mode] = [
            rank_of(
                search(es, settings, embedder, q.text, repo=index_of(q), k=DEPTH, mode=mode),
                q.targets,
            )
            for q in queries
        ]
    return out


def recall(ranks: Sequence[int | None], at: int = RECALL_AT) -> float:
    return sum(1 for r in ranks if r is not None and r <= at) / max(len(ranks), 1)


def mrr(ranks: Sequence[int | None], at: int = MRR_AT) -> float:
    return sum(1.0 / r for r in ranks if r is not None and r <= at) / max(len(ranks), 1)


def bootstrap_diff(
    a: Sequence[int | None], b: Sequence[int | None], *, rounds: int = 2000, seed: int = 20
) -> tuple[float, float, float]:
    """recall@5(a) - recall@5(b) over the same queries, and its paired bootstrap 95 %
    interval (queries resampled with replacement, the same draw for both)."""
    hit_a = [1 if r is not None and r <= RECALL_AT else 0 for r in a]
    hit_b = [1 if r is not None and r <= RECALL_AT else 0 for r in b]
    n = len(hit_a)
    if n == 0:
        return 0.0, 0.0, 0.0
    diffs = [x - y for x, y in zip(hit_a, hit_b, strict=True)]
    rng = random.Random(seed)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    return sum(diffs) / n, means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]
