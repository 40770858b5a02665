"""The shared vector store: one Elasticsearch index, ``<search_index_prefix>_vectors``, of
vectors by vector key (sha256 of model id and embedded text), read by every repository's
runs. A fork, a vendored copy or a monorepo copy of code embedded before gets its vectors
from here instead of from the model.

Why Elasticsearch, not a file under the state directory: workers on several hosts index
into one Elasticsearch, so the store is shared by all of them with no new service; lookups
are realtime gets by ``_id`` (``mget``, one request per window, no refresh needed), writes
are idempotent ``_bulk`` index operations (the same key is the same vector); and the GC is
scrolled ids and bulk deletes. The vector is a ``binary`` field (float32), never kNN-indexed, so
the store costs no HNSW graph and about 2.2 KB per 384-float vector.

Only freshly embedded vectors are written: a vector copied from a repository's live index
was written when it was embedded (a store created later fills as repositories re-embed).

Recency without a write per hit: a hit rewrites ``last_used`` only when the stored value is
older than ``search_vector_store_touch_s`` (one day by default), in one ``_bulk`` per window.
The GC (:meth:`VectorStore.maybe_gc`, at the end of a run when the last one, kept in the
index's ``_meta``, is ``search_vector_store_gc_interval_s`` old) deletes vectors unused for
``search_vector_store_max_age_days``, then, above ``search_vector_store_max_vectors``, the
least recently used hours of vectors down to 90 % of the bound.

Nothing here fails a run: an Elasticsearch error is logged (``vector_store_failed``), counted
(``semgraph_vector_store_errors_total`` and the run's ``store_errors``) and the run embeds
instead; after :data:`MAX_ERRORS_PER_RUN` errors the store is off for the rest of the run.
A document that is not a valid vector of this model and size is ignored (``store_invalid``)
and overwritten by the freshly embedded vector. A store whose mapping is not ours is
deleted and created again by the GC. Removing a repository never touches the store.

The module is over 300 lines because the store's reads, writes and GC keep their error
handling (degrade, never fail the run) next to each request.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import elasticsearch
from prometheus_client import Counter

from semgraph.config import Settings
from semgraph.db import search_errors
from semgraph.errors import SearchError
from semgraph.logs import event
from semgraph.search import store_bodies as bodies

log = logging.getLogger(__name__)

MAX_ERRORS_PER_RUN = 3
MGET_KEYS = 1000  # keys per mget request
GC_PAGE = 1000  # hour buckets per composite page
SCROLL_KEEPALIVE = "2m"
LOW_WATERMARK = 0.9  # the bound's GC deletes down to this share of it

STORE_ERRORS = Counter(
    "semgraph_vector_store_errors_total",
    "Requests to the shared vector store that failed (the run embedded instead).",
    ["op"],
)
STORE_VECTORS = Counter(
    "semgraph_vector_store_vectors_total",
    "Vectors looked up in or written to the shared vector store, by outcome.",
    ["outcome"],  # hit, invalid, written
)


def store_name(prefix: str) -> str:
    """The store's index name (not matched by the repositories' ``<prefix>-*``)."""
    return f"{prefix}_vectors"


@dataclass
class StoreStats:
    hits: int = 0
    invalid: int = 0
    written: int = 0
    touched: int = 0
    errors: int = 0
    seconds: float = 0.0


@dataclass
class GcResult:
    before: int
    expired: int
    evicted: int
    seconds: float


class VectorStore:
    """The store as one run sees it (its error count switches it off for that run)."""

    def __init__(
        self,
        es: elasticsearch.Elasticsearch,
        settings: Settings,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.es = es
        self.settings = settings
        self.clock = clock
        self.name = store_name(settings.search_index_prefix)
        self.enabled = settings.search_vector_store
        self.stats = StoreStats()
        self._created = False

    def _failed(self, op: str, exc: Exception) -> None:
        self.stats.errors += 1
        STORE_ERRORS.labels(op=op).inc()
        event(log, logging.WARNING, "vector_store_failed", f"{exc}", op=op, index=self.name)
        if self.stats.errors >= MAX_ERRORS_PER_RUN and self.enabled:
            self.enabled = False
            event(
                log,
                logging.WARNING,
                "vector_store_off",
                "the shared vector store is off for the rest of this run",
                errors=self.stats.errors,
            )

    # -- lookups and writes (one request each per window) ---------------------------------

    def lookup(self, model_id: str, dims: int, keys: list[str]) -> dict[str, list[float]]:
        """The valid stored vectors of ``keys`` (absent, corrupt or foreign ones are left
        out); hits with a stale ``last_used`` are touched in one bulk request."""
        if not self.enabled or not keys:
            return {}
        started = time.perf_counter()
        found: dict[str, list[float]] = {}
        stale: list[str] = []
        invalid = 0
        touch_before = self.clock() - self.settings.search_vector_store_touch_s
        try:
            for start in range(0, len(keys), MGET_KEYS):
                with search_errors(f"look up vectors in {self.name}"):
                    resp = self.es.options(ignore_status=404).mget(
                        index=self.name,
                        ids=keys[start : start + MGET_KEYS],
                        source=bodies.MGET_SOURCE,
                    )
                for doc in resp.get("docs", []):
                    if not doc.get("found"):
                        continue
                    vector = bodies.decode_vector(doc.get("_source"), model_id, dims)
                    if vector is None:
                        invalid += 1
                        continue
                    found[str(doc["_id"])] = vector
                    used = doc["_source"].get("last_used")
                    if not isinstance(used, int) or used < touch_before:
                        stale.append(str(doc["_id"]))
        except SearchError as exc:
            self._failed("lookup", exc)
        self.stats.hits += len(found)
        self.stats.invalid += invalid
        STORE_VECTORS.labels(outcome="hit").inc(len(found))
        STORE_VECTORS.labels(outcome="invalid").inc(invalid)
        if stale:
            self._bulk("touch", bodies.touch_operations(self.name, stale, self.clock()), stale)
        self.stats.seconds += time.perf_counter() - started
        return found

    def put(self, model_id: str, items: list[tuple[str, list[float]]]) -> None:
        """Store freshly embedded vectors (bulk, idempotent)."""
        if not self.enabled or not items:
            return
        started = time.perf_counter()
        if self._ensure():
            now = self.clock()
            size = self.settings.search_bulk_batch_docs
            for start in range(0, len(items), size):
                batch = items[start : start + size]
                docs = [(k, bodies.store_document(model_id, v, now)) for k, v in batch]
                keys = [k for k, _ in batch]
                if not self._bulk("write", bodies.store_operations(self.name, docs), keys):
                    break
        self.stats.seconds += time.perf_counter() - started

    def _bulk(self, op: str, operations: list[dict[str, Any]], keys: list[str]) -> bool:
        try:
            with search_errors(f"{op} vectors in {self.name}"):
                resp = self.es.bulk(operations=operations, refresh=False)
        except SearchError as exc:
            self._failed(op, exc)
            return False
        items = resp.get("items", [])
        errors = [bodies.item_error(i) for i in items]
        ok = [i for i, e in zip(items, errors, strict=True) if not e]
        if op == "write":
            self.stats.written += len(ok)
            STORE_VECTORS.labels(outcome="written").inc(len(ok))
        else:
            self.stats.touched += len(ok)
        if len(ok) < len(keys) and op == "write":  # a vanished touched vector is no error
            first = next((e for e in errors if e), None)
            self._failed(op, SearchError(f"{len(keys) - len(ok)} of {len(keys)} failed: {first}"))
        return True

    def _ensure(self) -> bool:
        """Create the store when it does not exist (once per run)."""
        if self._created:
            return True
        body = bodies.create_store_body(
            replicas=self.settings.search_index_replicas, now=self.clock()
        )
        try:
            with search_errors(f"create {self.name}"):
                if not self.es.indices.exists(index=self.name):
                    self.es.options(ignore_status=400).indices.create(index=self.name, **body)
        except SearchError as exc:
            self._failed("create", exc)
            return False
        self._created = True
        return True

    # -- GC -----------------------------------------------------------------------------------

    def meta(self) -> dict[str, Any] | None:
        """The store's ``_meta`` ({} when it has none), or None when there is no store."""
        with search_errors(f"read the mapping of {self.name}"):
            resp = self.es.options(ignore_status=404).indices.get_mapping(index=self.name)
        if not resp or "error" in resp:
            return None
        body: Any = next(iter(dict(resp).values()), {})
        meta = body.get("mappings", {}).get("_meta", {}) if isinstance(body, dict) else {}
        return meta if isinstance(meta, dict) else {}

    def maybe_gc(self) -> GcResult | None:
        """Run the GC when the last one is ``search_vector_store_gc_interval_s`` old (never
        raises; a failure is logged and counted)."""
        if not self.enabled:
            return None
        now = self.clock()
        try:
            meta = self.meta()
            if meta is None:
                return None
            if meta.get(bodies.STORE_MARKER) != bodies.STORE_FORMAT:
                self._reset(meta)
                return None
            last = meta.get("last_gc")
            interval = self.settings.search_vector_store_gc_interval_s
            if isinstance(last, int | float) and now - last < interval:
                return None
            return self.gc(now)
        except SearchError as exc:
            self._failed("gc", exc)
            return None

    def _reset(self, meta: dict[str, Any]) -> None:
        event(
            log,
            logging.WARNING,
            "vector_store_reset",
            "the vector store's mapping is not ours: deleted and created again",
            index=self.name,
            meta=str(meta)[:200],
        )
        with search_errors(f"delete {self.name}"):
            self.es.options(ignore_status=404).indices.delete(index=self.name)
        self._created = False
        self._ensure()

    def gc(self, now: float) -> GcResult:
        """Delete expired vectors, then the least recently used beyond the bound."""
        started = time.perf_counter()
        es = self.es
        with search_errors(f"refresh {self.name}"):
            es.indices.refresh(index=self.name)
        with search_errors(f"count {self.name}"):
            before = int(es.count(index=self.name)["count"])
        expired = 0
        max_age_s = self.settings.search_vector_store_max_age_days * 86400
        if max_age_s > 0:
            expired = self._delete(bodies.expired_body(now - max_age_s))
        bound = self.settings.search_vector_store_max_vectors
        evicted = 0
        if before - expired > bound:
            evicted = self._evict(before - expired - int(bound * LOW_WATERMARK))
        meta = {bodies.STORE_MARKER: bodies.STORE_FORMAT, "last_gc": now}
        with search_errors(f"record the GC of {self.name}"):
            es.indices.put_mapping(index=self.name, meta=meta)
        result = GcResult(before, expired, evicted, round(time.perf_counter() - started, 3))
        event(
            log,
            logging.INFO,
            "vector_store_gc",
            index=self.name,
            vectors=before - expired - evicted,
            bound=bound,
            **{k: v for k, v in result.__dict__.items()},
        )
        return result

    def _evict(self, excess: int) -> int:
        """Delete ``excess`` vectors, oldest ``last_used`` hour first (within the last
        hour reached, any of its vectors)."""
        cutoff: int | None = None  # every hour before this goes
        partial: tuple[int, int] | None = None  # (hour, how many of it)
        remaining = excess
        after: dict[str, Any] | None = None
        while remaining > 0 and partial is None:
            with search_errors(f"count vectors per hour in {self.name}"):
                resp = self.es.search(index=self.name, **bodies.usage_hours_body(after, GC_PAGE))
            agg = resp["aggregations"]["hours"]
            for bucket in agg["buckets"]:
                hour, count = int(bucket["key"]["hour"]), int(bucket["doc_count"])
                if count <= remaining:
                    cutoff, remaining = hour + bodies.GC_HOUR_S, remaining - count
                else:
                    partial = (hour, remaining)
                    break
                if remaining == 0:
                    break
            after = agg.get("after_key")
            if not agg["buckets"] or after is None:
                break
        deleted = 0
        if cutoff is not None:
            deleted += self._delete(bodies.expired_body(cutoff))
        if partial is not None:
            deleted += self._delete(bodies.hour_body(partial[0]), max_docs=partial[1])
        return deleted

    def _delete(self, body: dict[str, Any], max_docs: int | None = None) -> int:
        """Delete the vectors ``body`` matches (at most ``max_docs``): their ids scrolled,
        then bulk deletes (the minimal Elasticsearch distribution has no delete-by-query)."""
        es = self.es
        batch: list[str] = []
        deleted = 0
        with search_errors(f"find vectors to delete in {self.name}"):
            resp = es.search(
                index=self.name,
                size=GC_PAGE,
                scroll=SCROLL_KEEPALIVE,
                source=False,
                sort=["_doc"],
                **body,
            )
        scroll_id = resp.get("_scroll_id")
        try:
            while True:
                hits = resp["hits"]["hits"]
                for hit in hits:
                    if max_docs is not None and deleted + len(batch) >= max_docs:
                        break
                    batch.append(str(hit["_id"]))
                    if len(batch) >= self.settings.search_bulk_batch_docs:
                        deleted += self._delete_ids(batch)
                        batch = []
                done = max_docs is not None and deleted + len(batch) >= max_docs
                if done or len(hits) < GC_PAGE or not scroll_id:
                    break
                with search_errors(f"find vectors to delete in {self.name}"):
                    resp = es.scroll(scroll_id=scroll_id, scroll=SCROLL_KEEPALIVE)
                scroll_id = resp.get("_scroll_id", scroll_id)
        finally:
            if scroll_id:
                with search_errors(f"clear scroll on {self.name}"):
                    es.options(ignore_status=404).clear_scroll(scroll_id=scroll_id)
        if batch:
            deleted += self._delete_ids(batch)
        with search_errors(f"refresh {self.name}"):
            es.indices.refresh(index=self.name)
        return deleted

    def _delete_ids(self, ids: list[str]) -> int:
        operations = [{"delete": {"_index": self.name, "_id": i}} for i in ids]
        with search_errors(f"delete vectors from {self.name}"):
            resp = self.es.bulk(operations=operations, refresh=False)
        return sum(1 for item in resp.get("items", []) if not bodies.item_error(item))
