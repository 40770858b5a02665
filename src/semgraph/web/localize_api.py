"""Localisation over HTTP: ``POST /localize`` (a JSON body: issue texts do not belong in a
URL) and ``GET /localize`` (query parameters, for short texts), answering what
``semgraph localize --json`` prints (:meth:`semgraph.localize.locate.LocalizeAnswer.to_dict`).

A mode of its own rather than ``mode=localize`` on ``/search``: the answer is another shape
(files with symbols and evidence, not chunk hits), it needs one repository (the graph hops
are per repository), and it takes options of its own (the parts' weights). The text is
bounded like a search query (cut with a notice, never refused); no error repeats it.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from semgraph.audit import audit_read
from semgraph.localize.locate import MAX_FILES, LocalizeOptions, localize
from semgraph.localize.rank import OPTIONS_PATTERN
from semgraph.search.query import validate
from semgraph.web.context import ReadCtx, WebContext
from semgraph.web.forms import QUERY_PATTERN, SEARCH_RESPONSES, Mode, embedder_for, post_form
from semgraph.web.read_guard import LimitedCaller
from semgraph.web.scope import check_repo
from semgraph.web.tokens import Principal

router = APIRouter()

TEXT_HELP = (
    "the issue text (title, body, traceback, code); cut at SEMGRAPH_SEARCH_MAX_QUERY_CHARS "
    "(32,768 characters by default) with a notice, never refused"
)
OPTIONS_HELP = (
    "the parts' weights, e.g. names=0,rerank=0.5 (chunks, names, frames, callees, callers, "
    "rerank, history, demote, demote_asked, expand_from, rerank_files, symbols); the defaults "
    "otherwise"
)


class LocalizeRequest(BaseModel):
    """The body of ``POST /localize``."""

    model_config = ConfigDict(extra="forbid")

    q: str = Field(min_length=1, pattern=QUERY_PATTERN, description=TEXT_HELP)
    repo: str = Field(min_length=1, max_length=512, description="repository key")
    k: int = Field(default=10, ge=1, le=MAX_FILES, description="files to return")
    mode: Mode = "hybrid"
    options: str | None = Field(
        default=None, max_length=400, pattern=OPTIONS_PATTERN, description=OPTIONS_HELP
    )


def run_localize(request: Request, ctx: WebContext, who: Principal, args: LocalizeRequest) -> Any:
    check_repo(who, args.repo)
    validate(args.q, k=args.k, mode=args.mode, settings=ctx.settings)
    options = LocalizeOptions.parse(args.options)
    needs_model = args.mode != "bm25" or options.rerank > 0
    embedder = embedder_for(request, ctx) if needs_model else None
    answer = localize(
        ctx.search,
        ctx.graph,
        ctx.settings,
        embedder,
        args.q,
        repo=args.repo,
        k=args.k,
        mode=args.mode,
        options=options,
    )
    found = answer.to_dict()
    audit_read(ctx.settings, who.name, "localize", args.repo, found, args.q)
    return found


@router.get("/localize", tags=["search"], responses=SEARCH_RESPONSES)
def localize_get(
    request: Request,
    ctx: ReadCtx,
    who: LimitedCaller,
    q: Annotated[str, Query(min_length=1, pattern=QUERY_PATTERN, description=TEXT_HELP)],
    repo: Annotated[str, Query(min_length=1, max_length=512, description="repository key")],
    k: Annotated[int, Query(ge=1, le=MAX_FILES)] = 10,
    mode: Mode = "hybrid",
    options: Annotated[
        str | None, Query(max_length=400, pattern=OPTIONS_PATTERN, description=OPTIONS_HELP)
    ] = None,
) -> Any:
    """Ranked files, and symbols within them, for an issue text, with their evidence."""
    args = LocalizeRequest.model_construct(q=q, repo=repo, k=k, mode=mode, options=options)
    return run_localize(request, ctx, who, args)


post_form(router, "/localize", LocalizeRequest, run_localize)
