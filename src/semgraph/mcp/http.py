"""Stateless streamable HTTP for the web app: ``/mcp`` is an ordinary FastAPI route, so the
read API's bearer-token dependency guards it exactly like the other read routes; the route
hands the request to the SDK's session manager (stateless: a fresh transport per request).

The dependency leaves the caller in ``request.state.principal`` (a
:class:`~semgraph.web.tokens.Principal`):
when its ``repos`` allowlist is set, the tools answer only from repositories its
``allows(key)`` accepts, and one outside it is answered like an unknown one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

import elasticsearch
from fastapi import Depends, Request
from fastapi.responses import Response
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send

from semgraph.audit import CALLER
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.mcp.backend import Allow, Backend
from semgraph.mcp.server import ALLOWED_REPOS, build_server
from semgraph.mcp.tokens import TokenCounter
from semgraph.mcp.tools import Tools
from semgraph.queue.store import JobStore

MCP_METHODS = ["GET", "POST", "DELETE"]


def allowed_repos(principal: Any) -> Allow:
    """The caller's allowlist: None when it may read every repository (``repos is None``),
    else its ``allows(repo_key)`` (keys or globs)."""
    if principal is None or getattr(principal, "repos", None) is None:
        return None
    allows: Callable[[str], bool] = principal.allows
    return allows


class _Forward(Response):
    """A response that is the MCP session manager answering the request itself."""

    def __init__(
        self,
        manager: StreamableHTTPSessionManager,
        allowed: Allow,
        caller: str | None = None,
        release: Callable[[], None] = lambda: None,
    ):
        super().__init__()
        self.manager = manager
        self.allowed = allowed
        self.caller = caller  # the token's name, for the read audit
        self.release = release  # the caller's admission (semgraph.web.read_guard)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = ALLOWED_REPOS.set(self.allowed)  # copied into the request's server task
        who = CALLER.set(self.caller)
        try:
            await self.manager.handle_request(scope, receive, send)
        finally:
            CALLER.reset(who)
            ALLOWED_REPOS.reset(token)
            self.release()


class McpHttp:
    """The MCP server of one web application."""

    def __init__(
        self, settings: Settings, graph: Graph, search: elasticsearch.Elasticsearch, store: JobStore
    ) -> None:
        backend = Backend(settings, graph, search, store, TokenCounter(settings))
        self.server = build_server(Tools(backend))
        self.server.streamable_http_app(
            stateless_http=True, json_response=True, host=settings.web_host
        )
        self.manager = self.server.session_manager

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.manager.run():
            yield

    def endpoint(
        self,
        auth: Callable[..., Any],
        admit: Callable[[Request], Callable[[], None]] = lambda _request: lambda: None,
    ) -> Callable[..., Any]:
        """The ``/mcp`` route, guarded by the ``auth`` dependency, then by ``admit`` (the
        caller's rate and concurrency limits: it raises 429, or returns the release)."""

        async def mcp_endpoint(request: Request, ctx: Any) -> Response:
            del ctx  # the dependency ran the read rule and left the caller on the request
            principal = getattr(request.state, "principal", None)
            release = admit(request)  # the caller's limits: 429 past them
            name = getattr(principal, "name", None)
            return _Forward(self.manager, allowed_repos(principal), name, release)

        # a real object, not a string: FastAPI cannot resolve a closure's name from globals
        mcp_endpoint.__annotations__["ctx"] = Annotated[Any, Depends(auth)]
        return mcp_endpoint
