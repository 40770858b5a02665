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

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from semgraph.audit import audit_read
from semgraph.errors import SearchNotIndexed
from semgraph.search.query import SearchAnswer, search_answer, validate
from semgraph.web.context import ReadCtx, WebContext
from semgraph.web.forms import QUERY_PATTERN, SEARCH_RESPONSES, Mode, embedder_for, post_form
from semgraph.web.read_guard import LimitedCaller
from semgraph.web.scope import check_repo, readable_repos
from semgraph.web.tokens import Principal

router = APIRouter()

# semgraph.search.roles.ROLES (a test holds them equal)
Role = Literal["source", "test", "docs", "changelog", "example", "i18n", "generated"]
Q_HELP = (
    "an identifier, a description or a whole issue text; cut at SEMGRAPH_SEARCH_MAX_QUERY_CHARS "
    "(32,768 characters by default) with a notice, never refused"
)
ROLE_HELP = "only files of this role (source, test, docs, changelog, example, i18n, generated)"


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
    merged.semantic = {repo: s for answer in answers for repo, s in answer.semantic.items()}
    found = merged.to_dict()
    audit_read(ctx.settings, who.name, "search", args.repo, found, args.q)
    return found


@router.get("/search", tags=["search"], responses=SEARCH_RESPONSES)
def search_get(
    request: Request,
    ctx: ReadCtx,
    who: LimitedCaller,
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


post_form(router, "/search", SearchRequest, run_search)
