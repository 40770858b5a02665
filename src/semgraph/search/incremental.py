"""Incremental staging: a reindex that changes few files starts its staging index as a clone
of the live one and rewrites only the documents of the files that changed.

The clone API hard-links the live index's segments into the new index (constant time,
whatever the repository size), so the cost of a small push is the changed files' documents,
not the repository's. The live index is never written: it gets a write block (required by
the clone API; it is read-only for us anyway) and keeps serving until the usual alias flip.
A search therefore still sees the whole old index or the whole new one.

When it applies (:func:`plan`): the live index exists, was built by this index format with
the same document fingerprint (parser, chunking, model, document options), and is the index
of the run the graph holds for the repository; the graph's ``File`` nodes (path + blob) then
describe exactly what the live index contains. Every other case, or a change touching more
than ``search_incremental_max_changed_ratio`` of the files, loads a fresh staging index.

Documents keep the ``run_id`` of the run that wrote them; which run an index serves is in
its ``_meta`` (search hits report that one).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from semgraph.db import search_errors
from semgraph.errors import SearchBulkError, SearchRequestError
from semgraph.logs import event
from semgraph.search.bodies import (
    EMBED_TEXT_FIELD,
    INDEX_FORMAT,
    META_MARKER,
    bulk_delete_operations,
    clone_settings,
    stale_docs_body,
)
from semgraph.search.index import SearchIndex

log = logging.getLogger(__name__)

PATHS_PER_QUERY = 1024  # a terms query far below the default 65,536 limit
SCROLL_PAGE = 1000
SCROLL_KEEPALIVE = "2m"
CLONE_TIMEOUT = "60s"


def docs_fingerprint(fingerprint: str, max_code_chars: int) -> str:
    """What a document depends on beyond its file: the job fingerprint, the index format
    and the document options."""
    material = json.dumps([fingerprint, INDEX_FORMAT, max_code_chars])
    return hashlib.sha256(material.encode()).hexdigest()[:16]


@dataclass
class Plan:
    """Which files of the live index must be rewritten."""

    live: str
    changed: set[str] = field(default_factory=set)  # new or different blob: reindexed
    removed: set[str] = field(default_factory=set)  # gone from the repository: deleted
    files: int = 0  # files of the new spill

    @property
    def stale(self) -> list[str]:
        """Paths whose old documents must go (changed files are rewritten from scratch)."""
        return sorted(self.changed | self.removed)

    @property
    def ratio(self) -> float:
        return len(self.changed | self.removed) / max(1, self.files + len(self.removed))


def plan(
    index: SearchIndex,
    repo_key: str,
    *,
    docs_fp: str,
    model_id: str,
    dims: int,
    graph_run_id: str | None,
    graph_files: Callable[[], dict[str, str]],
    files: Iterable[tuple[str, str]],
) -> Plan | None:
    """The incremental plan, or None when a fresh staging index is needed (reason logged).

    ``files`` are the run's parsed ``(path, blob sha)``; ``graph_files`` returns the graph's
    ``{path: blob sha}`` for the repository (names and keys only), called only when the
    live index belongs to the graph's run."""
    limit = index.settings.search_incremental_max_changed_ratio
    live = index.live_index(repo_key)

    def fresh(why: str) -> None:
        event(log, logging.INFO, "search_full_staging", f"fresh staging: {why}", repo=repo_key)

    if limit <= 0:
        fresh("incremental staging is off")
        return None
    if live is None:
        fresh("no live index")
        return None
    meta = index.index_meta(live) or {}
    expected = {
        META_MARKER: INDEX_FORMAT,
        "docs_fingerprint": docs_fp,
        "model_id": model_id,
        "dims": dims,
        "run_id": graph_run_id,
    }
    differs = sorted(k for k, v in expected.items() if meta.get(k) != v)
    if differs:
        fresh(f"the live index {live} differs in {', '.join(differs)}")
        return None
    old = graph_files()
    out = Plan(live=live)
    for path, blob_sha in files:
        out.files += 1
        if old.pop(path, None) != blob_sha:
            out.changed.add(path)
    out.removed = set(old)
    if out.ratio > limit:
        fresh(f"{out.ratio:.0%} of the files changed (limit {limit:.0%})")
        return None
    return out


