"""A read token's repository allowlist applied to the read endpoints.

A caller limited to some repositories never sees another's data: a ``repo`` it may not
read is 403 whether or not that repository exists (the answer depends on the allowlist
only), a record of another repository fetched by id is 404 like one that does not exist,
and a list without ``repo`` is the union of per-repository queries over the repositories
it may read. An allowlist entry is a repository key or an fnmatch glob over keys; globs are
expanded against the repositories the graph and the queue know.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import HTTPException

from semgraph.graph.reader import GraphReader
from semgraph.web.context import WebContext
from semgraph.web.metrics import AUTH_FAILURES
from semgraph.web.tokens import Principal

T = TypeVar("T")
_GLOB = frozenset("*?[")
MAX_KNOWN = 100_000


def readable_repos(ctx: WebContext, who: Principal) -> list[str] | None:
    """The repository keys ``who`` may read, None for every repository."""
    if who.repos is None:
        return None
    keys = {p for p in who.repos if not _GLOB & set(p)}
    if len(keys) < len(who.repos):
        known = {str(r["key"]) for r in GraphReader(ctx.graph).repositories()}
        known |= {rec.key for rec in ctx.store.records(limit=MAX_KNOWN)}
        keys |= set(who.filter_repos(known))
    return sorted(keys)


def check_repo(who: Principal, repo: str | None) -> None:
    """403 when ``who`` asks for a repository outside its allowlist."""
    if repo is not None and not who.allows(repo):
        AUTH_FAILURES.labels(reason="forbidden").inc()
        raise HTTPException(403, "this token may not read that repository")


def only_repo(ctx: WebContext, who: Principal, repo: str | None) -> str | None:
    """The repository a single-repository query (the graph's) runs on: ``repo`` when
    allowed; for a limited caller without one, its only repository (400 if it has several)."""
    check_repo(who, repo)
    if repo is not None:
        return repo
    keys = readable_repos(ctx, who)
    if keys is None:
        return None
    if len(keys) == 1:
        return keys[0]
    if not keys:
        return "\x00none"  # a key no repository has: an empty answer
    raise HTTPException(400, "this token reads several repositories: pass repo")


def union(
    ctx: WebContext,
    who: Principal,
    repo: str | None,
    query: Callable[[str | None], list[T]],
    *,
    newest: Callable[[T], Any],
    limit: int,
) -> list[T]:
    """``query(repo)``, or for a limited caller without ``repo`` the newest ``limit`` of
    ``query(key)`` over every key it may read."""
    check_repo(who, repo)
    keys = None if repo is not None else readable_repos(ctx, who)
    if keys is None:
        return query(repo)
    rows = [row for key in keys for row in query(key)]
    rows.sort(key=newest, reverse=True)
    return rows[:limit]
