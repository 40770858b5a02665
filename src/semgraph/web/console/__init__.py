"""The web console: server-rendered pages for the people who run and use
semgraph, at ``/`` on the API port, behind the API's tokens and scopes.

:func:`mount` adds the console's routes to the application: the log-in and log-out pages
and the static assets here, the queue pages (:mod:`.queue_pages`), the repository, check and
chart pages (:mod:`.repo_pages`), the search and code pages (:mod:`.code_pages`) and the call
graph (:mod:`.graphview`). Who a request is and what it may do: :mod:`.session`. Every asset
ships in the package (``static/``); nothing loads from elsewhere.
"""

from __future__ import annotations

import logging
import secrets
import time
from pathlib import Path
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from semgraph.logs import event
from semgraph.mcp.backend import Backend
from semgraph.mcp.tokens import TokenCounter
from semgraph.mcp.tools import Tools
from semgraph.web.console import (
    code_pages,
    graphview,
    job_pages,
    queue_pages,
    repo_pages,
    symbol_pages,
)
from semgraph.web.console.markup import HEADERS, esc, hidden, message, page
from semgraph.web.console.session import (
    LOGIN_COOKIE,
    SESSION_COOKIE,
    SESSION_TTL_S,
    LoginRequired,
    Refused,
    Sessions,
    acting_session,
    first,
    identify,
    read_form,
    same_site,
    sessions_of,
)
from semgraph.web.context import WebContext, context
from semgraph.web.tokens import MAX_TOKEN_CHARS

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"
ASSETS = {"console.css": "text/css; charset=utf-8", "console.js": "text/javascript; charset=utf-8"}


def _safe_next(value: str) -> str:
    """Only a path of this console (never another site: no ``//`` or scheme)."""
    if value.startswith("/console/") and "//" not in value and "\\" not in value:
        return value[:2000]
    return "/console/queue"


def _login_form(nxt: str, csrf: str, error: str = "") -> str:
    alert = f'<p role="alert" class="alert">{esc(error)}</p>' if error else ""
    return (
        f"{alert}<p>Paste an API token (the same token the HTTP API takes).</p>"
        '<form method="post" action="/console/login" class="login">'
        f"{hidden('csrf', csrf)}{hidden('next', nxt)}"
        '<label for="token">Token</label> '
        '<input id="token" name="token" type="password" autocomplete="off" required '
        f'maxlength="{MAX_TOKEN_CHARS}"> '
        '<button type="submit">Log in</button></form>'
    )


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def login_page(request: Request, error: str = "", status: int = 200) -> HTMLResponse:
    csrf = secrets.token_urlsafe(24)
    nxt = _safe_next(request.query_params.get("next", ""))
    response = page("Log in", _login_form(nxt, csrf, error), None, status=status)
    response.set_cookie(
        LOGIN_COOKIE,
        csrf,
        httponly=True,
        secure=_secure(request),
        samesite="strict",
        path="/console/login",
    )
    return response


async def login(request: Request) -> Response:
    if not same_site(request):
        return message("Log in", "a cross-site form post is refused", None, 403)
    try:
        form = await read_form(request)
    except Refused as exc:
        return message("Log in", exc.message, None, exc.status)
    given = first(form, "csrf")
    if not given or given != request.cookies.get(LOGIN_COOKIE):
        return login_page(request, "The form expired: try again.", 403)
    ctx: WebContext = context(request)
    token = first(form, "token").strip()
    found = ctx.tokens.lookup(token) if 0 < len(token) <= MAX_TOKEN_CHARS else None
    if found is None or "read" not in found.scopes:
        event(log, logging.WARNING, "console_login_failed", "a console log-in was refused")
        return login_page(request, "Unknown or expired token, or it has no read scope.", 401)
    sid, _ = sessions_of(request).create(token, now=time.time())
    request.state.principal = found
    event(log, logging.INFO, "console_login", f"{found.name} logged in", who=found.name)
    response = RedirectResponse(_safe_next(first(form, "next")), status_code=303, headers=HEADERS)
    response.set_cookie(
        SESSION_COOKIE,
        sid,
        max_age=int(SESSION_TTL_S),
        httponly=True,
        secure=_secure(request),
        samesite="strict",
        path="/",
    )
    response.delete_cookie(LOGIN_COOKIE, path="/console/login")
    return response


async def logout(request: Request) -> Response:
    caller = await acting_session(request)
    sessions_of(request).drop(request.cookies.get(SESSION_COOKIE, ""))
    event(log, logging.INFO, "console_logout", f"{caller.principal.name} logged out")
    response = RedirectResponse("/console/login", status_code=303, headers=HEADERS)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


def login_get(request: Request) -> HTMLResponse:
    return login_page(request)


def home(request: Request) -> Response:
    identify(request)
    return RedirectResponse("/console/queue", status_code=303, headers=HEADERS)


def asset(name: str) -> Response:
    kind = ASSETS.get(name)
    if kind is None:
        return Response("not found", status_code=404, media_type="text/plain")
    body = (STATIC / name).read_bytes()
    return Response(
        body,
        media_type=kind,
        headers={
            "Cache-Control": "max-age=300",
            **{k: v for k, v in HEADERS.items() if k != "Cache-Control"},
        },
    )


def mount(app: FastAPI, ctx: WebContext) -> None:
    """Add the console to ``app`` (its routes, its sessions and its tools backend)."""
    app.state.console_sessions = Sessions()
    backend = Backend(ctx.settings, ctx.graph, ctx.search, ctx.store, TokenCounter(ctx.settings))
    app.state.console_tools = Tools(backend)

    async def login_required(request: Request, exc: Exception) -> Response:
        nxt = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        target = "/console/login?next=" + quote(_safe_next(nxt), safe="")
        return RedirectResponse(target, status_code=303, headers=HEADERS)

    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Refused)
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else {}
        answer = message(
            "Refused" if exc.status in (401, 403) else "Bad request", exc.message, None, exc.status
        )
        answer.headers.update(headers)
        return answer

    app.add_exception_handler(LoginRequired, login_required)
    app.add_exception_handler(Refused, refused)
    app.add_api_route("/", home, methods=["GET"], include_in_schema=False)
    app.add_api_route("/console/login", login_get, methods=["GET"], include_in_schema=False)
    app.add_api_route("/console/login", login, methods=["POST"], include_in_schema=False)
    app.add_api_route("/console/logout", logout, methods=["POST"], include_in_schema=False)
    app.add_api_route("/console/static/{name}", asset, methods=["GET"], include_in_schema=False)
    for module in (queue_pages, job_pages, repo_pages, code_pages, symbol_pages, graphview):
        app.include_router(module.router)
