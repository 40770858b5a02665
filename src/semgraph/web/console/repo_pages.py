"""The console's repository pages: the list (state, indexed commit, freshness, last run),
one repository (record, counts, indexes, jobs, its last runs with phase times) with its
removal, the divergence check (``semgraph check``) with its repair action, and the queue
charts. Reads and actions reuse :mod:`semgraph.repos`, :mod:`semgraph.check` and
:class:`semgraph.graph.runs.RunStore`."""

from __future__ import annotations

import logging
import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from semgraph.check import check_repositories
from semgraph.graph.reader import GraphReader
from semgraph.graph.runs import RunStore
from semgraph.logs import event
from semgraph.queue import browse
from semgraph.queue.staleness import reason_line
from semgraph.repos import removal
from semgraph.repos.listing import repo_semantic, show_repository
from semgraph.search.index import SearchIndex
from semgraph.web.console import charts
from semgraph.web.console.fresh import banner, repo_freshness
from semgraph.web.console.job_pages import RUN_HEADS, run_rows
from semgraph.web.console.markup import csrf_field, esc, message, page, short, table, url, when
from semgraph.web.console.session import acting, first, identify
from semgraph.web.context import WebContext, context
from semgraph.web.scope import readable_repos

log = logging.getLogger(__name__)
router = APIRouter(include_in_schema=False)
RUNS_SHOWN = 10
MAX_LISTED = 500


def _behind(row: dict[str, Any]) -> str:
    behind = row.get("commits_behind")
    why = reason_line(row.get("stale_reason"))
    if not row.get("indexed_commit"):
        shown = "not indexed"
    elif behind is None:
        shown = "unknown" if row.get("stale") else "0"
    else:
        shown = str(behind)
    return f"{shown} ({why})" if why else shown


@router.get("/console/repos")
def repos_page(request: Request) -> HTMLResponse:
    caller = identify(request)
    ctx = context(request)
    who = caller.principal
    listed = [r for r in GraphReader(ctx.graph).repositories() if who.allows(str(r["key"]))]
    rows = []
    runs = RunStore(ctx.graph)
    for repo in listed[:MAX_LISTED]:
        key = str(repo["key"])
        fresh = repo_freshness(ctx, key)
        last = runs.list(repo=key, limit=1)
        rows.append(
            [
                f'<a href="{url("/console/repos/" + key)}">{esc(key)}</a>',
                esc(repo.get("state") or "live"),
                short(repo.get("commit")),
                esc(_behind(fresh)),
                when(repo.get("indexed_at")),
                esc(last[0].get("status")) if last else "—",
            ]
        )
    heads = ["Repository", "State", "Indexed commit", "Commits behind", "Indexed", "Last run"]
    body = table(heads, rows, caption=f"{len(listed)} repositories")
    return page("Repositories", body, caller, current="/console/repos", fresh=banner(ctx, who))


def _remove_form(csrf: str, key: str) -> str:
    return (
        f'<form method="post" action="{url("/console/repos/" + key + "/remove")}">{csrf}'
        '<button type="submit" class="danger">Remove this repository…</button></form>'
    )


def _shown(ctx: WebContext, admin: bool, key: str) -> dict[str, Any] | None:
    """What the API shows of a repository: everything (``GET /repos/KEY``) to the admin
    scope; to a reader what the read API lists (``GET /repos``: its published record)."""
    if admin:
        return show_repository(ctx.settings, ctx.graph, ctx.search, key)
    repo = GraphReader(ctx.graph).repository(key)
    if repo is None:
        return None
    live = SearchIndex(ctx.search, ctx.settings).live_index(key)
    semantic = repo_semantic(ctx.search, live, key)
    why = repo_freshness(ctx, key)["stale_reason"]
    state = repo.get("state") or "live"
    return {"state": state, "repository": repo, "semantic": semantic, "stale_reason": why}


@router.get("/console/repos/{key:path}")
def repo_page(request: Request, key: str) -> HTMLResponse:
    caller = identify(request)
    ctx = context(request)
    if not caller.principal.allows(key):
        return message("No such repository", "no repository has that key", caller, 404)
    shown = _shown(ctx, "admin" in caller.principal.scopes, key[:512])
    if shown is None:
        return message("No such repository", "no repository has that key", caller, 404)
    repo = shown.get("repository") or {}
    counts = shown.get("counts") or {}
    facts = [
        ("State", esc(shown.get("state"))),
        ("Source", esc(repo.get("url") or (shown.get("record") or {}).get("source"))),
        ("Indexed commit", short(repo.get("commit"))),
        ("Indexed at", when(repo.get("indexed_at"))),
        ("Size class", esc(shown.get("size_class"))),
        ("Live index", esc(shown.get("live_index") or "—")),
        ("Semantic", esc(_semantic(shown.get("semantic")))),
        ("Why stale", esc(reason_line(shown.get("stale_reason")) or "—")),
        ("Graph", esc(", ".join(f"{k} {v}" for k, v in counts.items()))),
    ]
    dl = "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in facts)
    jobs = table(
        ["Job", "Kind", "State", "Commit"],
        [
            [
                f'<a href="{url("/console/jobs/" + str(j["id"]))}">{esc(str(j["id"])[:12])}</a>',
                esc(j["kind"]),
                esc(j["status"]),
                short(j.get("commit")),
            ]
            for j in shown.get("jobs") or []
        ],
    )
    runs = RunStore(ctx.graph).list(repo=key, limit=RUNS_SHOWN)
    act = _remove_form(csrf_field(caller), key) if caller.can_act else ""
    search = f'<p><a href="{url("/console/search", {"repo": key})}">Search this repository</a></p>'
    body = (
        f"<dl>{dl}</dl>{search}{act}<h2>Pending and running jobs</h2>{jobs}"
        f"<h2>Last runs</h2>{table(RUN_HEADS, run_rows(runs))}"
    )
    fresh = banner(ctx, caller.principal, key)
    return page(f"Repository {key}", body, caller, current="/console/repos", fresh=fresh)


