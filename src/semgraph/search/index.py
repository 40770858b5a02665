"""The search index manager: staging indexes, bounded bulk loads with vector reuse, the alias
flip, and garbage collection of orphaned staging indexes.

Names. A repository's alias is ``<prefix>-<repo>`` and each run loads a fresh staging index
``<prefix>-<repo>--<run>``. ``<repo>`` and ``<run>`` are lower-case slugs that never contain
``--`` (a key that had to be changed to become legal also gets a short hash of the original,
so two different keys never share a name), hence a staging name can never equal another
repository's alias name.

Every index we create carries ``_meta`` in its mapping: the marker ``semgraph_index``, the
repository key, the run id, the model id, the vector size, the creation time passed in
from Python, and the fingerprint of what the documents depend on (incremental staging
reuses an index only under the same one). The divergence check reads the run id from
there (:meth:`index_run_id`), and the orphan GC only ever touches indexes with the marker.

All mappings and request bodies are the named constants and ``*_body`` builders below;
every request goes through :func:`semgraph.db.search_errors`.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import re
import time
from collections.abc import Collection, Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import elasticsearch

from semgraph.config import Settings
from semgraph.db import search_errors
from semgraph.errors import SearchBulkError, SearchError, SearchRequestError
from semgraph.logs import event
from semgraph.memory import malloc_trim
from semgraph.model import FileFacts
from semgraph.search.documents import (
    PendingChunk,
    chunk_document,
    document_id,
    estimated_bytes,
    pending_bytes,
)
from semgraph.search.embed import Embedder

log = logging.getLogger(__name__)

INDEX_FORMAT = 1  # bump when the mapping changes incompatibly
META_MARKER = "semgraph_index"
REPO_SLUG_MAX = 150
RUN_SLUG_MAX = 64
BULK_ERRORS_SHOWN = 3

_KEYWORD = {"type": "keyword", "ignore_above": 8191}  # 8191 chars <= Lucene's 32766 bytes
_TEXT = {"type": "text", "analyzer": "standard"}

# -- mapping and request bodies -----------------------------------------------------------------

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
        "embedding": {"type": "dense_vector", "dims": 0, "index": True, "similarity": "cosine"},
    },
}

LOOKUP_VECTORS_SOURCE = ["vector_key", "embedding"]

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


def lookup_vectors_body(keys: list[str]) -> dict[str, Any]:
    """One hit per key (collapsed), with just the key and the vector."""
    return {
        "query": {"terms": {"vector_key": keys}},
        "collapse": {"field": "vector_key"},
        "size": len(keys),
        "_source": LOOKUP_VECTORS_SOURCE,
        "track_total_hits": False,
    }


def flip_alias_actions(alias: str, new_index: str, old: Iterable[str]) -> list[dict[str, Any]]:
    """Remove every old target and add the new one: applied atomically by ``_aliases``."""
    actions: list[dict[str, Any]] = [
        {"remove": {"index": name, "alias": alias}} for name in old if name != new_index
    ]
    actions.append({"add": {"index": new_index, "alias": alias}})
    return actions


# -- names ---------------------------------------------------------------------------------------

_ILLEGAL = re.compile(r"[^a-z0-9_.]+")
_DASHES = re.compile(r"-{2,}")


def slug(value: str, max_len: int) -> str:
    """A lower-case, index-name-legal slug of ``value`` that never contains ``--``."""
    text = _DASHES.sub("-", _ILLEGAL.sub("-", value.lower())).strip("-.")
    lossless = bool(text) and text == value and len(text) <= max_len
    if lossless:
        return text
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    text = text[: max_len - 9].rstrip("-.")
    return f"{text}-{digest}" if text else digest


@dataclass
class IndexStats:
    """What one :meth:`SearchIndex.index_files` call did (recorded on the run)."""

    files: int = 0
    chunks: int = 0
    embedded: int = 0  # texts given to the model
    reused: int = 0  # chunks whose vector came from the live index
    deduplicated: int = 0  # chunks sharing a vector with an earlier chunk of the same window
    docs: int = 0
    bulk_requests: int = 0
    embed_seconds: float = 0.0  # the embedding phase: keys, lookup of reusable vectors, model
    lookup_seconds: float = 0.0  # the reuse lookup part of embed_seconds
    bulk_seconds: float = 0.0

    @property
    def hit_rate(self) -> float:
        """Share of chunks whose vector was reused (1.0 when there was nothing to embed)."""
        return self.reused / self.chunks if self.chunks else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "hit_rate": round(self.hit_rate, 4)}


@dataclass(frozen=True)
class IndexInfo:
    name: str
    aliases: tuple[str, ...]
    meta: dict[str, Any]


class SearchIndex:
    """Staging indexes, bulk loading with vector reuse, alias flips and GC for one ES client."""

    def __init__(self, es: elasticsearch.Elasticsearch, settings: Settings) -> None:
        self.es = es
        self.settings = settings
        self.prefix = settings.search_index_prefix

    # -- names ---------------------------------------------------------------------------------

    def alias_name(self, repo_key: str) -> str:
        return f"{self.prefix}-{slug(repo_key, REPO_SLUG_MAX)}"

    def staging_name(self, repo_key: str, run_id: str) -> str:
        return f"{self.alias_name(repo_key)}--{slug(run_id, RUN_SLUG_MAX)}"

    def _check_ours(self, name: str) -> None:
        if not name.startswith(f"{self.prefix}-") or any(c in name for c in "*,?"):
            raise SearchRequestError(f"refusing to touch {name!r}: not a single semgraph index")

    # -- lifecycle -----------------------------------------------------------------------------

    def create_staging(
        self,
        repo_key: str,
        run_id: str,
        dims: int,
        *,
        model_id: str = "",
        now: float | None = None,
        docs_fingerprint: str = "",
    ) -> str:
        """Create the empty staging index for a run and return its name."""
        if not 1 <= dims <= 4096:
            raise SearchRequestError(f"vector size {dims} is outside 1..4096")
        name = self.staging_name(repo_key, run_id)
        meta = staging_meta(repo_key, run_id, dims, model_id, now, docs_fingerprint)
        body = create_staging_body(
            dims=dims,
            meta=meta,
            shards=self.settings.search_index_shards,
            replicas=self.settings.search_index_replicas,
        )
        with search_errors(f"create staging index {name}"):
            self.es.indices.create(index=name, settings=body["settings"], mappings=body["mappings"])
        event(log, logging.INFO, "search_staging_created", index=name, repo=repo_key, run_id=run_id)
        return name

    def refresh(self, index: str) -> None:
        with search_errors(f"refresh {index}"):
            self.es.indices.refresh(index=index)

    def count(self, index: str) -> int:
        with search_errors(f"count {index}"):
            return int(self.es.count(index=index)["count"])

    def delete_index(self, name: str) -> bool:
        """Delete one index; False when it did not exist."""
        self._check_ours(name)
        with search_errors(f"delete index {name}"):
            resp = self.es.options(ignore_status=404).indices.delete(index=name)
        existed = resp.meta.status != 404
        if existed:
            event(log, logging.INFO, "search_index_deleted", index=name)
        return existed

    # -- reading the live state ------------------------------------------------------------------

    def _alias_targets(self, alias: str) -> list[str]:
        with search_errors(f"read alias {alias}"):
            resp = self.es.options(ignore_status=404).indices.get_alias(
                name=alias, filter_path=LIVE_INDEX_FILTER
            )
        if resp.meta.status == 404:
            return []
        return sorted(name for name, body in resp.body.items() if alias in body.get("aliases", {}))

    def live_index(self, repo_key: str) -> str | None:
        """The index behind the repository's alias, or None when it has none."""
        alias = self.alias_name(repo_key)
        targets = self._alias_targets(alias)
        if len(targets) > 1:
            raise SearchError(f"alias {alias} points at {len(targets)} indexes: {targets}")
        return targets[0] if targets else None

    def live_indexes(self) -> dict[str, str]:
        """Every repository alias under our prefix -> the index behind it."""
        with search_errors("list aliases"):
            resp = self.es.options(ignore_status=404).indices.get_alias(
                name=f"{self.prefix}-*", filter_path=LIVE_INDEX_FILTER
            )
        if resp.meta.status == 404:
            return {}
        return {
            alias: index
            for index, body in sorted(resp.body.items())
            for alias in body.get("aliases", {})
        }

    def index_meta(self, index: str) -> dict[str, Any] | None:
        """The ``_meta`` of an index (or of the index behind an alias); None if missing."""
        with search_errors(f"read mapping of {index}"):
            resp = self.es.options(ignore_status=404).indices.get_mapping(
                index=index, filter_path=INDEX_META_FILTER
            )
        if resp.meta.status == 404:
            return None
        for body in resp.body.values():
            meta = body.get("mappings", {}).get("_meta")
            if isinstance(meta, dict):
                return meta
        return {}

    def run_ids(self, indexes: list[str]) -> dict[str, str] | None:
        """Index name -> the run id in its ``_meta``, in one request; None when one of the
        indexes vanished (an alias flip deleted it)."""
        if not indexes:
            return {}
        for name in indexes:
            self._check_ours(name)
        with search_errors("read the runs of the searched indexes"):
            resp = self.es.options(ignore_status=404).indices.get_mapping(
                index=",".join(indexes), filter_path=RUN_IDS_FILTER
            )
        if resp.meta.status == 404:
            return None
        return {
            name: str(body.get("mappings", {}).get("_meta", {}).get("run_id", ""))
            for name, body in resp.body.items()
        }

    def index_run_id(self, index: str) -> str | None:
        """The run id recorded in an index's ``_meta`` (None if missing or not ours)."""
        meta = self.index_meta(index)
        run_id = meta.get("run_id") if meta and META_MARKER in meta else None
        return str(run_id) if run_id is not None else None

    # -- publish ------------------------------------------------------------------------------

    def flip_alias(self, repo_key: str, new_index: str) -> str | None:
        """Point the repository's alias at ``new_index`` in ONE ``_aliases`` request (removing
        every old target in the same request), then delete the old index. Returns the old
        index name (None on the first publish). A failed delete is logged, not raised: the
        flip has happened, and the orphan GC removes the leftover."""
        alias = self.alias_name(repo_key)
        self._check_ours(new_index)
        meta = self.index_meta(new_index)
        if meta is None:
            raise SearchRequestError(f"flip {alias}: index {new_index} does not exist")
        if meta.get("repo") != repo_key:
            raise SearchRequestError(
                f"flip {alias}: index {new_index} belongs to {meta.get('repo')!r}, not {repo_key!r}"
            )
        old = [name for name in self._alias_targets(alias) if name != new_index]
        with search_errors(f"flip alias {alias} to {new_index}"):
            self.es.indices.update_aliases(actions=flip_alias_actions(alias, new_index, old))
        event(
            log,
            logging.INFO,
            "search_alias_flipped",
            repo=repo_key,
            alias=alias,
            index=new_index,
            old=",".join(old) or None,
        )
        for name in old:
            try:
                self.delete_index(name)
            except SearchError as exc:
                event(log, logging.WARNING, "search_old_index_delete_failed", str(exc), index=name)
        return old[0] if old else None

    # -- orphans --------------------------------------------------------------------------------

    def list_indexes(self) -> list[IndexInfo]:
        """Every index under our prefix with its aliases and ``_meta``."""
        with search_errors("list indexes"):
            resp = self.es.options(ignore_status=404).indices.get(
                index=f"{self.prefix}-*",
                expand_wildcards="open,closed",
                filter_path=LIST_INDEXES_FILTER,
            )
        if resp.meta.status == 404:
            return []
        return [
            IndexInfo(
                name=name,
                aliases=tuple(sorted(body.get("aliases", {}))),
                meta=dict(body.get("mappings", {}).get("_meta", {})),
            )
            for name, body in sorted(resp.body.items())
        ]

    def orphaned_staging(
        self,
        keep_runs: Collection[tuple[str, str]],
        *,
        now: float | None = None,
        min_age_s: float = 0.0,
    ) -> list[str]:
        """Our indexes that no alias points at and that belong to no run in ``keep_runs``.

        ``keep_runs`` holds (repo key, run id) pairs whose staging index must survive: runs
        in progress, and the run recorded on each ``:Repository`` (a diverged run's staging
        index is what repair flips to). With ``now``, indexes younger than ``min_age_s``
        (by the ``created_at`` we stored) are kept too.
        """
        keep = set(keep_runs)
        out: list[str] = []
        for info in self.list_indexes():
            meta = info.meta
            if META_MARKER not in meta or info.aliases:
                continue
            repo, run = str(meta.get("repo")), str(meta.get("run_id"))
            # a clone whose _meta was never set to its own run still names the live run
            if (repo, run) in keep and info.name == self.staging_name(repo, run):
                continue
            created = meta.get("created_at")
            if now is not None and isinstance(created, int | float) and now - created < min_age_s:
                continue
            out.append(info.name)
        return out

    def gc_orphans(
        self,
        keep_runs: Collection[tuple[str, str]],
        *,
        now: float | None = None,
        min_age_s: float = 0.0,
    ) -> list[str]:
        """Delete :meth:`orphaned_staging` indexes; returns the names deleted."""
        deleted: list[str] = []
        for name in self.orphaned_staging(keep_runs, now=now, min_age_s=min_age_s):
            if self.delete_index(name):
                deleted.append(name)
        if deleted:
            event(log, logging.INFO, "search_orphans_deleted", count=len(deleted))
        return deleted

    # -- loading ---------------------------------------------------------------------------------

    def index_files(
        self,
        staging: str,
        repo_key: str,
        run_id: str,
        files: Iterable[FileFacts],
        embedder: Embedder,
    ) -> IndexStats:
        """Embed (reusing vectors from the live index) and bulk-load every chunk of ``files``.

        Work is done in windows of ``search_embed_window_chunks`` chunks (fewer when they reach
        ``search_embed_window_bytes``, texts plus vectors): look the window's
        vector keys up in the live index, embed only the misses, then send bulk requests of
        at most ``search_bulk_batch_docs`` documents / ``search_bulk_max_bytes``. Any rejected
        document raises :class:`SearchBulkError`. Does not refresh.
        """
        self._check_ours(staging)
        loader = _Loader(self, staging, repo_key, run_id, embedder, self.live_index(repo_key))
        for facts in files:
            loader.add_file(facts)
        loader.flush()
        stats = loader.stats
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

    def lookup_vectors(self, index: str, keys: list[str]) -> dict[str, list[float]]:
        """Vectors stored under ``keys`` in ``index`` (missing keys are simply absent)."""
        if not keys:
            return {}
        with search_errors(f"look up vectors in {index}"):
            resp = self.es.search(index=index, **lookup_vectors_body(keys))
        found: dict[str, list[float]] = {}
        for hit in resp["hits"]["hits"]:
            src = hit.get("_source", {})
            vector = src.get("embedding")
            if isinstance(vector, list) and src.get("vector_key"):
                found[src["vector_key"]] = vector
        return found

    def bulk(self, staging: str, docs: list[tuple[str, dict[str, Any]]]) -> None:
        """One bulk request of ``(id, document)`` pairs; any rejected item raises."""
        operations: list[dict[str, Any]] = []
        for doc_id, doc in docs:
            operations.append({"index": {"_index": staging, "_id": doc_id}})
            operations.append(doc)
        with search_errors(f"bulk into {staging}"):
            resp = self.es.bulk(operations=operations, refresh=False)
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


