"""The HTTP API: health, readiness, metrics, jobs (search, graph and runs: ``read_api``).

Reads follow the read rule of :func:`semgraph.web.context.require_read` (a token with the
``read`` scope once any token is configured, unless ``api_read_open``); ``POST /jobs`` needs
the ``enqueue`` scope, requeue, abandon and purge the ``admin`` scope, and all of them are
disabled (403) while no token is configured. Routes raise semgraph errors; the app maps each
error type to its HTTP answer in one table (:mod:`semgraph.web.app`).
"""

from __future__ import annotations

import re
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from semgraph.db import graph_errors, search_errors
from semgraph.errors import JobNotFound, PayloadError, StoreError
from semgraph.indexer.request import ReindexArgs
from semgraph.indexer.sources import normalize_source
from semgraph.queue.models import JobStatus
from semgraph.web.context import (
    AUTH_RESPONSES,
    AdminCtx,
    EnqueueCtx,
    ReadCaller,
    ReadCtx,
    WebContext,
    context,
    plain,
    require_metrics,
)
from semgraph.web.scope import union

router = APIRouter()
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


# -- health -----------------------------------------------------------------------------------


class Health(BaseModel):
    status: str


class Readiness(BaseModel):
    status: str
    graph: str
    search: str


@router.get("/healthz", tags=["health"])
def healthz() -> Health:
    """The process is up (no store is contacted)."""
    return Health(status="ok")


def _probe_graph(ctx: WebContext) -> str:
    try:
        with graph_errors("readyz"):
            ctx.graph.driver.verify_connectivity()
        return "ok"
    except StoreError as exc:
        return f"unavailable: {exc.message[:300]}"


def _probe_search(ctx: WebContext) -> str:
    try:
        with search_errors("readyz"):
            health = ctx.search.cluster.health(timeout="5s")
        status = str(health.get("status"))
        return "ok" if status in {"green", "yellow"} else f"cluster status {status}"
    except StoreError as exc:
        return f"unavailable: {exc.message[:300]}"


@router.get(
    "/readyz",
    tags=["health"],
    responses={503: {"model": Readiness, "description": "a store is unreachable"}},
)
async def readyz(request: Request) -> Response:
    """Ready when both the graph server and Elasticsearch answer."""
    ctx = context(request)
    graph = await run_in_threadpool(_probe_graph, ctx)
    search = await run_in_threadpool(_probe_search, ctx)
    ready = graph == "ok" and search == "ok"
    body = Readiness(status="ready" if ready else "unavailable", graph=graph, search=search)
    return JSONResponse(body.model_dump(), status_code=200 if ready else 503)


@router.get(
    "/metrics",
    tags=["health"],
    response_class=Response,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}, **AUTH_RESPONSES},
)
async def metrics(
    request: Request, ctx: Annotated[WebContext, Depends(require_metrics)]
) -> Response:
    """Prometheus text exposition of every counter in this process plus queue gauges (a token
    with the ``metrics`` scope; without a token only on loopback when none is configured)."""
    await run_in_threadpool(ctx.refresh_gauges, time.time())
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)


# -- jobs ---------------------------------------------------------------------------------------


# what ``repo_key_for`` accepts: a URL with a host, a file:// URL, an absolute path, or the
# scp-like ``user@host:path``; never a leading '-' or a control character
SOURCE_PATTERN = (
    r"^(?:(?:https?|ssh|git)://(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9.-]+(?::[0-9]{1,4})?"
    r"(?:/[^\x00-\x1f\x7f]*)?"
    r"|file:///?[^\x00-\x1f\x7f]*"
    r"|/[^\x00-\x1f\x7f]*"
    r"|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/\x00-\x1f\x7f][^\x00-\x1f\x7f]*)$"
)
REF_PATTERN = r"^[^\x00-\x1f\x7f\s-][^\x00-\x1f\x7f]*$"


