"""Each file's commit messages as documents of the run's search index, so that a reader
sees the history of the run it searches: the old index's or the new one's, never a mix.

One document per (file, commit), keyed by both: the path, the sha, the commit time, the
subject (for evidence) and the message's words (BM25, split like the code's identifiers).
Its fields are its own (:data:`semgraph.search.bodies.CREATE_STAGING_MAPPING`): no chunk
query matches a history document, no history query a chunk.

How a run writes it (:func:`stage_history`, called by :func:`semgraph.search.staging.stage`
before the staging index's last refresh, so the alias flip serves it with the chunks):

- a fresh staging index: every file's newest commits up to the run's commit, walked once
  (:attr:`HistorySource.full`);
- a clone of the live index (a push): when the live index's history was built with the
  same settings up to a commit that is an ancestor of the new one, only ``old..new`` is
  read and appended; renamed files' documents move to the new name, removed files' are
  deleted, and each touched file is trimmed back to ``history_commits_per_file``
  (newest kept). Otherwise (a force-push, other settings, no history yet) the clone's
  history is deleted and written again as for a fresh index.

The index's ``_meta`` records ``history``: the commit and settings it was built with; an
index without it (history off, or its walk failed) gets its history rebuilt next time.
The module is over 300 lines because each write step (bulk, delete, trim, rename) keeps its
request and its bound beside it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from semgraph.config import Settings
from semgraph.db import search_errors
from semgraph.errors import CheckoutError, SearchBulkError, SearchError
from semgraph.logs import event
from semgraph.search import incremental
from semgraph.search.bodies import bulk_index_operations, history_docs_body
from semgraph.search.documents import clean_text
from semgraph.search.index import SearchIndex
from semgraph.search.split import split_text

log = logging.getLogger(__name__)

SUBJECT_CHARS = 200
HISTORY_FORMAT = 1  # bump when a history document changes
META_KEY = "history"


@dataclass(frozen=True, slots=True)
class Commit:
    """One commit as the history keeps it: ``paths`` named at the indexed commit."""

    sha: str
    time: int
    subject: str
    body: str
    paths: tuple[str, ...]


@dataclass
class Appended:
    """The commits of a push, and (once they are read) the renames they made."""

    commits: Iterator[Commit]
    renames: Callable[[], dict[str, str]]


@dataclass(frozen=True)
class HistorySource:
    """What the reindex hands over: the run's commit and two walks over the mirror."""

    commit: str
    fingerprint: str  # of the settings the documents depend on
    #: every wanted file's newest commits up to :attr:`commit`
    full: Callable[[set[str]], Iterator[Commit]]
    #: the commits in ``old..commit`` (None: ``old`` is not an ancestor)
    since: Callable[[str, set[str]], Appended | None]


@dataclass
class HistoryStats:
    mode: str = "off"  # off, full, append, failed
    commits: int = 0
    docs: int = 0
    deleted: int = 0
    renamed: int = 0
    error: str | None = None
    touched: set[str] = field(default_factory=set)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "mode": self.mode,
            "commits": self.commits,
            "docs": self.docs,
            "deleted": self.deleted,
        }
        if self.renamed:
            out["renamed"] = self.renamed
        if self.error:
            out["error"] = self.error
        return out


def history_fingerprint(settings: Settings) -> str:
    material = json.dumps(
        [
            HISTORY_FORMAT,
            settings.history_commits_per_file,
            settings.history_body_chars,
            settings.history_max_commits,
            settings.history_max_files_per_commit,
        ]
    )
    return hashlib.sha256(material.encode()).hexdigest()[:16]


def doc_id(path: str, sha: str) -> str:
    digest = hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:20]
    return f"h-{sha[:64]}-{digest}"


def document(repo: str, run_id: str, path: str, commit: Commit) -> dict[str, Any]:
    message = clean_text(f"{commit.subject}\n{commit.body}")
    return {
        "repo": repo,
        "run_id": run_id,
        "history_path": clean_text(path),
        "history_sha": commit.sha,
        "history_time": commit.time,
        "history_subject": clean_text(commit.subject),
        "history_text": split_text(message),
    }


def stage_history(
    index: SearchIndex,
    target: str,
    repo: str,
    run_id: str,
    source: HistorySource | None,
    paths: set[str],
    *,
    live_meta: dict[str, Any] | None,
    removed: Collection[str] = (),
) -> HistoryStats:
    """Write the run's history into ``target`` (the module docstring); ``live_meta`` is the
    ``_meta`` of the live index ``target`` was cloned from (None: a fresh index). A failed
    walk is logged and recorded: the documents written are true, the index's ``_meta``
    says its history is to be rebuilt."""
    stats = HistoryStats()
    if source is None or index.settings.history_commits_per_file <= 0:
        if live_meta is not None:
            stats.deleted = _delete(index, target, None)
        _set_meta(index, target, None)
        return stats
    built = (live_meta or {}).get(META_KEY) or {}
    appended = None
    if live_meta is not None and built.get("fingerprint") == source.fingerprint:
        old = built.get("commit")
        appended = source.since(str(old), paths) if isinstance(old, str) and old else None
    try:
        if appended is None:
            stats.mode = "full"
            if live_meta is not None:
                stats.deleted = _delete(index, target, None)
            _write(index, target, repo, run_id, source.full(paths), stats)
        else:
            stats.mode = "append"
            _write(index, target, repo, run_id, appended.commits, stats)
            renames = {o: n for o, n in appended.renames().items() if n in paths}
            index.refresh(target)
            stats.renamed = _rename(index, target, repo, run_id, renames, stats)
            stats.deleted = _delete(index, target, sorted(removed)) if removed else 0
            stats.deleted += trim(index, target, sorted(stats.touched))
    except CheckoutError as exc:  # git failed: keep what was written, rebuild next time
        stats.mode, stats.error = "failed", str(exc)[:500]
        event(log, logging.WARNING, "history_failed", stats.error, repo=repo, run_id=run_id)
        _set_meta(index, target, None)
        return stats
    _set_meta(index, target, {"commit": source.commit, "fingerprint": source.fingerprint})
    event(log, logging.INFO, "history_staged", index=target, repo=repo, **stats.to_dict())
    return stats


