"""The console's job pages: one job (attempts, errors, crash count, history, its runs with
phase times and the log lines a run recorded) and the workers (host, lane, heartbeat age,
the job each runs, shown only within the caller's allowlist)."""

from __future__ import annotations

import json
import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from semgraph.graph.runs import RunStore
from semgraph.queue import browse
from semgraph.queue.models import Job
from semgraph.web.console.fresh import banner
from semgraph.web.console.markup import (
    age,
    csrf_field,
    esc,
    hidden,
    message,
    page,
    short,
    table,
    url,
    when,
)
from semgraph.web.console.session import Caller, identify
from semgraph.web.context import WebContext, context

router = APIRouter(include_in_schema=False)


def _runs_of(ctx: WebContext, job: Job) -> list[dict[str, Any]]:
    return [
        r
        for r in RunStore(ctx.graph).list(repo=job.repo_key, limit=200)
        if r.get("job_id") == job.id
    ]


def _phases(run: dict[str, Any]) -> str:
    raw = run.get("phases_s")
    try:
        phases = json.loads(raw) if isinstance(raw, str) else (raw or {})
    except ValueError:
        phases = {}
    if not isinstance(phases, dict) or not phases:
        return "—"
    text = ", ".join(
        f"{esc(k)} {float(v):.2f} s" for k, v in phases.items() if isinstance(v, int | float)
    )
    relink = run.get("relink")
    if isinstance(relink, dict) and relink.get("outcome") == "ok":
        text += esc(f" (re-link: {relink.get('dependents')} dependents, {relink.get('rows')} rows)")
    elif isinstance(relink, dict):
        error = str(relink.get("error", ""))[:300]
        text += esc(f" (re-link {relink.get('outcome')}: {error})")
    return text


def run_rows(runs: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            esc(str(r.get("id", ""))[:12]),
            esc(r.get("status")),
            short(r.get("commit")),
            when(r.get("started_at")),
            when(r.get("finished_at")),
            _phases(r),
            esc(str(r.get("error") or "")[:300]),
        ]
        for r in runs
    ]


RUN_HEADS = ["Run", "Status", "Commit", "Started", "Finished", "Phases", "Error"]


def _log_lines(runs: list[dict[str, Any]]) -> str:
    lines = [str(x) for r in runs for x in (r.get("log_lines") or []) if isinstance(x, str)]
    if not lines:
        return "<p>No log lines were recorded for this job's runs.</p>"
    return '<pre class="log">' + esc("\n".join(lines[-500:])) + "</pre>"


def _detail(ctx: WebContext, caller: Caller, job: Job) -> str:
    facts = [
        (
            "Repository",
            f'<a href="{url("/console/repos/" + job.repo_key)}">{esc(job.repo_key)}</a>',
        ),
        ("Kind", esc(job.kind)),
        ("State", esc(job.status.value)),
        ("Commit", short(job.commit)),
        ("Ref", esc(job.ref or "—")),
        ("Attempts", f"{job.attempts} of {job.max_attempts}"),
        ("Crashes", f"{job.crash_count} of {job.max_crashes}"),
        ("Created", when(job.created_at)),
        ("Claimed", when(job.claimed_at)),
        ("Finished", when(job.finished_at)),
        ("Worker", esc(job.worker_id or "—")),
        ("Coalesced pushes", str(job.coalesced_count)),
        ("Last error", esc(job.last_error or "—")),
    ]
    dl = "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in facts)
    errors = table(
        ["When", "Attempt", "Kind", "Message"],
        [[when(e.at), str(e.attempt), esc(e.kind), esc(e.message[:2000])] for e in job.errors],
        caption="Attempts that failed",
    )
    history = "".join(f"<li>{when(h.at)}: {esc(h.what)}</li>" for h in job.history)
    runs = _runs_of(ctx, job)
    actions = ""
    if caller.can_act:
        actions = (
            '<form method="post" action="/console/jobs/bulk">'
            f"{csrf_field(caller)}{hidden('ids', job.id)}{hidden('scope', 'selected')}"
            '<button type="submit" name="action" value="requeue">Requeue</button> '
            '<button type="submit" name="action" value="abandon">Abandon</button></form>'
        )
    return (
        f"<dl>{dl}</dl>{actions}<h2>Errors</h2>{errors}"
        f"<h2>History</h2><ul>{history or '<li>nothing done from outside</li>'}</ul>"
        f"<h2>Runs</h2>{table(RUN_HEADS, run_rows(runs))}<h2>Log</h2>{_log_lines(runs)}"
    )


@router.get("/console/jobs/{job_id}")
def job_page(request: Request, job_id: str) -> HTMLResponse:
    caller = identify(request)
    ctx = context(request)
    job = ctx.store.get(job_id[:200])
    if job is None or not caller.principal.allows(job.repo_key):
        return message("No such job", "no such job", caller, 404)
    body = _detail(ctx, caller, job)
    fresh = banner(ctx, caller.principal, job.repo_key)
    return page(f"Job {job.id[:12]}", body, caller, current="/console/queue", fresh=fresh)


@router.get("/console/workers")
def workers_page(request: Request) -> HTMLResponse:
    caller = identify(request)
    ctx = context(request)
    now = time.time()
    rows = []
    for row in browse.worker_rows(ctx.graph):
        w = row.worker
        jobs = [j for j in row.jobs if caller.principal.allows(j.repo_key)]
        shown = ", ".join(
            f'<a href="{url("/console/jobs/" + j.id)}">{esc(j.id[:12])}</a> ({esc(j.repo_key)})'
            for j in jobs
        )
        rows.append(
            [
                esc(w.get("name") or w.get("id")),
                esc(w.get("host")),
                esc(w.get("lane")),
                esc(w.get("status")),
                age(w.get("heartbeat_at"), now),
                shown or "—",
            ]
        )
    body = table(["Worker", "Host", "Lane", "Status", "Heartbeat age", "Job"], rows)
    return page(
        "Workers", body, caller, current="/console/workers", fresh=banner(ctx, caller.principal)
    )
