"""``semgraph enqueue``: queue a reindex of a known repository (by its key) or of a path or
clone URL. A job always carries a source it can run from: an unknown key is refused."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from semgraph.commands.console import emit_json, out
from semgraph.errors import CheckoutError, QueueInputError

if TYPE_CHECKING:
    from semgraph.db import Graph
    from semgraph.queue.models import EnqueueResult
    from semgraph.queue.store import JobStore


def _known_source(graph: Graph, store: JobStore, key: str) -> str | None:
    """The source a known repository is recorded with (at its first enqueue), else the one
    it was published or last queued from (repositories indexed before records existed)."""
    from semgraph.graph.reader import GraphReader

    record = store.record(key)
    if record is not None and record.source:
        return record.source
    published = GraphReader(graph).repository(key)
    if published is not None and published.get("url"):
        return str(published["url"])
    for job in store.list(repo=key, limit=20):
        source = (job.args or {}).get("source")
        if isinstance(source, str) and source.strip():
            return source
    return None


def _looks_like_source(text: str) -> bool:
    if "://" in text or _SCP_LIKE.match(text):
        return True
    try:
        return Path(text).expanduser().exists()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False


_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/]")


def _target(graph: Graph, store: JobStore, repo: str) -> tuple[str, str]:
    """(key, source) of REPO: a known repository key, or a path or URL as ``index`` takes."""
    from semgraph.indexer.sources import repo_key_for

    source = _known_source(graph, store, repo)
    if source is not None:
        return repo, source
    if _looks_like_source(repo):
        try:
            return repo_key_for(repo), repo
        except CheckoutError as exc:
            raise typer.BadParameter(exc.message) from exc
    raise typer.BadParameter(
        f"no repository {repo[:200]!r} is known: give its path or clone URL "
        "(as `semgraph index` takes) to queue its first index"
    )


def enqueue_repository(
    store: JobStore,
    repo: str,
    *,
    ref: str | None = None,
    commit: str | None = None,
    priority: int = 0,
    now: float,
) -> EnqueueResult:
    """Queue a reindex of REPO (a known key, or a path or URL) from its recorded source;
    :class:`typer.BadParameter` for an unknown key, :class:`SourceConflict` when a path or URL
    names a key recorded with another source."""
    from semgraph.indexer.request import ReindexArgs
    from semgraph.indexer.sources import normalize_source

    key, source = _target(store.graph, store, repo)
    return store.enqueue(
        key,
        now=now,
        args=ReindexArgs(source, ref=ref, commit=commit).to_json(),
        ref=ref,
        commit=commit,
        priority=priority,
        source=normalize_source(source),
        host="cli",
    )


def enqueue_cmd(
    ctx: typer.Context,
    repo: str = typer.Argument(
        ..., help="A known repository key, or a path or clone URL (as `semgraph index` takes)."
    ),
    ref: str | None = typer.Option(None, "--ref", envvar="SEMGRAPH_ENQUEUE_REF", help="Git ref."),
    commit: str | None = typer.Option(
        None, "--commit", envvar="SEMGRAPH_ENQUEUE_COMMIT", help="Exact commit."
    ),
    priority: int = typer.Option(
        0, "--priority", envvar="SEMGRAPH_ENQUEUE_PRIORITY", help="Higher runs first."
    ),
    as_json: bool = typer.Option(False, "--json", envvar="SEMGRAPH_JSON", help="JSON output."),
) -> None:
    """Queue a reindex of REPO (merged into its pending job if there is one). An unknown key
    is refused (exit 2) and nothing is queued: a job without a source could never run."""
    from semgraph.commands.queue import (
        bad_input,
        job_store,
    )

    with job_store(ctx) as store:
        try:
            result = enqueue_repository(
                store, repo, ref=ref, commit=commit, priority=priority, now=time.time()
            )
        except (QueueInputError, CheckoutError) as exc:
            raise bad_input(exc) from exc
    if as_json:
        emit_json({"job_id": result.job_id, "outcome": result.outcome})
    else:
        out.print(f"{result.outcome} {result.job_id}", markup=False)
