"""The repository lifecycle on the HTTP API: ``GET /repos/{key}`` shows one
repository (state, record, graph counts, indexes, jobs) and ``DELETE /repos/{key}`` queues
its removal (202 with the job id; a worker runs the ``remove`` job,
:mod:`semgraph.repos.removal`). Both need the ``admin`` scope. ``GET /repos`` (every live
repository) is the read API's (:mod:`semgraph.web.read_api`); a repository whose removal
started is not listed there. An unknown key is 404, a malformed one 422, and nothing is
queued.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from semgraph.repos import removal
from semgraph.repos.listing import MAX_KEY_CHARS, show_repository
from semgraph.web.context import AUTH_RESPONSES, AdminCtx, WebContext, plain

router = APIRouter()

# no control characters, at most MAX_KEY_CHARS (what the queue accepts as a key): 422 else
Key = Annotated[
    str,
    PathParam(
        min_length=1,
        max_length=MAX_KEY_CHARS,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description="repository key",
    ),
]
_RESPONSES: dict[int | str, dict[str, Any]] = {
    **AUTH_RESPONSES,
    404: {"description": "no repository has that key"},
}


def _unknown() -> HTTPException:
    return HTTPException(404, "no repository has that key")


@router.get("/repos/{key}", tags=["repos"], responses=_RESPONSES)
async def get_repo(ctx: AdminCtx, key: Key) -> dict[str, Any]:
    """One repository: its state (``live``, ``removing``, ``unpublished``), record, graph
    counts, alias and indexes, and its pending or running jobs."""
    shown = await run_in_threadpool(show_repository, ctx.settings, ctx.graph, ctx.search, key)
    if shown is None:
        raise _unknown()
    result: dict[str, Any] = plain(shown)
    return result


def _remove(ctx: WebContext, key: str) -> dict[str, Any] | None:
    if not removal.is_known(ctx.graph, key):
        return None
    result = removal.request_removal(ctx.store, key, now=time.time(), requested_by="api")
    return {"status": "queued", "job_id": result.job_id, "outcome": result.outcome, "repo": key}


@router.delete(
    "/repos/{key}",
    tags=["repos"],
    status_code=202,
    responses={**_RESPONSES, 202: {"description": "the removal job is committed"}},
)
async def delete_repo(ctx: AdminCtx, key: Key) -> JSONResponse:
    """Queue the removal of the repository from the graph, the search index and the
    worker's disk; answers once the job is committed (the job id names it in /jobs)."""
    body = await run_in_threadpool(_remove, ctx, key)
    if body is None:
        raise _unknown()
    return JSONResponse(body, status_code=202)
