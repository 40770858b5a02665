"""The console's HTML: escaping, the page layout and the response headers.

Pages are plain strings built by the route modules. Every value that comes from a request, a
store or a repository goes through :func:`esc` (text and attribute values, quotes included)
or :func:`url` (query strings); nothing is ever put into a ``<script>``, a ``style``
attribute or an event handler, and the Content-Security-Policy forbids them anyway: scripts
and styles load only from this server's ``/console/static/``.
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from urllib.parse import urlencode

from fastapi.responses import HTMLResponse

from semgraph.web.console.session import Caller

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # no-referrer makes a POST's Origin "null"
    "Cache-Control": "no-store",
}
NAV = (
    ("/console/queue", "Queue"),
    ("/console/workers", "Workers"),
    ("/console/repos", "Repositories"),
    ("/console/check", "Check"),
    ("/console/charts", "Charts"),
    ("/console/search", "Search"),
)


def esc(value: object) -> str:
    """Text or an attribute value, escaped (``&<>"'``)."""
    return html.escape("" if value is None else str(value), quote=True)


def url(path: str, params: Mapping[str, object | None] | None = None) -> str:
    """``path`` with its query string (empty values left out), escaped for an attribute."""
    kept = {k: str(v) for k, v in (params or {}).items() if v is not None and str(v) != ""}
    return esc(path + ("?" + urlencode(kept) if kept else ""))


def when(stamp: float | None) -> str:
    if not stamp:
        return "—"
    return datetime.fromtimestamp(float(stamp), UTC).strftime("%Y-%m-%d %H:%M:%S")


def age(stamp: float | None, now: float | None = None) -> str:
    if not stamp:
        return "—"
    seconds = max(0.0, (time.time() if now is None else now) - float(stamp))
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def short(commit: object) -> str:
    return esc(str(commit)[:12]) if commit else "—"


def table(headers: Iterable[str], rows: Iterable[Iterable[str]], *, caption: str = "") -> str:
    """A table of already-escaped cells."""
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def hidden(name: str, value: object) -> str:
    return f'<input type="hidden" name="{esc(name)}" value="{esc(value)}">'


def csrf_field(caller: Caller) -> str:
    return hidden("csrf", caller.csrf) if caller.csrf else ""


def _nav(caller: Caller, current: str) -> str:
    links = "".join(
        f'<li><a href="{href}"'
        + (' aria-current="page"' if href == current else "")
        + f">{esc(label)}</a></li>"
        for href, label in NAV
    )
    who = esc(caller.principal.name)
    scopes = esc(", ".join(sorted(caller.principal.scopes)))
    out = ""
    if caller.via == "session":
        out = (
            '<form method="post" action="/console/logout" class="inline">'
            f'{csrf_field(caller)}<button type="submit">Log out</button></form>'
        )
    return (
        '<nav aria-label="Main"><a class="brand" href="/">semgraph</a>'
        f'<ul>{links}</ul><span class="who">{who} ({scopes})</span>{out}</nav>'
    )


def page(
    title: str,
    body: str,
    caller: Caller | None,
    *,
    current: str = "",
    fresh: str = "",
    status: int = 200,
) -> HTMLResponse:
    """A whole page: ``body`` and ``fresh`` are already-escaped HTML."""
    nav = _nav(caller, current) if caller is not None else ""
    text = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)} · semgraph</title>"
        '<link rel="stylesheet" href="/console/static/console.css">'
        '<script src="/console/static/console.js" defer></script></head><body>'
        '<a class="skip" href="#main">Skip to content</a>'
        f"<header>{nav}</header>"
        f'<main id="main"><h1>{esc(title)}</h1>{fresh}{body}</main></body></html>'
    )
    return HTMLResponse(text, status_code=status, headers=HEADERS)


def message(title: str, text: str, caller: Caller | None, status: int) -> HTMLResponse:
    return page(title, f'<p role="alert">{esc(text)}</p>', caller, status=status)


def pager(
    path: str, params: Mapping[str, object | None], offset: int, limit: int, total: int
) -> str:
    """Previous/next links of a paged list, and where in it the page is."""
    parts = []
    if offset > 0:
        prev = {**params, "offset": max(0, offset - limit)}
        parts.append(f'<a rel="prev" href="{url(path, prev)}">Previous</a>')
    end = min(offset + limit, total)
    parts.append(f"<span>{offset + 1 if total else 0}&#8211;{end} of {total}</span>")
    if end < total:
        parts.append(f'<a rel="next" href="{url(path, {**params, "offset": end})}">Next</a>')
    return '<nav class="pager" aria-label="Pages">' + " ".join(parts) + "</nav>"


def link(href: str, text: object, **attrs: str) -> str:
    """``<a>`` to ``href`` (already escaped: :func:`url`) with ``text`` escaped."""
    extra = "".join(f' {k}="{esc(v)}"' for k, v in attrs.items())
    return f'<a href="{href}"{extra}>{esc(text)}</a>'


def sym_url(repo: object, name: object) -> str:
    return url("/console/symbol", {"repo": repo, "name": name})