def _write(
    index: SearchIndex,
    target: str,
    repo: str,
    run_id: str,
    commits: Iterable[Commit],
    stats: HistoryStats,
) -> None:
    """Bulk the commits' documents, in batches; the paths they touched go to ``stats``."""
    batch: list[tuple[str, dict[str, Any]]] = []
    size = index.settings.search_bulk_batch_docs
    try:
        for commit in commits:
            stats.commits += 1
            for path in commit.paths:
                batch.append((doc_id(path, commit.sha), document(repo, run_id, path, commit)))
                if stats.mode == "append":
                    stats.touched.add(path)
            if len(batch) >= size:
                stats.docs += _bulk(index, target, batch)
                batch = []
    finally:  # a walk that fails half-way keeps what it read: each document is true
        if batch:
            stats.docs += _bulk(index, target, batch)


def _bulk(index: SearchIndex, target: str, docs: list[tuple[str, dict[str, Any]]]) -> int:
    with search_errors(f"bulk history into {target}"):
        resp = index.es.bulk(operations=bulk_index_operations(target, docs), refresh=False)
    items = resp.get("items", [])
    failed = [i.get("index", {}) for i in items if i.get("index", {}).get("error")]
    if failed or len(items) != len(docs):
        shown = "; ".join(str(f.get("error"))[:200] for f in failed[:3])
        raise SearchBulkError(
            f"bulk history into {target}: {len(failed)} of {len(docs)} rejected: {shown}"
        )
    return len(docs)


def _delete_each(index: SearchIndex, target: str, ids: Iterable[str]) -> int:
    """Delete ``ids`` (read lazily, so a scroll that yields them goes on between batches) in
    bulk batches; returns how many went."""
    batch: list[str] = []
    deleted = 0
    for doc_id in ids:
        batch.append(doc_id)
        if len(batch) >= index.settings.search_bulk_batch_docs:
            deleted += incremental.delete_ids(index, target, batch)
            batch = []
    if batch:
        deleted += incremental.delete_ids(index, target, batch)
    return deleted


def _delete(index: SearchIndex, target: str, paths: list[str] | None) -> int:
    """Delete the history documents of ``paths`` (every one when None)."""
    batches = [None] if paths is None else _batches(paths)
    return _delete_each(
        index,
        target,
        (
            str(hit["_id"])
            for batch in batches
            for hit in incremental.scroll_hits(
                index, target, history_docs_body(batch), "find history documents"
            )
        ),
    )


def trim(index: SearchIndex, target: str, paths: list[str]) -> int:
    """Delete all but the newest ``history_commits_per_file`` documents of each of
    ``paths`` (``target`` refreshed since they were written); returns how many went."""
    keep = index.settings.history_commits_per_file

    def extra() -> Iterator[str]:
        for batch in _batches(paths):
            seen: dict[str, int] = {}
            for hit in incremental.scroll_hits(
                index, target, history_docs_body(batch), "find history to trim"
            ):
                path = str(hit["_source"].get("history_path"))
                seen[path] = seen.get(path, 0) + 1
                if seen[path] > keep:
                    yield str(hit["_id"])

    return _delete_each(index, target, extra())


def _rename(
    index: SearchIndex,
    target: str,
    repo: str,
    run_id: str,
    renames: dict[str, str],
    stats: HistoryStats,
) -> int:
    """Move the documents of renamed files to their new names (a push that renames a file
    keeps its history); ``target`` refreshed since they were written."""
    moved = 0
    size = index.settings.search_bulk_batch_docs
    for batch in _batches(sorted(renames)):
        body = {**history_docs_body(batch), "_source": True}
        docs: list[tuple[str, dict[str, Any]]] = []
        old: list[str] = []
        for hit in incremental.scroll_hits(index, target, body, "find renamed history"):
            src = dict(hit["_source"])
            new = renames.get(str(src.get("history_path")))
            if new is None:
                continue
            src.update(history_path=clean_text(new), run_id=run_id, repo=repo)
            docs.append((doc_id(new, str(src.get("history_sha"))), src))
            old.append(str(hit["_id"]))
            stats.touched.add(new)
        for start in range(0, len(docs), size):
            _bulk(index, target, docs[start : start + size])
        for start in range(0, len(old), size):
            incremental.delete_ids(index, target, old[start : start + size])
        moved += len(docs)
    if moved:
        index.refresh(target)
    return moved


def _batches(paths: list[str]) -> list[list[str] | None]:
    step = incremental.PATHS_PER_QUERY
    return [paths[i : i + step] for i in range(0, len(paths), step)]


def _set_meta(index: SearchIndex, target: str, built: dict[str, Any] | None) -> None:
    meta = index.index_meta(target)
    if meta is None:
        raise SearchError(f"history: index {target} vanished")
    if built is None:
        meta.pop(META_KEY, None)
    else:
        meta[META_KEY] = built
    with search_errors(f"record the history of {target}"):
        index.es.indices.put_mapping(index=target, meta=meta)