class EnqueueRequest(BaseModel):
    source: str = Field(
        min_length=1,
        max_length=2048,
        pattern=SOURCE_PATTERN,
        description="clone URL (https, http, ssh, git, scp-like) or absolute local path",
    )
    ref: str | None = Field(default=None, max_length=1024, pattern=REF_PATTERN)
    commit: str | None = Field(default=None, pattern=r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
    priority: int = Field(default=0, ge=-1000, le=1000)


class EnqueueResponse(BaseModel):
    job_id: str
    outcome: str
    repo: str


def _check_source(source: str) -> None:
    if _CONTROL.search(source) or source.startswith("-") or not source.strip():
        raise PayloadError("source must be a URL or path without control characters")


@router.post(
    "/jobs",
    tags=["jobs"],
    status_code=202,
    responses={**AUTH_RESPONSES, 400: {"description": "invalid source"}},
)
def post_job(body: EnqueueRequest, ctx: EnqueueCtx) -> EnqueueResponse:
    """Enqueue a reindex by hand (answers after the job is committed)."""
    _check_source(body.source)
    if body.ref is not None and (_CONTROL.search(body.ref) or body.ref.startswith("-")):
        raise PayloadError("ref must not contain control characters or start with '-'")
    try:
        repo_key = ctx.receiver.repo_key_for(body.source)
        args = ReindexArgs(source=body.source, ref=body.ref, commit=body.commit).to_json()
        result = ctx.store.enqueue(
            repo_key,
            now=time.time(),
            kind="reindex",
            args=args,
            ref=body.ref,
            commit=body.commit,
            priority=body.priority,
            source=normalize_source(body.source),
            host="api",
        )
    except ValueError as exc:  # not a semgraph error: a URL that urlsplit refuses
        raise PayloadError(str(exc)[:300]) from exc
    return EnqueueResponse(job_id=result.job_id, outcome=result.outcome, repo=repo_key)


@router.get("/jobs", tags=["jobs"], responses=AUTH_RESPONSES)
def list_jobs(
    ctx: ReadCtx,
    who: ReadCaller,
    status: Annotated[JobStatus | None, Query()] = None,
    repo: Annotated[str | None, Query(max_length=512)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[dict[str, Any]]:
    """Jobs, newest first, optionally filtered by status and repository key."""
    state = None if status is None else status.value
    jobs = union(
        ctx,
        who,
        repo,
        lambda key: ctx.store.list(status=state, repo=key, limit=limit),
        newest=lambda job: job.created_at,
        limit=limit,
    )
    return [plain(job) for job in jobs]


@router.get(
    "/jobs/{job_id}",
    tags=["jobs"],
    responses={**AUTH_RESPONSES, 404: {"description": "no such job"}},
)
def get_job(
    job_id: Annotated[str, Path(max_length=200)], ctx: ReadCtx, who: ReadCaller
) -> dict[str, Any]:
    """One job by id."""
    job = ctx.store.get(job_id)
    if job is None or not who.allows(job.repo_key):
        raise JobNotFound("no such job")
    result: dict[str, Any] = plain(job)
    return result


# -- operator (admin scope) ---------------------------------------------------------------------

JobId = Annotated[str, Path(max_length=200)]
_ADMIN_RESPONSES: dict[int | str, dict[str, Any]] = {
    **AUTH_RESPONSES,
    400: {"description": "the job is not in a state that allows this"},
    404: {"description": "no such job"},
}


class AbandonRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # what the queue records: no control characters, not blank
    reason: str = Field(
        min_length=1, max_length=1000, pattern=r"^[^\x00-\x1f]*[^\s\x00-\x1f][^\x00-\x1f]*$"
    )


class PurgeResponse(BaseModel):
    purged: int


@router.post("/jobs/{job_id}/requeue", tags=["jobs"], responses=_ADMIN_RESPONSES)
def requeue_job(job_id: JobId, ctx: AdminCtx) -> dict[str, Any]:
    """Put a failed, quarantined or abandoned job back in the queue with fresh counters."""
    result: dict[str, Any] = plain(ctx.store.requeue(job_id, now=time.time()))
    return result


@router.post("/jobs/{job_id}/abandon", tags=["jobs"], responses=_ADMIN_RESPONSES)
def abandon_job(job_id: JobId, body: AbandonRequest, ctx: AdminCtx) -> dict[str, Any]:
    """Abandon a pending job now, or ask a running job's worker to stop it."""
    result: dict[str, Any] = plain(ctx.store.abandon(job_id, now=time.time(), reason=body.reason))
    return result


@router.post("/jobs/purge", tags=["jobs"], responses=AUTH_RESPONSES)
def purge_jobs(
    ctx: AdminCtx,
    older_than_s: Annotated[float, Query(ge=0, le=100 * 365 * 86400)],
) -> PurgeResponse:
    """Delete terminal jobs (succeeded, failed, quarantined, abandoned) finished more than
    ``older_than_s`` seconds ago."""
    return PurgeResponse(purged=ctx.store.purge(older_than_s=older_than_s, now=time.time()))