def clone_live(
    index: SearchIndex, repo_key: str, run_id: str, live: str, meta: dict[str, Any]
) -> str:
    """Clone ``live`` into the run's staging index, writable, with the run's ``_meta``."""
    target = index.staging_name(repo_key, run_id)
    index._check_ours(live)
    index._check_ours(target)
    es = index.es
    with search_errors(f"block writes to {live}"):
        # the clone holds every update a vectors job made, refreshed or not (the block
        # flushes; tests/integration/test_progressive.py holds it to that)
        es.indices.add_block(index=live, block="write")
    with search_errors(f"clone {live} into {target}"):
        es.indices.clone(
            index=live,
            target=target,
            settings=clone_settings(index.settings.search_index_replicas),
            wait_for_active_shards="1",
            timeout=CLONE_TIMEOUT,
        )
        health = es.cluster.health(index=target, wait_for_status="yellow", timeout=CLONE_TIMEOUT)
    if health.get("timed_out"):
        raise SearchRequestError(f"clone {live} into {target}: not ready after {CLONE_TIMEOUT}")
    with search_errors(f"set the run of {target}"):
        # an index made before progressive publish gains the pending chunks' text field
        es.indices.put_mapping(index=target, meta=meta, properties={"embed_text": EMBED_TEXT_FIELD})
    event(log, logging.INFO, "search_staging_cloned", index=target, live=live, repo=repo_key)
    return target


def stale_ids(index: SearchIndex, target: str, paths: list[str]) -> Iterator[str]:
    """Ids of every document of ``paths`` in ``target`` (scrolled, in batches of paths)."""
    for start in range(0, len(paths), PATHS_PER_QUERY):
        body = stale_docs_body(paths[start : start + PATHS_PER_QUERY])
        for hit in scroll_hits(index, target, body, "find stale documents"):
            yield str(hit["_id"])


def scroll_hits(
    index: SearchIndex, target: str, body: dict[str, Any], what: str
) -> Iterator[dict[str, Any]]:
    """Every hit of ``body`` in ``target``, scrolled a page at a time."""
    es = index.es
    with search_errors(f"{what} in {target}"):
        resp = es.search(index=target, size=SCROLL_PAGE, scroll=SCROLL_KEEPALIVE, **body)
    scroll_id = resp.get("_scroll_id")
    try:
        while True:
            hits = resp["hits"]["hits"]
            yield from hits
            if len(hits) < SCROLL_PAGE or not scroll_id:
                break
            with search_errors(f"{what} in {target}"):
                resp = es.scroll(scroll_id=scroll_id, scroll=SCROLL_KEEPALIVE)
            scroll_id = resp.get("_scroll_id", scroll_id)
    finally:
        if scroll_id:
            with search_errors(f"clear scroll on {target}"):
                es.options(ignore_status=404).clear_scroll(scroll_id=scroll_id)


def delete_paths(index: SearchIndex, target: str, paths: list[str]) -> int:
    """Delete every document of ``paths`` from ``target``; returns how many were deleted."""
    batch: list[str] = []
    deleted = 0
    size = index.settings.search_bulk_batch_docs
    for doc_id in stale_ids(index, target, paths):
        batch.append(doc_id)
        if len(batch) >= size:
            deleted += delete_ids(index, target, batch)
            batch = []
    if batch:
        deleted += delete_ids(index, target, batch)
    return deleted


def delete_ids(index: SearchIndex, target: str, ids: list[str]) -> int:
    operations = bulk_delete_operations(target, ids)
    started = time.perf_counter()
    with search_errors(f"bulk delete from {target}"):
        resp = index.es.bulk(operations=operations, refresh=False)
    failed = [
        item["delete"]
        for item in resp.get("items", [])
        if item.get("delete", {}).get("error") or item.get("delete", {}).get("status") == 404
    ]
    if failed or len(resp.get("items", [])) != len(ids):
        shown = "; ".join(str(f.get("error") or f.get("result"))[:200] for f in failed[:3])
        raise SearchBulkError(
            f"bulk delete from {target}: {len(failed)} of {len(ids)} deletions failed: {shown}"
        )
    event(
        log,
        logging.DEBUG,
        "search_docs_deleted",
        index=target,
        docs=len(ids),
        seconds=round(time.perf_counter() - started, 3),
    )
    return len(ids)
