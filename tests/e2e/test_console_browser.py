"""The web console in a real browser (issue 29): Debian's chromium driven by Playwright
against a real ``semgraph serve``, a real worker and the real stores. One server, one worker
and one browser for the module (:mod:`tests.e2e.console_world`); each test opens its own
browser context (its own cookies) and sets up the jobs it acts on."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.indexer.request import ReindexArgs
from semgraph.indexer.sources import normalize_source, repo_key_for
from semgraph.queue.store import JobStore
from tests.e2e.console_world import (
    ADMIN,
    LIMITED,
    READER,
    World,
    axe_script,
    build_world,
    until,
)
from tests.e2e.test_mcp_stdio import index
from tests.repos import make_repo

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def world(
    graph_session: Graph, es_session: Elasticsearch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    graph_session.query("test reset", "MATCH (n) DETACH DELETE n")
    names = [n for n in es_session.indices.get(index="*") if not n.startswith(".")]
    if names:
        es_session.indices.delete(index=",".join(names), ignore_unavailable=True)
    explicit = os.environ.get("SEMGRAPH_CONSOLE_SCREENSHOTS")
    shots = Path(explicit) if explicit else tmp_path_factory.mktemp("console-screens")
    shots.mkdir(parents=True, exist_ok=True)
    yield from build_world(tmp_path_factory.mktemp("console"), shots)


def _state(graph: Graph, settings: Settings, job_id: str) -> str:
    job = JobStore(graph, settings).get(job_id)
    return "" if job is None else job.status.value


def test_login_search_open_follow_call_callers_and_graph(world: World) -> None:
    ctx = world.context()
    page, watch = world.login(ctx, READER)
    cookie = next(c for c in ctx.cookies() if c["name"] == "sg_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and not cookie["secure"]
    assert ADMIN not in str(ctx.cookies()) and READER not in str(ctx.cookies())
    world.shot(page, "logged-in-queue")
    page.click("nav a:text('Search')")
    page.fill("input[name=q]", "compute checksum of payload")
    page.fill("input[name=repo]", world.repo_a)
    page.click("form[role=search] button[type=submit]")
    hits = page.locator("ol.hits li.hit")
    assert hits.count() >= 1 and "app/models.py" in hits.first.inner_text()
    assert page.locator("ol.hits mark").count() >= 1  # the query's words highlighted
    world.shot(page, "search")
    page.click("ol.hits li.hit >> nth=0 >> a >> nth=0")  # open the result: the file view
    page.wait_for_selector("pre.code")
    assert "app/models.py" in page.title() and page.locator("nav.outline li").count() >= 4
    assert page.locator("pre.code .line").count() >= 20  # numbered lines
    assert page.locator("pre.code span.k").count() >= 1  # highlighted keywords
    world.shot(page, "file-view")
    # the call in Repository.save goes to compute_checksum's definition
    page.click("#L22 a.call:text('compute_checksum')")
    page.wait_for_url(re.compile(r".*#L6$"))
    assert "def compute_checksum" in page.locator("#L6").inner_text()
    world.shot(page, "definition")
    # ... and back to its callers
    page.click("nav.outline a[href*='name=app.models.compute_checksum']")
    callers = page.locator("h2#callers + table tbody tr")
    assert callers.count() == 2
    assert {"app.models.Repository.save", "app.service.fingerprint"} <= set(
        callers.locator("td:first-child").all_inner_texts()
    )
    world.shot(page, "callers")
    page.click("a:text('call graph')")
    page.wait_for_selector("svg#callgraph a.node")
    assert page.locator("svg#callgraph a.node").count() == 3  # the target and its 2 callers
    assert "nodes drawn" in page.locator(".graph-note").inner_text()
    before = page.get_attribute("svg#callgraph", "viewBox")
    page.click("[data-zoom=in]")  # console.js ran (the CSP allowed our own script)
    assert page.get_attribute("svg#callgraph", "viewBox") != before
    world.shot(page, "graph")
    page.click("svg#callgraph a.node.caller >> nth=0")
    page.wait_for_url(re.compile(r".*/console/symbol\?.*"))
    # keyboard: the first Tab reaches the skip link, which moves focus to the content
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Enter")
    assert page.url.endswith("#main")
    assert watch.dialogs == [] and watch.foreign == []
    page.click("nav form button:text('Log out')")
    page.goto(f"{world.base}/console/queue")
    assert "/console/login" in page.url
    ctx.close()


def test_requeue_a_failed_job_and_see_it_succeed(
    world: World, graph_session: Graph, settings: Settings
) -> None:
    later = world.tmp / "later-repo"
    source = str(later)
    key = repo_key_for(source)
    store = JobStore(graph_session, settings)
    args = ReindexArgs(source=source, ref=None, commit=None).to_json()
    job_id = store.enqueue(
        key, now=time.time(), kind="reindex", args=args, source=normalize_source(source)
    ).job_id
    until(lambda: _state(graph_session, settings, job_id) == "failed", "the job to fail")
    make_repo(later, {"lib.py": "def later():\n    return 1\n"})  # now it can succeed
    ctx = world.context()
    page, watch = world.login(ctx, ADMIN)
    page.goto(f"{world.base}/console/queue?status=failed&repo={key}")
    assert page.locator("table tbody tr").count() == 1
    page.click(f"a[href='/console/jobs/{job_id}']")
    world.shot(page, "failed-job")
    page.click("button[value=requeue]")
    assert "requeue 1 jobs" in page.locator("p.confirm").inner_text()
    world.shot(page, "requeue-confirm")
    page.click("button[name=confirm]")
    assert page.locator("p[role=status] strong.n").inner_text() == "1"
    until(lambda: _state(graph_session, settings, job_id) == "succeeded", "the job to succeed")
    page.goto(f"{world.base}/console/jobs/{job_id}")
    assert "succeeded" in page.locator("dl").inner_text()
    assert "succeeded" in page.locator("h2:text('Runs') + table").inner_text()
    world.shot(page, "requeued-job-succeeded")
    assert watch.dialogs == [] and watch.foreign == []
    ctx.close()


def test_bulk_abandon_by_filter(world: World, graph_session: Graph, settings: Settings) -> None:
    store = JobStore(graph_session, settings)
    kind = "console-bulk-test"  # no worker runs this kind: the jobs stay pending
    ids = [store.enqueue(f"bulk-{i}", now=time.time(), kind=kind).job_id for i in range(7)]
    ctx = world.context()
    page, _ = world.login(ctx, ADMIN)
    page.goto(f"{world.base}/console/queue?kind={kind}&status=pending")
    assert "7 jobs match" in page.locator("caption").inner_text()
    page.select_option("select[name=action]", "abandon")
    page.click("button[name=scope][value=filter]")
    assert "abandon 7 jobs" in page.locator("p.confirm").inner_text()
    world.shot(page, "bulk-confirm")
    page.click("button[name=confirm]")
    assert page.locator("p[role=status] strong.n").inner_text() == "7"
    assert {_state(graph_session, settings, i) for i in ids} == {"abandoned"}
    world.shot(page, "bulk-done")
    ctx.close()


def test_remove_a_repository(world: World, graph_session: Graph, settings: Settings) -> None:
    tiny = make_repo(world.tmp / "to-remove", {"m.py": "def gone():\n    return 0\n"})
    key = index(tiny)["run"]["repo"]
    ctx = world.context()
    page, _ = world.login(ctx, ADMIN)
    page.goto(f"{world.base}/console/repos")
    page.click(f"a:text('{key}')")
    page.click("button:text('Remove this repository')")
    world.shot(page, "remove-confirm")
    page.click("button[name=confirm]")
    assert "is queued as job" in page.locator("p[role=status]").inner_text()

    def gone() -> bool:
        page.goto(f"{world.base}/console/repos")
        return page.locator(f"a:text('{key}')").count() == 0

    until(gone, "the repository to be removed")
    world.shot(page, "removed")
    ctx.close()


def test_a_hostile_repository_executes_nothing(
    world: World, graph_session: Graph, settings: Settings
) -> None:
    store = JobStore(graph_session, settings)
    store.enqueue(
        world.repo_b,
        now=time.time(),
        kind="console-hostile",
        args={"note": "<script>alert('job')</script>"},
    )
    ctx = world.context()
    page, watch = world.login(ctx, ADMIN)
    b = world.repo_b
    pages = [
        "/console/queue",
        f"/console/repos/{b}",
        "/console/repos",
        f"/console/search?q=alert+script+onerror&repo={b}",
        f"/console/file?repo={b}&path=x%3Csvg%20onload%3Dalert(1)%3E.py",
        f"/console/file?repo={b}&path=javascript%3Aalert(4).py",
        f"/console/file?repo={b}&path=q%22onmouseover%3Dalert(6)%20x%3D%22.js",
        f"/console/symbol?repo={b}&name=on_error_img",
        f"/console/symbol?repo={b}&name=xssHandler",
        f"/console/graph?repo={b}&name=xssHandler&depth=2",
        "/console/check",
        "/console/charts",
    ]
    for n, path in enumerate(pages):
        page.goto(world.base + path)
        assert page.locator("script").count() == 1, path  # console.js only
        assert page.locator("[onload], [onerror], [onmouseover]").count() == 0, path
        assert page.locator("[href^='javascript:' i], [src^='javascript:' i]").count() == 0
        for link in page.locator("a").all():
            href = link.get_attribute("href") or ""
            assert href.startswith(("/", "#", "?")), (path, href)
        if n in (3, 4, 6):
            world.shot(page, f"hostile-{n}")
    page.goto(world.base + pages[4])
    assert "<script>alert(3)</script>" in page.locator("pre.code").inner_text()
    assert watch.dialogs == [] and watch.foreign == []
    ctx.close()


def test_a_read_only_token_cannot_act_and_cross_site_posts_are_refused(
    world: World, graph_session: Graph, settings: Settings
) -> None:
    store = JobStore(graph_session, settings)
    job_id = store.enqueue("guarded-repo", now=time.time(), kind="console-guarded").job_id
    ctx = world.context()
    page, _ = world.login(ctx, READER)
    page.goto(f"{world.base}/console/jobs/{job_id}")
    assert page.locator("button[value=abandon]").count() == 0  # no action offered
    csrf = page.get_attribute("input[name=csrf]", "value")  # the log-out form's token
    form = {"csrf": csrf or "", "action": "abandon", "scope": "selected", "ids": job_id}
    posted = page.request.post(f"{world.base}/console/jobs/bulk", form={**form, "confirm": "yes"})
    assert posted.status == 403 and "admin scope" in posted.text()
    ctx.close()
    admin = world.context()
    page, _ = world.login(admin, ADMIN)
    no_csrf = page.request.post(
        f"{world.base}/console/jobs/bulk", form={**form, "csrf": "", "confirm": "yes"}
    )
    assert no_csrf.status == 403 and "CSRF" in no_csrf.text()
    page.goto(f"{world.base}/console/jobs/{job_id}")
    good = page.get_attribute("input[name=csrf]", "value") or ""
    foreign = page.request.post(
        f"{world.base}/console/jobs/bulk",
        form={**form, "csrf": good, "confirm": "yes"},
        headers={"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
    )
    assert foreign.status == 403 and "cross-site" in foreign.text()
    # a real cross-site page posting the form: the browser sends no cookie (SameSite=Strict)
    # and Origin http://evil.example; the console refuses either way
    attack = (
        '<html lang="en"><title>x</title>'
        f'<form method="post" action="{world.base}/console/jobs/bulk">'
        '<input name="action" value="abandon"><input name="scope" value="selected">'
        f'<input name="ids" value="{job_id}"><input name="confirm" value="yes">'
        f'<input name="csrf" value="{good}"><button id="go">go</button></form></html>'
    )
    page.route(
        "http://evil.example/**",
        lambda route: route.fulfill(body=attack, content_type="text/html"),
    )
    page.goto("http://evil.example/attack")
    page.click("#go")
    page.wait_for_load_state()
    assert "0 skipped" not in page.content()  # no result page: refused or sent to log-in
    world.shot(page, "cross-site-refused")
    assert _state(graph_session, settings, job_id) == "pending"
    admin.close()


def test_a_limited_token_never_sees_another_repository(world: World) -> None:
    ctx = world.context()
    page, watch = world.login(ctx, LIMITED)
    a, b = world.repo_a, world.repo_b
    page.goto(f"{world.base}/console/repos")
    listed = page.locator("main table").inner_text()
    assert a in listed and b not in listed
    assert b not in page.locator("aside.fresh").inner_text()
    page.goto(f"{world.base}/console/search?q=alert+script")
    assert b not in page.locator("main").inner_text()
    page.goto(f"{world.base}/console/search?q=alert&repo={b}")
    assert "onerror" not in page.content() and b not in page.locator("ol.hits").all_inner_texts()
    page.goto(f"{world.base}/console/graph?repo={b}&name=xssHandler")
    assert page.locator("svg#callgraph").count() == 0
    page.goto(f"{world.base}/console/graph?name=xssHandler")
    assert page.locator("svg#callgraph").count() == 0
    page.goto(f"{world.base}/console/symbol?name=on_error_img")
    assert "no such symbol" in page.locator("main").inner_text()
    response = page.goto(f"{world.base}/console/repos/{b}")
    assert response is not None and response.status == 404
    page.goto(f"{world.base}/console/queue")
    assert b not in page.locator("main table").inner_text()
    world.shot(page, "limited-queue")
    assert watch.dialogs == [] and watch.foreign == []
    ctx.close()


def test_every_page_passes_axe_without_serious_violations(world: World) -> None:
    ctx = world.context(bypass_csp=True, bearer=ADMIN)  # axe is injected as a script tag
    page = ctx.new_page()
    a = world.repo_a
    pages = [
        "/console/login",
        "/console/queue",
        "/console/workers",
        "/console/repos",
        f"/console/repos/{a}",
        "/console/check",
        "/console/charts",
        f"/console/search?q=checksum&repo={a}",
        f"/console/file?repo={a}&path=app/models.py",
        f"/console/symbol?repo={a}&name=app.models.compute_checksum",
        f"/console/graph?repo={a}&name=app.models.compute_checksum&depth=2",
    ]
    found = {}
    for path in pages:
        page.goto(world.base + path)
        page.add_script_tag(path=str(axe_script()))
        bad = page.evaluate(
            "async () => (await axe.run()).violations"
            ".filter(v => v.impact === 'serious' || v.impact === 'critical')"
            ".map(v => v.id + ': ' + v.nodes.length)"
        )
        if bad:
            found[path] = bad
    assert found == {}
    ctx.close()


def test_a_bearer_header_works_for_pages(world: World) -> None:
    ctx = world.context(bearer=READER)
    page = ctx.new_page()
    response = page.goto(f"{world.base}/console/repos")
    assert response is not None and response.status == 200 and "/login" not in page.url
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    ctx.close()
    wrong = world.context(bearer="not-a-token-at-all-0000")
    response = wrong.new_page().goto(f"{world.base}/console/repos")
    assert response is not None and response.status == 401
    wrong.close()
