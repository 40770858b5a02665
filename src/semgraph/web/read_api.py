"""Read endpoints over the code graph and the index runs (search: :mod:`semgraph.web.search_api`).

Every answer is what the matching CLI command prints with ``--json`` (the managers'
``to_dict()``), so the CLI and the HTTP API never disagree. Invalid input and missing data
are semgraph errors (GraphInputError, SearchQueryError, SearchNotIndexed, RunNotFound) that the
app's error handlers answer (:mod:`semgraph.web.app`).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi import Path as PathParam
from starlette.concurrency import run_in_threadpool

from semgraph.errors import RunNotFound
from semgraph.graph.reader import GraphReader
from semgraph.graph.runs import RunStatus, RunStore
from semgraph.web.context import AUTH_RESPONSES, ReadCaller, ReadCtx, WebContext, plain
from semgraph.web.scope import only_repo, union
from semgraph.web.tokens import Principal

router = APIRouter()

_BAD_INPUT: dict[int | str, dict[str, Any]] = {400: {"description": "invalid query input"}}
# a name the graph reader accepts: no line breaks or NUL, not only separators or blanks
NAME_PATTERN = r"^[^\n\r\x00]*[^\s.:#/\n\r\x00][^\n\r\x00]*$"
Name = Annotated[
    str, Query(min_length=1, max_length=1000, pattern=NAME_PATTERN, description="symbol name")
]
Repo = Annotated[str | None, Query(max_length=512, description="repository key")]


def _graph_answer(
    ctx: WebContext, who: Principal, kind: str, name: str, repo: str | None, **kw: Any
) -> Any:
    repo = only_repo(ctx, who, repo)
    if kw.get("across_repos"):  # the allowlist applies at every hop
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


def _calls_route(direction: str, doc: str) -> None:
    """``GET /graph/callers`` and ``GET /graph/callees``: one route each, the walk's
    direction apart."""

    def endpoint(
        ctx: ReadCtx,
        who: ReadCaller,
        name: Name,
        repo: Repo = None,
        depth: Annotated[int, Query(ge=1, le=5)] = 1,
        limit: Annotated[int, Query(ge=1, le=1000)] = 50,
        across_repos: AcrossRepos = False,
    ) -> dict[str, Any]:
        result: dict[str, Any] = _graph_answer(
            ctx, who, direction, name, repo, depth=depth, limit=limit, across_repos=across_repos
        )
        return result

    router.add_api_route(
        f"/graph/{direction}",
        endpoint,
        methods=["GET"],
        name=f"graph_{direction}",
        description=doc,
        tags=["graph"],
        responses={**AUTH_RESPONSES, **_BAD_INPUT},
    )


_calls_route("callers", "Who calls a symbol, up to ``depth`` hops.")
_calls_route("callees", "What a symbol calls, up to ``depth`` hops.")


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
