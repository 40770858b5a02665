"""Repository records: what the queue knows of a repository from its first enqueue on.

A ``(:RepoRecord {key})`` node holds the repository's canonical source (clone URL or
``file://`` path), the host that announced it and its default branch. It is written by the
enqueue batch (:data:`semgraph.queue.queries.ENQUEUE_WRITE`) at the first enqueue that names
a source, whether or not the repository is ever published, so a job that crashed before its
first publish, a repair and ``semgraph enqueue KEY`` all know where to check it out from.
A later enqueue naming another source for the key is refused, never silently switched;
removing the repository deletes the record last.

The record is written only when it is new or a field changes (a webhook's new default
branch): pushes read it in their batch's transaction and leave it alone, so a busy
repository's pushes do not contend on it.

The repository lifecycle (:mod:`semgraph.repos`) reads the records whole, with the lanes'
figures (:func:`record_props`, :func:`list_records`); the rule lives here, in the queue,
because the enqueue batch applies it inside its own transaction.
"""

from __future__ import annotations

from typing import Any

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.queue import queries as qq
from semgraph.queue.lanes import ClaimScope
from semgraph.queue.models import EnqueueRequest, RepoRecord


def refusal(record: RepoRecord, source: str) -> str:
    return (
        f"repository {record.key} is recorded with source {str(record.source)[:300]!r}, "
        f"not {source[:300]!r}: remove it first (semgraph repos remove {record.key}) to index "
        "it from another source"
    )


def decide(
    record: RepoRecord | None, req: EnqueueRequest, now: float
) -> str | dict[str, Any] | None:
    """What ``req`` does to the repository's record: the refusal's text (another source),
    the record's new properties (to write), or ``None`` (nothing to write)."""
    if req.source is None:
        return None
    if record is not None and record.source is not None:
        if record.source != req.source:
            return refusal(record, req.source)
        if req.default_branch is None or req.default_branch == record.default_branch:
            return None
    props: dict[str, Any] = {
        "key": req.repo_key,
        "source": req.source,
        "host": req.host if record is None else (record.host or req.host),
        "default_branch": req.default_branch or (record.default_branch if record else None),
        "created_at": record.created_at if record is not None else now,
        "updated_at": now,
    }
    return {k: v for k, v in props.items() if v is not None}


def record_props(graph: Graph, repo_key: str) -> dict[str, Any] | None:
    """Every property of the repository's :RepoRecord, or None."""
    rows = graph.query("get repository record", qq.RECORD, key=repo_key)
    return dict(rows[0]["record"]) if rows else None


def size_class(graph: Graph, settings: Settings, repo_key: str) -> str:
    """``small`` or ``large``: the lane the repository's next job goes to, by the claim's own
    rule (:data:`semgraph.queue.queries.SIZE_CLASS`; no record is large)."""
    params = ClaimScope().params(settings)
    rows = graph.query(
        "repository size class",
        qq.RECORD_SIZE,
        key=repo_key,
        small_max_files=params["small_max_files"],
        small_max_job_s=params["small_max_job_s"],
    )
    return str(rows[0]["size_class"])


def list_records(graph: Graph) -> list[dict[str, Any]]:
    """Every :RepoRecord with all its properties, in key order."""
    rows = graph.query("list repository records", qq.RECORDS, after="", limit=1_000_000)
    return [dict(row["record"]) for row in rows]
