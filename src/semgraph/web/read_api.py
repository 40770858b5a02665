"""Read endpoints over the code graph, the index runs and the search index.

Every answer is what the matching CLI command prints with ``--json`` (the managers'
``to_dict()``), so the CLI and the HTTP API never disagree. Invalid input and missing data
are semgraph errors (GraphInputError, SearchQueryError, SearchNotIndexed, RunNotFound) that the
app's error handlers answer (:mod:`semgraph.web.app`).
"""

from __future__ import annotations

import enum
import threading
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi import Path as PathParam
from starlette.concurrency import run_in_threadpool

from semgraph.config import Settings
from semgraph.errors import RunNotFound, SearchNotIndexed
from semgraph.graph.reader import GraphReader
from semgraph.graph.runs import RunStatus, RunStore
from semgraph.search.embed import Embedder
from semgraph.search.query import search, validate
from semgraph.web.context import AUTH_RESPONSES, ReadCaller, ReadCtx, WebContext, plain
from semgraph.web.scope import check_repo, only_repo, readable_repos, union
from semgraph.web.tokens import Principal

router = APIRouter()
_embedder_lock = threading.Lock()

_BAD_INPUT: dict[int | str, dict[str, Any]] = {400: {"description": "invalid query input"}}
# a name the graph reader accepts: no line breaks or NUL, not only separators or blanks
NAME_PATTERN = r"^[^\n\r\x00]*[^\s.:#/\n\r\x00][^\n\r\x00]*$"
QUERY_PATTERN = r"^[\s\S]*\S[\s\S]*$"
MAX_QUERY_CHARS = int(Settings.model_fields["search_max_query_chars"].default)
Name = Annotated[
    str, Query(min_length=1, max_length=1000, pattern=NAME_PATTERN, description="symbol name")
]
Repo = Annotated[str | None, Query(max_length=512, description="repository key")]


class SearchMode(enum.StrEnum):
    HYBRID = "hybrid"
    BM25 = "bm25"
    KNN = "knn"


def _embedder(request: Request, ctx: WebContext) -> Embedder:
    """One embedding model per application, loaded on the first search that needs it."""
    with _embedder_lock:
        model: Embedder | None = getattr(request.app.state, "embedder", None)
        if model is None:
            model = Embedder(ctx.settings)
            request.app.state.embedder = model
        return model


@router.get(
    "/search",
    tags=["search"],
    responses={**AUTH_RESPONSES, **_BAD_INPUT, 404: {"description": "nothing indexed"}},
)
def search_endpoint(
    request: Request,
    ctx: ReadCtx,
    who: ReadCaller,
    q: Annotated[
        str,
        Query(
            min_length=1,
            max_length=MAX_QUERY_CHARS,
            pattern=QUERY_PATTERN,
            description="an identifier or a description (SEMGRAPH_SEARCH_MAX_QUERY_CHARS)",
        ),
    ],
    repo: Repo = None,
    lang: Annotated[str | None, Query(max_length=64)] = None,
    path_prefix: Annotated[str | None, Query(max_length=1024)] = None,
    k: Annotated[int, Query(ge=1, le=200)] = 10,
    mode: SearchMode = SearchMode.HYBRID,
) -> list[dict[str, Any]]:
    """Hybrid (BM25 + kNN, fused), BM25-only or kNN-only code search."""

    validate(q, k=k, mode=mode.value, settings=ctx.settings)
    check_repo(who, repo)
    embedder = None if mode is SearchMode.BM25 else _embedder(request, ctx)
    keys = None if repo is not None else readable_repos(ctx, who)
    hits = []
    for key in [repo] if keys is None else keys:
        try:
            hits += search(
                ctx.search,
                ctx.settings,
                embedder,
                q,
                repo=key,
                lang=lang,
                path_prefix=path_prefix,
                k=k,
                mode=mode.value,
            )
        except SearchNotIndexed:
            if keys is None:
                raise
    if keys is not None and not hits:
        # a limited token: the same answer whether its repositories are unindexed or empty
        raise SearchNotIndexed("nothing is indexed for the repositories this token reads")
    hits.sort(key=lambda hit: hit.score, reverse=True)
    return [hit.to_dict() for hit in hits[:k]]