@router.post("/console/repos/{key:path}/remove")
async def remove_repo(request: Request, key: str) -> HTMLResponse:
    caller, form = await acting(request)
    ctx = context(request)
    if not await run_in_threadpool(removal.is_known, ctx.graph, key[:512]):
        return message("No such repository", "no repository has that key", caller, 404)
    if first(form, "confirm") != "yes":
        body = (
            f'<p class="confirm">Remove <strong>{esc(key)}</strong> from the graph, the search '
            "index and the workers' disks? This queues one removal job.</p>"
            f'<form method="post" action="{url("/console/repos/" + key + "/remove")}">'
            f'{csrf_field(caller)}<button type="submit" name="confirm" value="yes" '
            'class="danger">Yes, remove it</button> '
            f'<a href="{url("/console/repos/" + key)}">Cancel</a></form>'
        )
        return page("Confirm removal", body, caller, current="/console/repos")
    result = await run_in_threadpool(
        lambda: removal.request_removal(
            ctx.store, key, now=time.time(), requested_by=f"console:{caller.principal.name}"
        )
    )
    event(
        log,
        logging.INFO,
        "console_remove",
        f"{caller.principal.name} queued the removal of {key[:200]}",
        who=caller.principal.name,
        repo=key[:200],
        job_id=result.job_id,
    )
    body = (
        f'<p role="status">The removal of {esc(key)} is queued as job '
        f'<a href="{url("/console/jobs/" + result.job_id)}">{esc(result.job_id[:12])}</a>.</p>'
    )
    return page("Removal queued", body, caller, current="/console/repos")


def _semantic(state: dict[str, Any] | None) -> str:
    """``complete``, or ``pending 12,400 of 46,172 chunks`` (progressive publish)."""
    if not state:
        return "—"
    if not state.get("pending"):
        return "complete"
    return f"pending {state['pending']:,} of {state['chunks']:,} chunks"


def _check_rows(results: list[object]) -> list[list[str]]:
    rows = []
    for r in results:
        d = r.to_dict()  # type: ignore[attr-defined]
        cls = "alert" if d["status"] == "diverged" else ""
        rows.append(
            [
                esc(d["repo"]),
                f'<span class="state {cls}">{esc(d["status"])}</span>',
                esc(d["graph_run_id"]),
                esc(d["index_run_id"]),
                esc(d["live_index"]),
                esc(d["detail"] + (f"  semantic: {d['semantic']}" if d.get("semantic") else "")),
            ]
        )
    return rows


@router.get("/console/check")
def check_page(request: Request) -> HTMLResponse:
    caller = identify(request)
    ctx = context(request)
    results = [
        r
        for r in check_repositories(ctx.settings, ctx.graph, ctx.search, alert=False)
        if caller.principal.allows(r.repo)
    ]
    diverged = [r for r in results if r.status == "diverged"]
    alert = ""
    if diverged:
        names = ", ".join(r.repo for r in diverged)
        repair = ""
        if caller.can_act:
            repair = (
                f'<form method="post" action="/console/check/repair">{csrf_field(caller)}'
                '<button type="submit">Repair (finish the alias flip or requeue)</button></form>'
            )
        alert = (
            f'<div class="alert" role="alert"><strong>{len(diverged)} diverged:</strong> '
            f"{esc(names)}{repair}</div>"
        )
    heads = ["Repository", "Status", "Graph run", "Index run", "Live index", "Detail"]
    body = alert + table(heads, _check_rows(list(results)))
    return page(
        "Check", body, caller, current="/console/check", fresh=banner(ctx, caller.principal)
    )


@router.post("/console/check/repair")
async def repair(request: Request) -> HTMLResponse:
    caller, _ = await acting(request)
    ctx = context(request)
    results = await run_in_threadpool(
        lambda: check_repositories(ctx.settings, ctx.graph, ctx.search, repair=True)
    )
    event(log, logging.INFO, "console_repair", f"{caller.principal.name} ran check --repair")
    body = table(
        ["Repository", "Status", "Graph run", "Index run", "Live index", "Detail"],
        _check_rows(list(results)),
    )
    return page("Repair done", body, caller, current="/console/check")


@router.get("/console/charts")
def charts_page(request: Request) -> HTMLResponse:
    caller = identify(request)
    ctx = context(request)
    raw = request.query_params.get("hours", "24")
    hours = int(raw) if raw.isdigit() and 1 <= int(raw) <= 24 * 30 else 24
    now = time.time()
    keys = readable_repos(ctx, caller.principal)
    rows = browse.timeline(
        ctx.graph, since=now - hours * 3600, repos=None if keys is None else tuple(keys)
    )
    body = charts.render(rows, now=now, hours=hours)
    return page(
        "Queue charts", body, caller, current="/console/charts", fresh=banner(ctx, caller.principal)
    )
