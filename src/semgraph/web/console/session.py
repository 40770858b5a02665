"""Who a console request is, by the API's own rules (:mod:`semgraph.web.context`), and the
console's log-in sessions and CSRF tokens.

A request is a bearer token in the ``Authorization`` header (exactly as on the API), or a
session cookie made by the log-in page from a pasted token: the cookie holds a random
session id, never the token; the server keeps the token for the session (in this process's
memory, at most :data:`MAX_SESSIONS`, each for :data:`SESSION_TTL_S`) and looks it up in the
token table on every request, so a token removed from the tokens file or expired ends its
sessions at once. Without either, reads follow the read rule (open reads, or loopback while
no token is configured); everything else goes to the log-in page.

Actions (POST) need the ``admin`` scope, which only a configured token carries. A session's
POST must carry the session's CSRF token in the form, and any POST whose ``Origin`` or
``Sec-Fetch-Site`` names another site is refused (a cross-site form post). A bearer request
needs no CSRF token: a browser never attaches an ``Authorization`` header to a cross-site
form.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from fastapi import Request

from semgraph.config import is_loopback_host
from semgraph.web.context import WebContext, context
from semgraph.web.metrics import AUTH_FAILURES
from semgraph.web.tokens import ANONYMOUS, MAX_TOKEN_CHARS, Principal

SESSION_COOKIE = "sg_session"
LOGIN_COOKIE = "sg_login_csrf"
SESSION_TTL_S = 8 * 3600.0
MAX_SESSIONS = 10_000
MAX_FORM_BYTES = 512 * 1024


class LoginRequired(Exception):
    """No credentials: the log-in page, then back to ``next``."""


class Refused(Exception):
    """Known, but not allowed (403), or a wrong token (401)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Session:
    token: str
    csrf: str
    expires_at: float


class Sessions:
    """The live log-in sessions of this process (id -> token, CSRF token, expiry)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: dict[str, Session] = {}

    def create(self, token: str, *, now: float) -> tuple[str, Session]:
        sid = secrets.token_urlsafe(32)
        made = Session(token, secrets.token_urlsafe(32), now + SESSION_TTL_S)
        with self._lock:
            if len(self._by_id) >= MAX_SESSIONS:
                self._expire(now)
            if len(self._by_id) >= MAX_SESSIONS:  # still full: the oldest goes
                oldest = min(self._by_id, key=lambda k: self._by_id[k].expires_at)
                del self._by_id[oldest]
            self._by_id[sid] = made
        return sid, made

    def _expire(self, now: float) -> None:
        for key in [k for k, s in self._by_id.items() if s.expires_at <= now]:
            del self._by_id[key]

    def get(self, sid: str, *, now: float) -> Session | None:
        if not sid or len(sid) > 100:
            return None
        with self._lock:
            found = self._by_id.get(sid)
            if found is not None and found.expires_at <= now:
                del self._by_id[sid]
                return None
            return found

    def drop(self, sid: str) -> None:
        with self._lock:
            self._by_id.pop(sid, None)


@dataclass(frozen=True)
class Caller:
    """Who a console request is: its principal, the session's CSRF token (None without a
    session) and how it authenticated (``bearer``, ``session`` or ``anonymous``)."""

    principal: Principal
    csrf: str | None
    via: str

    @property
    def can_act(self) -> bool:
        return self.via != "anonymous" and "admin" in self.principal.scopes


def sessions_of(request: Request) -> Sessions:
    found: Sessions = request.app.state.console_sessions
    return found


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise Refused(401, "missing, unknown or expired bearer token")
    return value.strip()


def _from_token(ctx: WebContext, token: str) -> Principal | None:
    if len(token) > MAX_TOKEN_CHARS:
        return None
    return ctx.tokens.lookup(token)


def identify(request: Request) -> Caller:
    """The caller of a console page (the read rule), or :class:`LoginRequired` /
    :class:`Refused`. Leaves the principal in ``request.state`` for the audit log."""
    ctx = context(request)
    token = _bearer(request)
    caller: Caller | None = None
    if token is not None:
        found = _from_token(ctx, token)
        if found is None:
            AUTH_FAILURES.labels(reason="unauthorized").inc()
            raise Refused(401, "missing, unknown or expired bearer token")
        caller = Caller(found, None, "bearer")
    else:
        sid = request.cookies.get(SESSION_COOKIE, "")
        session = sessions_of(request).get(sid, now=time.time()) if sid else None
        if session is not None:
            found = _from_token(ctx, session.token)
            if found is None:  # the token was revoked or expired: so is the session
                sessions_of(request).drop(sid)
                raise LoginRequired
            caller = Caller(found, session.csrf, "session")
    if caller is None:
        caller = Caller(_anonymous(request, ctx), None, "anonymous")
    if "read" not in caller.principal.scopes:
        AUTH_FAILURES.labels(reason="forbidden").inc()
        raise Refused(403, "this token has no read scope")
    request.state.principal = caller.principal
    return caller


def _anonymous(request: Request, ctx: WebContext) -> Principal:
    if ctx.settings.api_read_open:
        return ANONYMOUS
    if ctx.tokens.configured:
        raise LoginRequired
    server = request.scope.get("server")
    if server and is_loopback_host(str(server[0])):
        return ANONYMOUS
    raise Refused(403, "reads without a token are served only on a loopback address")


def same_site(request: Request) -> bool:
    """False for a request a browser marks as coming from another site."""
    if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return False
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    parts = urlsplit(origin)
    host = request.headers.get("host", "")
    return parts.netloc == host and parts.scheme == request.url.scheme


async def read_form(request: Request) -> dict[str, list[str]]:
    """An ``application/x-www-form-urlencoded`` body, refusing more than
    :data:`MAX_FORM_BYTES`."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise Refused(415, "a console form is application/x-www-form-urlencoded")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise Refused(413, f"a form is at most {MAX_FORM_BYTES} bytes")
    try:
        return parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=20_000)
    except (UnicodeDecodeError, ValueError) as exc:
        raise Refused(400, "the form is not valid UTF-8 form data") from exc


def first(form: dict[str, list[str]], name: str, default: str = "") -> str:
    values = form.get(name)
    return values[0] if values else default


async def acting(request: Request) -> tuple[Caller, dict[str, list[str]]]:
    """The caller of an action and its form: the admin scope, a same-site request and, for
    a session, the session's CSRF token."""
    caller = identify(request)
    if not same_site(request):
        AUTH_FAILURES.labels(reason="forbidden").inc()
        raise Refused(403, "a cross-site form post is refused")
    form = await read_form(request)
    if not caller.can_act:
        AUTH_FAILURES.labels(reason="forbidden").inc()
        raise Refused(403, "this token has no admin scope: it can read, not act")
    if caller.via == "session":
        given = first(form, "csrf")
        if caller.csrf is None or not hmac.compare_digest(given.encode(), caller.csrf.encode()):
            AUTH_FAILURES.labels(reason="forbidden").inc()
            raise Refused(403, "the form's CSRF token is missing or wrong: reload the page")
    return caller, form


async def acting_session(request: Request) -> Caller:
    """The caller of a log-out: a session, a same-site request and its CSRF token."""
    caller = identify(request)
    if not same_site(request):
        raise Refused(403, "a cross-site form post is refused")
    form = await read_form(request)
    given = first(form, "csrf")
    if caller.csrf is None or not hmac.compare_digest(given.encode(), caller.csrf.encode()):
        raise Refused(403, "the form's CSRF token is missing or wrong: reload the page")
    return caller
