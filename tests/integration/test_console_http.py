"""The console over HTTP against the real stores (no browser): the API's read rule, the
log-in page (cookie flags, CSRF, a hostile ``next``), actions that need the admin scope, the
CSRF token and a same-site request, the audit log, and malformed or oversized forms."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.queue.store import JobStore
from semgraph.web.app import create_app
from semgraph.web.fixtures import serve_in_thread

pytestmark = pytest.mark.integration
ADMIN = "console-http-admin-0123456789"
READER = "console-http-reader-0123456789"


@pytest.fixture
def base(graph: Graph, es: Elasticsearch, settings: Settings, tmp_path: Path) -> Iterator[str]:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        f'[[tokens]]\nname = "admin"\ntoken = "{ADMIN}"\nscopes = ["read", "admin"]\n\n'
        f'[[tokens]]\nname = "reader"\ntoken = "{READER}"\nscopes = ["read"]\n'
    )
    configured = settings.model_copy(update={"api_tokens_file": tokens})
    with serve_in_thread(create_app(configured, graph=graph, search=es)) as url:
        yield url


def _login(base: str, token: str) -> tuple[httpx.Client, str]:
    client = httpx.Client(base_url=base, timeout=60)
    page = client.get("/console/login", params={"next": "/console/workers"})
    assert (page.status_code == 200 and "Set-Cookie" in page.headers) or page.headers.get(
        "set-cookie"
    )
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None
    done = client.post(
        "/console/login", data={"csrf": csrf.group(1), "token": token, "next": "/console/workers"}
    )
    assert done.status_code == 303 and done.headers["location"] == "/console/workers", done.text
    cookie = done.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Secure" not in cookie
    assert token not in cookie
    session = client.get("/console/queue")
    found = re.search(r'name="csrf" value="([^"]+)"', session.text)
    assert session.status_code == 200 and found is not None
    return client, found.group(1)


def test_pages_follow_the_read_rule(base: str) -> None:
    anonymous = httpx.get(f"{base}/console/queue")
    assert anonymous.status_code == 303 and anonymous.headers["location"].startswith(
        "/console/login?next="
    )
    assert httpx.get(f"{base}/").status_code == 303
    bearer = httpx.get(f"{base}/console/queue", headers={"Authorization": f"Bearer {READER}"})
    assert bearer.status_code == 200
    csp = bearer.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp and "inline" not in csp
    assert bearer.headers["x-frame-options"] == "DENY"
    assert re.search(r"<script[^>]*>[^<]", bearer.text) is None  # no inline script
    assert ' style="' not in bearer.text and "http://" not in bearer.text
    wrong = httpx.get(f"{base}/console/queue", headers={"Authorization": "Bearer nope-nope"})
    assert wrong.status_code == 401 and "nope-nope" not in wrong.text
    basic = httpx.get(f"{base}/console/queue", headers={"Authorization": "Basic eDp5"})
    assert basic.status_code == 401
    asset = httpx.get(f"{base}/console/static/console.js")
    assert asset.status_code == 200 and asset.headers["content-type"].startswith("text/javascript")
    for bad in ("../app.py", "..%2F__init__.py", "nothing.css", "%00"):
        assert httpx.get(f"{base}/console/static/{bad}").status_code == 404


def test_log_in_refuses_bad_tokens_forms_and_foreign_next(base: str) -> None:
    with httpx.Client(base_url=base, timeout=60) as client:
        _log_in_refusals(base, client)


def _log_in_refusals(base: str, client: httpx.Client) -> None:
    page = client.get("/console/login", params={"next": "//evil.example/x"})
    assert 'value="/console/queue"' in page.text  # a foreign next is dropped
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None
    for token in ("wrong-token-000000000", "", "x" * 100_000, "<script>alert(1)</script>"):
        refused = client.post("/console/login", data={"csrf": csrf.group(1), "token": token})
        assert refused.status_code in (401, 413) and "<script>alert" not in refused.text
        page = client.get("/console/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert csrf is not None
    no_cookie = httpx.post(f"{base}/console/login", data={"csrf": csrf.group(1), "token": ADMIN})
    assert no_cookie.status_code == 403  # the log-in form's own CSRF cookie is missing
    as_json = client.post("/console/login", json={"token": ADMIN})
    assert as_json.status_code == 415
    foreign = client.post(
        "/console/login",
        data={"csrf": csrf.group(1), "token": ADMIN},
        headers={"Origin": "http://evil.example"},
    )
    assert foreign.status_code == 403


def test_actions_need_admin_csrf_and_the_same_site(
    base: str, graph: Graph, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    store = JobStore(graph, settings)
    job_id = store.enqueue("console-http-repo", now=time.time(), kind="console-test").job_id
    form = {"action": "abandon", "scope": "selected", "ids": job_id, "confirm": "yes"}
    reader, reader_csrf = _login(base, READER)
    refused = reader.post("/console/jobs/bulk", data={**form, "csrf": reader_csrf})
    assert refused.status_code == 403 and "admin scope" in refused.text
    bearer_reader = httpx.post(
        f"{base}/console/jobs/bulk", data=form, headers={"Authorization": f"Bearer {READER}"}
    )
    assert bearer_reader.status_code == 403
    admin, csrf = _login(base, ADMIN)
    assert admin.post("/console/jobs/bulk", data=form).status_code == 403  # no CSRF token
    assert admin.post("/console/jobs/bulk", data={**form, "csrf": reader_csrf}).status_code == 403
    cross = admin.post(
        "/console/jobs/bulk", data={**form, "csrf": csrf}, headers={"Sec-Fetch-Site": "cross-site"}
    )
    assert cross.status_code == 403
    huge = admin.post(
        "/console/jobs/bulk",
        content=b"ids=" + b"x" * 600_000,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert huge.status_code == 413
    assert store.get(job_id).status.value == "pending"  # type: ignore[union-attr]
    confirm = admin.post("/console/jobs/bulk", data={**form, "csrf": csrf, "confirm": ""})
    assert confirm.status_code == 200 and "Yes, abandon 1 jobs" in confirm.text
    assert store.get(job_id).status.value == "pending"  # type: ignore[union-attr]
    with caplog.at_level(logging.INFO):
        done = admin.post("/console/jobs/bulk", data={**form, "csrf": csrf})
    assert done.status_code == 200 and store.get(job_id).status.value == "abandoned"  # type: ignore[union-attr]
    audit = [r for r in caplog.records if getattr(r, "action", "") == "api_audit"]
    assert any("admin POST /console/jobs/bulk -> 200" in r.getMessage() for r in audit)
    assert any(getattr(r, "action", "") == "console_bulk" for r in caplog.records)
    # a bearer admin needs no CSRF token (a browser never sends the header cross-site)
    other = store.enqueue("console-http-repo-2", now=time.time(), kind="console-test").job_id
    bearer = httpx.post(
        f"{base}/console/jobs/bulk",
        data={**form, "ids": other},
        headers={"Authorization": f"Bearer {ADMIN}"},
    )
    assert bearer.status_code == 200 and store.get(other).status.value == "abandoned"  # type: ignore[union-attr]
    out = admin.post("/console/logout", data={"csrf": csrf})
    assert out.status_code == 303
    assert admin.get("/console/queue").status_code == 303  # the session is gone
    admin.close()
    reader.close()
