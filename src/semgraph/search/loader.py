"""Bulk loading of a staging index: chunks embedded in bounded windows (vectors reused by
key), then sent in bounded ``_bulk`` requests.

Work is done in windows of ``search_embed_window_chunks`` chunks (fewer when they reach
``search_embed_window_bytes``, texts plus vectors). For each window's distinct vector keys,
the vector comes from the first place that has it: this run's staging index (a key an
earlier window of the run already loaded: realtime ``mget`` of that document, so identical
texts are embedded once per run, ``deduplicated``), the repository's live index (``reused``),
the shared vector store (:mod:`semgraph.search.vectorstore`, ``store_reused``), or the model
(``embedded``; then written to the store). Bulk requests hold at most
``search_bulk_batch_docs`` documents / ``search_bulk_max_bytes``. Any rejected document
raises :class:`SearchBulkError`. Nothing here refreshes. The request bodies are in
:mod:`semgraph.search.bodies`; every request goes through :func:`semgraph.db.search_errors`.
The module is over 300 lines because the window loop keeps its four vector sources, in
order, in one place.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import elasticsearch

from semgraph.config import Settings
from semgraph.db import search_errors
from semgraph.errors import SearchBulkError
from semgraph.faults import PROCESS, Faults
from semgraph.logs import event
from semgraph.memory import malloc_trim
from semgraph.model import FileFacts
from semgraph.search.bodies import (
    LOOKUP_VECTORS_SOURCE,
    bulk_index_operations,
    lookup_vectors_body,
)
from semgraph.search.context import chunk_contexts, context_words, parse_parts
from semgraph.search.documents import (
    PendingChunk,
    chunk_document,
    document_id,
    estimated_bytes,
    pending_bytes,
)
from semgraph.search.embed import Embedder
from semgraph.search.progress import EmbedMeter, EmbedProgress
from semgraph.search.vectorstore import VectorStore

log = logging.getLogger(__name__)


BULK_ERRORS_SHOWN = 3
# keys remembered per run for in-run deduplication (about 170 bytes each); past it, a
# duplicate in a later window comes from the store or the model
RUN_KEYS_MAX = 1_000_000


@dataclass
class IndexStats:
    """What one :func:`load_files` call did (recorded on the run)."""

    files: int = 0
    chunks: int = 0
    embedded: int = 0  # texts given to the model
    reused: int = 0  # chunks whose vector came from the live index
    deduplicated: int = 0  # chunks sharing a vector with an earlier chunk of the same run
    store_reused: int = 0  # chunks whose vector came from the shared vector store
    store_written: int = 0  # vectors written to the store
    store_invalid: int = 0  # store documents ignored (corrupt, other model or size)
    store_errors: int = 0  # store requests that failed (the run embedded instead)
    deferred: int = 0  # chunks indexed without a vector: left to a vectors job
    docs: int = 0
    bulk_requests: int = 0
    embed_seconds: float = 0.0  # the embedding phase: keys, lookup of reusable vectors, model
    lookup_seconds: float = 0.0  # the reuse lookup part of embed_seconds (live index)
    store_seconds: float = 0.0  # the vector store part of embed_seconds (lookup + write)
    bulk_seconds: float = 0.0

    @property
    def hit_rate(self) -> float:
        """Share of chunks not given to the model (1.0 when there was nothing to embed).
        Each chunk is counted once: embedded + reused + store_reused + deduplicated."""
        return 1 - self.embedded / self.chunks if self.chunks else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "hit_rate": round(self.hit_rate, 4)}


def lookup_vectors(
    es: elasticsearch.Elasticsearch, index: str, keys: list[str]
) -> dict[str, list[float]]:
    """Vectors stored under ``keys`` in ``index`` (missing keys are simply absent)."""
    if not keys:
        return {}
    with search_errors(f"look up vectors in {index}"):
        resp = es.search(index=index, **lookup_vectors_body(keys))
    found: dict[str, list[float]] = {}
    for hit in resp["hits"]["hits"]:
        src = hit.get("_source", {})
        vector = src.get("embedding")
        if isinstance(vector, list) and src.get("vector_key"):
            found[src["vector_key"]] = vector
    return found


def _digest(key: str) -> bytes:
    """16 bytes standing for a vector key in the run's memory."""
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def staged_vectors(
    es: elasticsearch.Elasticsearch, staging: str, ids: dict[str, str]
) -> dict[str, list[float]]:
    """Vectors of documents this run already sent to ``staging``, ``{vector key: document
    id}`` (a realtime ``mget``: no refresh needed); a document whose key differs is skipped."""
    if not ids:
        return {}
    keys = list(ids)
    with search_errors(f"look up this run's vectors in {staging}"):
        resp = es.mget(index=staging, ids=[ids[k] for k in keys], source=LOOKUP_VECTORS_SOURCE)
    found: dict[str, list[float]] = {}
    for key, doc in zip(keys, resp.get("docs", []), strict=False):
        src = doc.get("_source") or {}
        vector = src.get("embedding")
        if doc.get("found") and src.get("vector_key") == key and isinstance(vector, list):
            found[key] = vector
    return found


