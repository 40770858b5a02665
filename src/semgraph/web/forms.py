"""What the search and localisation routes share: the query text's pattern, the modes, the
answers they may give, the embedding model loaded once per application, and the ``POST``
twin of a ``GET`` route, whose fields come in a JSON body (issue texts do not belong in a
URL): read up to SEMGRAPH_SEARCH_MAX_BODY_BYTES (413 past it) and validated without ever
echoing the input.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from fastapi import APIRouter, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

from semgraph.search.documents import clean_text
from semgraph.search.embed import Embedder
from semgraph.web.context import (
    AUTH_RESPONSES,
    BodyTooLarge,
    ReadCtx,
    WebContext,
    read_limited,
)
from semgraph.web.read_guard import LimitedCaller
from semgraph.web.tokens import Principal

_embedder_lock = threading.Lock()

QUERY_PATTERN = r"^[\s\S]*\S[\s\S]*$"
BodyT = TypeVar("BodyT", bound=BaseModel)
Mode = Literal["hybrid", "bm25", "knn"]
SEARCH_RESPONSES: dict[int | str, dict[str, Any]] = {
    **AUTH_RESPONSES,
    400: {"description": "invalid query input"},
    404: {"description": "nothing indexed"},
}


def embedder_for(request: Request, ctx: WebContext) -> Embedder:
    """One embedding model per application, loaded on the first search that needs it."""
    with _embedder_lock:
        model: Embedder | None = getattr(request.app.state, "embedder", None)
        if model is None:
            model = Embedder(ctx.settings)
            request.app.state.embedder = model
        return model


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


def post_form(
    router: APIRouter,
    path: str,
    model: type[BodyT],
    run: Callable[[Request, WebContext, Principal, BodyT], Any],
) -> None:
    """``POST path``: ``GET path`` with its fields in a JSON body (``model``), answered by
    ``run`` (what the ``GET`` route answers) in the thread pool."""

    async def endpoint(request: Request, ctx: ReadCtx, who: LimitedCaller) -> Any:
        args = await json_body(request, ctx, model)
        return await run_in_threadpool(run, request, ctx, who, args)

    router.add_api_route(
        path,
        endpoint,
        methods=["POST"],
        name=f"{path.strip('/')}_post",
        description=f"``GET {path}`` with its fields in a JSON body (long issue texts).",
        tags=["search"],
        responses={
            **SEARCH_RESPONSES,
            413: {"description": "the body is over the limit"},
            422: {"description": "a field does not validate: where and why, never the input"},
        },
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": model.model_json_schema()}},
            }
        },
    )
