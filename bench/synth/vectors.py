"""A search index of synthetic files with stand-in document vectors, for latency benchmarks.

Embedding 20,000 files with the real model on a CPU runs at about 11 chunks/s, so a benchmark
that needs the search index of a large synthetic graph loads it through the product's own path
(:meth:`SearchIndex.create_staging`, :meth:`SearchIndex.index_files`, ``refresh``,
:meth:`SearchIndex.flip_alias`, fed with the parsed :class:`FileFacts` of the spill) but with
:class:`HashVectors` in place of the model: every document vector is a normalised random
vector of the model's size seeded by the hash of the embedded text. The documents, their
keys, texts, mappings and vector size are the real ones; only the document vectors' values
are synthetic, so what such an index measures is latency, not retrieval quality. A query
still goes through the real :class:`Embedder` (the MCP tool embeds its text with the model).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from semgraph.search.embed import Embedder

DOC_VECTORS = "synthetic"  # what the records say about the document vectors


class HashVectors(Embedder):
    """The real Embedder's model id, size, texts and keys (read from the model's files, no
    model load); vectors from a hash of each text instead of the model."""

    def embed(
        self, texts: list[str], on_batch: Callable[[int], None] | None = None
    ) -> list[list[float]]:
        dims = self.dims
        out = np.empty((len(texts), dims), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(dims)
            out[i] = v / np.linalg.norm(v)
        if on_batch is not None and texts:
            on_batch(len(texts))
        result: list[list[float]] = out.tolist()
        return result


def index_spill(
    settings: Any, es: Any, key: str, run_id: str, spill: Path, embedder: HashVectors
) -> dict[str, Any]:
    """Publish the search index of one parsed repository (the spill of its parse) under its
    alias, as the run ``run_id`` (the graph's run, so searches see no divergence); any index
    a previous run left for ``key`` is deleted first. Returns the loader's stats and time."""
    from semgraph.indexer.staging import spill_facts
    from semgraph.search import incremental
    from semgraph.search.index import SearchIndex

    index = SearchIndex(es, settings)
    index.remove_alias(key)
    for name in index.repository_indexes(key):
        index.delete_index(name)
    t0 = time.monotonic()
    name = index.create_staging(
        key,
        run_id,
        embedder.dims,
        model_id=embedder.model_id,
        now=time.time(),
        docs_fingerprint=incremental.docs_fingerprint("bench", settings.search_max_code_chars),
    )
    stats = index.index_files(name, key, run_id, spill_facts(spill), embedder)
    index.refresh(name)
    index.flip_alias(key, name)
    return {**stats.to_dict(), "seconds": round(time.monotonic() - t0, 1)}


def delete_indexes(settings: Any, es: Any, key: str) -> None:
    from semgraph.search.index import SearchIndex

    index = SearchIndex(es, settings)
    index.remove_alias(key)
    for name in index.repository_indexes(key):
        index.delete_index(name)
