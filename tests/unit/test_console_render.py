"""The console's pure parts: escaping, highlighting, search marks, charts, the call graph's
bounds, sessions and the same-site rule, with hostile and oversized input."""

from __future__ import annotations

import re
from typing import Any

import pytest
from starlette.requests import Request

from semgraph.web.console import charts, graphview, highlight, login_page
from semgraph.web.console.code_pages import mark
from semgraph.web.console.markup import esc, link, url
from semgraph.web.console.session import MAX_SESSIONS, Sessions, same_site

HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "' onmouseover='alert(1)",
    "javascript:alert(1)",
    "\x00\x1f\u202e",
    "&lt;already&gt;",
]
_TAG = re.compile(r"<(?!/?(span|a|mark)\b)[a-z]", re.I)


def test_escaping_leaves_no_markup() -> None:
    for text in HOSTILE:
        out = esc(text)
        assert "<" not in out and ">" not in out and '"' not in out and "'" not in out
        assert link(url("/console/file", {"path": text}), text).startswith('<a href="/console/')
        assert "javascript:" not in url("/x", {"p": text}).split("?")[0]


@pytest.mark.parametrize("language", ["python", "javascript", "go", None, "no-such-language"])
def test_highlighted_lines_are_escaped_and_one_per_line(language: str | None) -> None:
    code = "\n".join(
        [
            'x = "<script>alert(1)</script>"',
            "/* <img src=x onerror=alert(2)> */",
            '"""a string',
            'over two lines <b>"""',
            "call_me()",
            "",
        ]
    )
    links = {(5, "call_me"): "/console/file?x=1"}
    lines = highlight.lines(code, "f.py", language, 1, lambda n, name: links.get((n, name)))
    assert len(lines) == code.count("\n") + 1
    joined = "".join(lines)
    assert "<script" not in joined and "<img" not in joined and "<b>" not in joined
    assert not _TAG.search(joined)
    assert "&lt;script&gt;" in joined
    if language == "python":
        assert 'href="/console/file?x=1"' in lines[4]


def test_highlighting_an_oversized_line_is_cut() -> None:
    lines = highlight.lines("a" * 100_000, "big.txt", None, 1, lambda n, name: None)
    assert len(lines) == 1 and len(lines[0]) < 10_000


def test_mark_highlights_query_words_and_escapes_the_rest() -> None:
    out = mark("def Compute(<x>): compute", "compute <script>")
    assert out.count("<mark>") == 2 and "&lt;x&gt;" in out and "<script" not in out
    assert mark("a+b", "(((") == "a+b"  # regex characters in a query are literal
    assert "<mark>" not in mark("x" * 1000, "y" * 5000)


def test_charts_rebuild_depth_and_timings() -> None:
    rows: list[dict[str, Any]] = [
        {"created_at": 0.0, "claimed_at": 10.0, "finished_at": 40.0, "status": "succeeded"},
        {"created_at": 5.0, "claimed_at": None, "finished_at": None, "status": "pending"},
        {"created_at": 50.0, "claimed_at": 55.0, "finished_at": None, "status": "running"},
    ]
    depth = charts.depth_series(rows, [1.0, 20.0, 60.0])
    assert depth == {"pending": [1.0, 1.0, 1.0], "running": [0.0, 1.0, 1.0]}
    timing = charts.timing_series(rows, [0.0, 30.0], 30.0)
    assert timing["wait"]["p50"] == [10.0, 5.0] and timing["duration"]["p50"] == [30.0, 0.0]
    svg = charts.render(rows, now=100.0, hours=1)
    assert svg.count("<svg") == 3 and "style=" not in svg


def test_the_graph_is_capped_and_says_so() -> None:
    target = {"qualified_name": "m.target", "repo": "r"}
    callers = [
        {
            "depth": 1,
            "qualified_name": f"m.c{i:04d}",
            "repo": "r",
            "tier": "resolved",
            "via": "m.target",
        }
        for i in range(500)
    ]
    svg, drawn, cut = graphview.draw(target, callers, [], 1)
    assert drawn == graphview.PER_COLUMN + 1 and cut == 500 - graphview.PER_COLUMN
    assert svg.count("<a ") == drawn and "style=" not in svg
    hostile = [{**callers[0], "qualified_name": '"><script>alert(1)</script>'}]
    svg, _, _ = graphview.draw(target, hostile, [], 1)
    assert "<script" not in svg


def test_sessions_expire_and_stay_bounded() -> None:
    sessions = Sessions()
    sid, made = sessions.create("token-aaaaaaaaaaaaaaaa", now=0.0)
    assert sessions.get(sid, now=1.0) is made and made.csrf and made.csrf != sid
    assert sessions.get(sid, now=made.expires_at + 1) is None
    assert sessions.get("x" * 1000, now=0.0) is None and sessions.get("", now=0.0) is None
    for i in range(MAX_SESSIONS + 5):
        sessions.create(f"t{i}", now=float(i))
    assert len(sessions._by_id) <= MAX_SESSIONS


def _request(headers: dict[str, str], scheme: str = "http") -> Request:
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    scope = {
        "type": "http",
        "method": "POST",
        "scheme": scheme,
        "path": "/console/jobs/bulk",
        "headers": raw,
        "server": ("127.0.0.1", 8080),
    }
    return Request(scope)


def test_same_site_rule() -> None:
    host = {"host": "127.0.0.1:8080"}
    assert same_site(_request(host))  # a client that sends neither header (curl, tests)
    assert same_site(_request({**host, "origin": "http://127.0.0.1:8080"}))
    assert same_site(_request({**host, "sec-fetch-site": "same-origin"}))
    assert not same_site(_request({**host, "origin": "http://evil.example"}))
    assert not same_site(_request({**host, "origin": "null"}))
    assert not same_site(_request({**host, "sec-fetch-site": "cross-site"}))
    assert not same_site(_request({**host, "sec-fetch-site": "same-site"}))
    assert not same_site(_request({**host, "origin": "https://127.0.0.1:8080"}))


def test_the_log_in_cookie_is_secure_over_tls() -> None:
    for scheme, secure in (("https", True), ("http", False)):
        request = _request({"host": "h"}, scheme)
        request.scope.update(method="GET", path="/console/login", query_string=b"next=//evil")
        response = login_page(request)
        cookie = response.headers["set-cookie"]
        assert ("Secure" in cookie) is secure and "HttpOnly" in cookie
        assert "SameSite=strict" in cookie
        assert 'name="next" value="/console/queue"' in bytes(response.body).decode()