def bulk(
    es: elasticsearch.Elasticsearch, staging: str, docs: list[tuple[str, dict[str, Any]]]
) -> None:
    """One bulk request of ``(id, document)`` pairs; any rejected item raises."""
    operations = bulk_index_operations(staging, docs)
    with search_errors(f"bulk into {staging}"):
        resp = es.bulk(operations=operations, refresh=False)
    items = resp.get("items", [])
    if not resp.get("errors") and len(items) == len(docs):
        return
    failed = [
        (docs[i][1], item.get("index", {}))
        for i, item in enumerate(items)
        if item.get("index", {}).get("error")
    ]
    shown = "; ".join(
        f"{doc['path']}:{doc['start_line']}-{doc['end_line']}: "
        f"{res['error'].get('type')}: {str(res['error'].get('reason'))[:300]}"
        for doc, res in failed[:BULK_ERRORS_SHOWN]
    )
    raise SearchBulkError(
        f"bulk into {staging}: {len(failed)} of {len(docs)} documents rejected"
        f" ({len(items)} answered): {shown}"
    )


def load_files(
    es: elasticsearch.Elasticsearch,
    settings: Settings,
    staging: str,
    repo_key: str,
    run_id: str,
    files: Iterable[FileFacts],
    embedder: Embedder,
    live: str | None,
    faults: Faults = PROCESS,
    total_files: int | None = None,
    progress: Callable[[EmbedProgress], None] | None = None,
    inline_max: int | None = None,
) -> IndexStats:
    """Embed (reusing vectors from ``live``, the live index) and bulk-load every chunk of
    ``files`` into ``staging`` (see the module docstring). Fault point ``search.bulk``
    before each bulk request. With ``inline_max``, at most that many texts go to the model;
    the chunks past it are indexed without a vector (``deferred``, progressive publish)."""
    store = VectorStore(es, settings)
    loader = Loader(es, settings, staging, repo_key, run_id, embedder, live, faults, store=store)
    loader.inline_left = inline_max
    loader.meter.total_files = total_files
    loader.meter.sink = progress
    for facts in files:
        loader.add_file(facts)
    loader.flush()
    store.maybe_gc()
    stats = loader.stats
    stats.store_errors = store.stats.errors
    event(
        log,
        logging.INFO,
        "search_indexed",
        repo=repo_key,
        run_id=run_id,
        index=staging,
        **stats.to_dict(),
    )
    return stats


