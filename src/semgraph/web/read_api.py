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
from semgraph.errors import RunNotFound
from semgraph.graph.reader import GraphReader
from semgraph.graph.runs import RunStatus, RunStore
from semgraph.search.embed import Embedder
from semgraph.search.query import search, validate
from semgraph.web.context import AUTH_RESPONSES, ReadCtx, WebContext, plain

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
    embedder = None if mode is SearchMode.BM25 else _embedder(request, ctx)
    hits = search(
        ctx.search,
        ctx.settings,
        embedder,
        q,
        repo=repo,
        lang=lang,
        path_prefix=path_prefix,
        k=k,
        mode=mode.value,
    )
    return [hit.to_dict() for hit in hits]


def _graph_answer(ctx: WebContext, kind: str, name: str, repo: str | None, **kw: Any) -> Any:
    answer = getattr(GraphReader(ctx.graph), kind)(name, repo, **kw)
    return answer.to_dict()


@router.get("/graph/def", tags=["graph"], responses={**AUTH_RESPONSES, **_BAD_INPUT})
def graph_def(
    ctx: ReadCtx,
    name: Name,
    repo: Repo = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 20,
) -> dict[str, Any]:
    """Where a symbol is defined (short or qualified name)."""
    result: dict[str, Any] = _graph_answer(ctx, "definitions", name, repo, limit=limit)
    return result


@router.get("/graph/callers", tags=["graph"], responses={**AUTH_RESPONSES, **_BAD_INPUT})
def graph_callers(
    ctx: ReadCtx,
    name: Name,
    repo: Repo = None,
    depth: Annotated[int, Query(ge=1, le=5)] = 1,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> dict[str, Any]:
    """Who calls a symbol, up to ``depth`` hops."""
    result: dict[str, Any] = _graph_answer(ctx, "callers", name, repo, depth=depth, limit=limit)
    return result


@router.get("/graph/callees", tags=["graph"], responses={**AUTH_RESPONSES, **_BAD_INPUT})
def graph_callees(
    ctx: ReadCtx,
    name: Name,
    repo: Repo = None,
    depth: Annotated[int, Query(ge=1, le=5)] = 1,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> dict[str, Any]:
    """What a symbol calls, up to ``depth`` hops."""
    result: dict[str, Any] = _graph_answer(ctx, "callees", name, repo, depth=depth, limit=limit)
    return result


@router.get("/runs", tags=["runs"], responses=AUTH_RESPONSES)
def list_runs(
    ctx: ReadCtx,
    repo: Repo = None,
    status: RunStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 50,
) -> list[dict[str, Any]]:
    """Index runs, newest first."""

    status_text = None if status is None else status.value
    runs: list[dict[str, Any]] = plain(
        RunStore(ctx.graph).list(repo=repo, limit=limit, status=status_text)
    )
    return runs


@router.get(
    "/runs/{run_id}",
    tags=["runs"],
    responses={**AUTH_RESPONSES, 404: {"description": "no such run"}},
)
async def get_run(
    ctx: ReadCtx, run_id: Annotated[str, PathParam(max_length=200)]
) -> dict[str, Any]:
    """Everything recorded about one index run."""

    run = await run_in_threadpool(RunStore(ctx.graph).get, run_id)
    if run is None:
        raise RunNotFound("no such run")
    result: dict[str, Any] = plain(run)
    return result


@router.get("/repos", tags=["graph"], responses=AUTH_RESPONSES)
def list_repos(ctx: ReadCtx) -> list[dict[str, Any]]:
    """Every indexed repository: key, clone URL, commit and run id (input for a full
    reindex: POST each ``url`` to /jobs)."""

    repos: list[dict[str, Any]] = plain(GraphReader(ctx.graph).repositories())
    return repos
