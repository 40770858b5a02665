"""Code search over HTTP: ``GET /search`` (query parameters) and ``POST /search`` (the same
fields in a JSON body, for issue texts that do not belong in a URL).

Both answer what ``semgraph search --json`` prints: ``{"hits": [...], "query_chars",
"searched_chars", "truncated"}`` plus ``notice`` when the query was longer than the documented
bound (``SEMGRAPH_SEARCH_MAX_QUERY_CHARS``, 32,768 characters by default) and was cut there.
A query is never refused for its length; a POST body over ``SEMGRAPH_SEARCH_MAX_BODY_BYTES``
is 413 with a short message. A GET's URL is bounded by the HTTP parser (64 KiB request line:
a 32 kB English text fits URL-encoded; ``docs/search.md``), so long texts go by POST. No
error repeats the query (:mod:`semgraph.web.app` answers 422s without the input).
"""

from __future__ import annotations

import json
import threading
from typing import Annotated, Any, Literal, TypeVar

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool

from semgraph.errors import SearchNotIndexed
from semgraph.search.documents import clean_text
from semgraph.search.embed import Embedder
from semgraph.search.query import SearchAnswer, search_answer, validate
from semgraph.web.context import (
    AUTH_RESPONSES,
    BodyTooLarge,
    ReadCaller,
    ReadCtx,
    WebContext,
    read_limited,
)
from semgraph.web.scope import check_repo, readable_repos
from semgraph.web.tokens import Principal

router = APIRouter()
_embedder_lock = threading.Lock()

QUERY_PATTERN = r"^[\s\S]*\S[\s\S]*$"
BodyT = TypeVar("BodyT", bound=BaseModel)
Mode = Literal["hybrid", "bm25", "knn"]
# semgraph.search.roles.ROLES (a test holds them equal)
Role = Literal["source", "test", "docs", "changelog", "example", "i18n", "generated"]
Q_HELP = (
    "an identifier, a description or a whole issue text; cut at SEMGRAPH_SEARCH_MAX_QUERY_CHARS "
    "(32,768 characters by default) with a notice, never refused"
)
ROLE_HELP = "only files of this role (source, test, docs, changelog, example, i18n, generated)"
SEARCH_RESPONSES: dict[int | str, dict[str, Any]] = {
    **AUTH_RESPONSES,
    400: {"description": "invalid query input"},
    404: {"description": "nothing indexed"},
}


class SearchRequest(BaseModel):
    """The body of ``POST /search``: the fields of ``GET /search``."""

    model_config = ConfigDict(extra="forbid")

    q: str = Field(min_length=1, pattern=QUERY_PATTERN, description=Q_HELP)
    repo: str | None = Field(default=None, max_length=512, description="repository key")
    lang: str | None = Field(default=None, max_length=64)
    path_prefix: str | None = Field(default=None, max_length=1024)
    k: int = Field(default=10, ge=1, le=200)
    mode: Mode = "hybrid"
    role: Role | None = Field(default=None, description=ROLE_HELP)


def embedder_for(request: Request, ctx: WebContext) -> Embedder:
    """One embedding model per application, loaded on the first search that needs it."""
    with _embedder_lock:
        model: Embedder | None = getattr(request.app.state, "embedder", None)
        if model is None:
            model = Embedder(ctx.settings)
            request.app.state.embedder = model
        return model


def run_search(request: Request, ctx: WebContext, who: Principal, args: SearchRequest) -> Any:
    """The answer for ``args``, over every repository ``who`` reads (or just ``repo``)."""
    validate(args.q, k=args.k, mode=args.mode, settings=ctx.settings, role=args.role)
    check_repo(who, args.repo)
    embedder = None if args.mode == "bm25" else embedder_for(request, ctx)
    keys = None if args.repo is not None else readable_repos(ctx, who)
    answers: list[SearchAnswer] = []
    for key in [args.repo] if keys is None else keys:
        try:
            answers.append(
                search_answer(
                    ctx.search,
                    ctx.settings,
                    embedder,
                    args.q,
                    repo=key,
                    lang=args.lang,
                    path_prefix=args.path_prefix,
                    k=args.k,
                    mode=args.mode,
                    role=args.role,
                )
            )
        except SearchNotIndexed:
            if keys is None:
                raise
    hits = [hit for answer in answers for hit in answer.hits]
    if keys is not None and not hits:
        # a limited token: the same answer whether its repositories are unindexed or empty
        raise SearchNotIndexed("nothing is indexed for the repositories this token reads")
    hits.sort(key=lambda hit: hit.score, reverse=True)
    merged = answers[0]
    merged.hits = hits[: args.k]
    return merged.to_dict()


@router.get("/search", tags=["search"], responses=SEARCH_RESPONSES)
def search_get(
    request: Request,
    ctx: ReadCtx,
    who: ReadCaller,
    q: Annotated[str, Query(min_length=1, pattern=QUERY_PATTERN, description=Q_HELP)],
    repo: Annotated[str | None, Query(max_length=512, description="repository key")] = None,
    lang: Annotated[str | None, Query(max_length=64)] = None,
    path_prefix: Annotated[str | None, Query(max_length=1024)] = None,
    k: Annotated[int, Query(ge=1, le=200)] = 10,
    mode: Mode = "hybrid",
    role: Annotated[Role | None, Query(description=ROLE_HELP)] = None,
) -> Any:
    """Hybrid (BM25 + kNN, fused), BM25-only or kNN-only code search."""
    args = SearchRequest.model_construct(
        q=q, repo=repo, lang=lang, path_prefix=path_prefix, k=k, mode=mode, role=role
    )
    return run_search(request, ctx, who, args)


@router.post(
    "/search",
    tags=["search"],
    responses={
        **SEARCH_RESPONSES,
        413: {"description": "the body is over the limit"},
        422: {"description": "a field does not validate: where and why, never the input"},
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": SearchRequest.model_json_schema()}},
        }
    },
)
async def search_post(request: Request, ctx: ReadCtx, who: ReadCaller) -> Any:
    """``GET /search`` with its fields in a JSON body (long issue texts)."""
    args = await json_body(request, ctx, SearchRequest)
    return await run_in_threadpool(run_search, request, ctx, who, args)


async def json_body(request: Request, ctx: WebContext, model: type[BodyT]) -> BodyT:
    """A ``POST`` form's JSON body, read up to SEMGRAPH_SEARCH_MAX_BODY_BYTES (413 past it)
    and validated as ``model``; a 422 says where and why, never echoing the input."""
    limit = ctx.settings.search_max_body_bytes
    try:
        body = await read_limited(request, limit)
    except BodyTooLarge:
        detail = f"the body is over {limit} bytes (SEMGRAPH_SEARCH_MAX_BODY_BYTES)"
        raise HTTPException(413, detail) from None
    try:
        # Python's parser: a lone surrogate escape or invalid UTF-8 in an issue text is
        # cleaned later (U+FFFD), not refused
        data = json.loads(body.decode("utf-8", "replace"))
    except ValueError:
        invalid = {"type": "json_invalid", "loc": ("body",), "msg": "the body is not JSON"}
        raise RequestValidationError([invalid]) from None
    if isinstance(data, dict) and isinstance(data.get("q"), str):
        data["q"] = clean_text(data["q"])  # lone surrogates become U+FFFD
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise RequestValidationError(exc.errors(include_input=False, include_url=False)) from None