class Loader:
    """The windowed embed + bulk loop behind :func:`load_files`."""

    def __init__(
        self,
        es: elasticsearch.Elasticsearch,
        settings: Settings,
        staging: str,
        repo_key: str,
        run_id: str,
        embedder: Embedder,
        live: str | None,
        faults: Faults = PROCESS,
        clock: Callable[[], float] = time.monotonic,
        store: VectorStore | None = None,
    ) -> None:
        self.es = es
        self.faults = faults
        self.settings = settings
        self.staging = staging
        self.repo_key = repo_key
        self.run_id = run_id
        self.embedder = embedder
        self.live = live
        self.window: list[PendingChunk] = []
        self.window_bytes = 0
        self.stats = IndexStats()
        self.meter = EmbedMeter(repo_key, run_id, clock)
        self.store = store
        # vector key digest -> the id of a document this run sent with that vector
        self.seen: dict[bytes, str] = {}
        self.context_parts = parse_parts(settings.search_chunk_context)
        # texts the model may still embed in this run (None: all of them); the rest wait
        self.inline_left: int | None = None

    def add_file(self, facts: FileFacts) -> None:
        self.stats.files += 1
        started = time.perf_counter()
        parts = self.context_parts
        contexts = chunk_contexts(facts) if parts else [None] * len(facts.chunks)
        for ordinal, (chunk, context) in enumerate(zip(facts.chunks, contexts, strict=True)):
            text = self.embedder.text_for(facts.path, chunk, context)
            pending = PendingChunk(
                facts.path, facts.language, ordinal, chunk, text, self.embedder.key_for(text)
            )
            if context is not None:
                pending.context = context_words(context, parts)
            self.window.append(pending)
            self.meter.queued += 1
            self.window_bytes += pending_bytes(pending, self.embedder.dims)
            if (
                len(self.window) >= self.settings.search_embed_window_chunks
                or self.window_bytes >= self.settings.search_embed_window_bytes
            ):
                self.stats.embed_seconds += time.perf_counter() - started
                self.flush()
                started = time.perf_counter()
        self.stats.embed_seconds += time.perf_counter() - started
        self.meter.show(self.stats.files, self.stats.chunks)

    def flush(self) -> None:
        if not self.window:
            return
        window, self.window, self.window_bytes = self.window, [], 0
        vectors = self._vectors(window)
        self._send(window, vectors)
        del window, vectors
        malloc_trim()  # hand the window's texts, vectors and bulk bodies back to the OS
        self.report()
        self.meter.show(self.stats.files, self.stats.chunks)

    def report(self) -> None:
        """A progress log line when the last one is :data:`PROGRESS_EVERY_S` old."""
        self.meter.report(self.stats.files, self.stats.chunks)

    def _vectors(self, window: list[PendingChunk]) -> dict[str, list[float]]:
        started = time.perf_counter()
        first: dict[str, PendingChunk] = {}
        for p in window:
            first.setdefault(p.key, p)
        keys = list(first)
        earlier = {k: self.seen[d] for k in keys if (d := _digest(k)) in self.seen}
        vectors = staged_vectors(self.es, self.staging, earlier)
        in_run = len(vectors)
        misses = [k for k in keys if k not in vectors]
        reused = 0
        if self.live is not None and misses:
            lookup_started = time.perf_counter()
            live = lookup_vectors(self.es, self.live, misses)
            self.stats.lookup_seconds += time.perf_counter() - lookup_started
            vectors.update(live)
            reused = sum(1 for k in misses if k in live)
            misses = [k for k in misses if k not in live]
        from_store: dict[str, list[float]] = {}
        if self.store is not None and misses:
            invalid = self.store.stats.invalid
            from_store = self.store.lookup(self.embedder.model_id, self.embedder.dims, misses)
            self.stats.store_invalid += self.store.stats.invalid - invalid
            vectors.update(from_store)
            misses = [k for k in misses if k not in from_store]
        deferred = 0
        if self.inline_left is not None and len(misses) > self.inline_left:
            deferred = len(misses) - self.inline_left
            misses = misses[: self.inline_left]  # the rest are indexed without a vector
        if self.inline_left is not None:
            self.inline_left -= len(misses)
        if misses:
            done = self.stats.chunks  # the window's reused and duplicate chunks are done
            self.meter.show(self.stats.files, done, batch=len(window) - len(misses))
            fresh = self.embedder.embed(
                [first[k].text for k in misses],
                on_batch=lambda n: self.meter.show(self.stats.files, done, batch=n),
            )
            vectors.update(zip(misses, fresh, strict=True))
            if self.store is not None:
                written = self.store.stats.written
                self.store.put(self.embedder.model_id, list(zip(misses, fresh, strict=True)))
                self.stats.store_written += self.store.stats.written - written
        if self.store is not None:
            self.stats.store_seconds = self.store.stats.seconds
        for key, p in first.items():
            if len(self.seen) < RUN_KEYS_MAX:
                self.seen.setdefault(_digest(key), document_id(p.path, p.ordinal))
        self.stats.embed_seconds += time.perf_counter() - started
        self.meter.in_flight = 0
        self.stats.chunks += len(window)
        self.stats.embedded += len(misses)
        self.stats.deferred += deferred
        self.stats.reused += reused
        self.stats.store_reused += len(from_store)
        # every chunk after the first of its key in the run (this window or an earlier one)
        self.stats.deduplicated += len(window) - len(keys) + in_run
        return vectors

    def _send(self, window: list[PendingChunk], vectors: dict[str, list[float]]) -> None:
        for batch in self._batches(window, vectors):
            started = time.perf_counter()
            self.faults.point("search.bulk", index=self.staging, docs=len(batch))
            bulk(self.es, self.staging, batch)
            self.stats.bulk_seconds += time.perf_counter() - started
            self.stats.bulk_requests += 1
            self.stats.docs += len(batch)

    def _batches(
        self, window: list[PendingChunk], vectors: dict[str, list[float]]
    ) -> Iterator[list[tuple[str, dict[str, Any]]]]:
        batch: list[tuple[str, dict[str, Any]]] = []
        size = 0
        for p in window:
            doc = chunk_document(
                p,
                repo=self.repo_key,
                run_id=self.run_id,
                vector=vectors.get(p.key),
                max_code_chars=self.settings.search_max_code_chars,
            )
            doc_bytes = estimated_bytes(doc)
            if batch and (
                len(batch) >= self.settings.search_bulk_batch_docs
                or size + doc_bytes > self.settings.search_bulk_max_bytes
            ):
                yield batch
                batch, size = [], 0
            batch.append((document_id(p.path, p.ordinal), doc))
            size += doc_bytes
        if batch:
            yield batch