class _Loader:
    """The windowed embed + bulk loop behind :meth:`SearchIndex.index_files`."""

    def __init__(
        self,
        index: SearchIndex,
        staging: str,
        repo_key: str,
        run_id: str,
        embedder: Embedder,
        live: str | None,
    ) -> None:
        self.index = index
        self.settings = index.settings
        self.staging = staging
        self.repo_key = repo_key
        self.run_id = run_id
        self.embedder = embedder
        self.live = live
        self.window: list[PendingChunk] = []
        self.window_bytes = 0
        self.stats = IndexStats()

    def add_file(self, facts: FileFacts) -> None:
        self.stats.files += 1
        started = time.perf_counter()
        for ordinal, chunk in enumerate(facts.chunks):
            text = self.embedder.text_for(facts.path, chunk)
            pending = PendingChunk(
                facts.path, facts.language, ordinal, chunk, text, self.embedder.key_for(text)
            )
            self.window.append(pending)
            self.window_bytes += pending_bytes(pending, self.embedder.dims)
            if (
                len(self.window) >= self.settings.search_embed_window_chunks
                or self.window_bytes >= self.settings.search_embed_window_bytes
            ):
                self.stats.embed_seconds += time.perf_counter() - started
                self.flush()
                started = time.perf_counter()
        self.stats.embed_seconds += time.perf_counter() - started

    def flush(self) -> None:
        if not self.window:
            return
        window, self.window, self.window_bytes = self.window, [], 0
        vectors = self._vectors(window)
        self._send(window, vectors)
        del window, vectors
        malloc_trim()  # hand the window's texts, vectors and bulk bodies back to the OS

    def _vectors(self, window: list[PendingChunk]) -> dict[str, list[float]]:
        started = time.perf_counter()
        keys = list(dict.fromkeys(p.key for p in window))
        vectors: dict[str, list[float]] = {}
        if self.live is not None:
            vectors = self.index.lookup_vectors(self.live, keys)
            self.stats.lookup_seconds += time.perf_counter() - started
        found = set(vectors)
        misses = [k for k in keys if k not in found]
        if misses:
            text_of = {p.key: p.text for p in window}
            fresh = self.embedder.embed([text_of[k] for k in misses])
            vectors.update(zip(misses, fresh, strict=True))
        self.stats.embed_seconds += time.perf_counter() - started
        self.stats.chunks += len(window)
        self.stats.embedded += len(misses)
        self.stats.reused += sum(1 for p in window if p.key in found)
        self.stats.deduplicated += len(window) - len(keys)
        return vectors

    def _send(self, window: list[PendingChunk], vectors: dict[str, list[float]]) -> None:
        for batch in self._batches(window, vectors):
            started = time.perf_counter()
            self.index.bulk(self.staging, batch)
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
                vector=vectors[p.key],
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