def _graph_answer(
    ctx: WebContext, who: Principal, kind: str, name: str, repo: str | None, **kw: Any
) -> Any:
    repo = only_repo(ctx, who, repo)
    if kw.get("across_repos"):  # the allowlist applies at every hop (issue 30)
        kw["visible"] = None if who.repos is None else who.allows
    else:
        kw.pop("across_repos", None)
    answer = getattr(GraphReader(ctx.graph), kind)(name, repo, **kw)
    return answer.to_dict()


AcrossRepos = Annotated[bool, Query(description="follow cross-repository links (tier cross_repo)")]


@router.get("/graph/def", tags=["graph"], responses={**AUTH_RESPONSES, **_BAD_INPUT})
def graph_def(
    ctx: ReadCtx,
    who: ReadCaller,
    name: Name,
    repo: Repo = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 20,
) -> dict[str, Any]:
    """Where a symbol is defined (short or qualified name)."""
    result: dict[str, Any] = _graph_answer(ctx, who, "definitions", name, repo, limit=limit)
    return result


@router.get("/graph/callers", tags=["graph"], responses={**AUTH_RESPONSES, **_BAD_INPUT})
def graph_callers(
    ctx: ReadCtx,
    who: ReadCaller,
    name: Name,
    repo: Repo = None,
    depth: Annotated[int, Query(ge=1, le=5)] = 1,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    across_repos: AcrossRepos = False,
) -> dict[str, Any]:
    """Who calls a symbol, up to ``depth`` hops."""
    result: dict[str, Any] = _graph_answer(
        ctx, who, "callers", name, repo, depth=depth, limit=limit, across_repos=across_repos
    )
    return result


@router.get("/graph/callees", tags=["graph"], responses={**AUTH_RESPONSES, **_BAD_INPUT})
def graph_callees(
    ctx: ReadCtx,
    who: ReadCaller,
    name: Name,
    repo: Repo = None,
    depth: Annotated[int, Query(ge=1, le=5)] = 1,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    across_repos: AcrossRepos = False,
) -> dict[str, Any]:
    """What a symbol calls, up to ``depth`` hops."""
    result: dict[str, Any] = _graph_answer(
        ctx, who, "callees", name, repo, depth=depth, limit=limit, across_repos=across_repos
    )
    return result


@router.get("/runs", tags=["runs"], responses=AUTH_RESPONSES)
def list_runs(
    ctx: ReadCtx,
    who: ReadCaller,
    repo: Repo = None,
    status: RunStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 50,
) -> list[dict[str, Any]]:
    """Index runs, newest first."""

    status_text = None if status is None else status.value
    store = RunStore(ctx.graph)
    runs: list[dict[str, Any]] = union(
        ctx,
        who,
        repo,
        lambda key: plain(store.list(repo=key, limit=limit, status=status_text)),
        newest=lambda run: run.get("started_at") or 0,
        limit=limit,
    )
    return runs


@router.get(
    "/runs/{run_id}",
    tags=["runs"],
    responses={**AUTH_RESPONSES, 404: {"description": "no such run"}},
)
async def get_run(
    ctx: ReadCtx, who: ReadCaller, run_id: Annotated[str, PathParam(max_length=200)]
) -> dict[str, Any]:
    """Everything recorded about one index run."""

    run = await run_in_threadpool(RunStore(ctx.graph).get, run_id)
    result: dict[str, Any] | None = None if run is None else plain(run)
    if result is None or not who.allows(str(result.get("repo"))):
        raise RunNotFound("no such run")
    return result


@router.get("/repos", tags=["graph"], responses=AUTH_RESPONSES)
def list_repos(ctx: ReadCtx, who: ReadCaller) -> list[dict[str, Any]]:
    """Every indexed repository: key, clone URL, commit and run id (input for a full
    reindex: POST each ``url`` to /jobs)."""

    repos: list[dict[str, Any]] = plain(GraphReader(ctx.graph).repositories())
    return [r for r in repos if who.allows(str(r.get("key")))]
