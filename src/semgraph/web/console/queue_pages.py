"""The console's queue pages: the job list (counts by state, filters by state, repository,
kind and error text, 50 jobs a page) and the bulk requeue / abandon, by selection or by the
current filter, with a confirmation that says how many jobs it touches. Reads go through
:mod:`semgraph.queue.browse`; actions through :class:`semgraph.queue.store.JobStore`, the
same transitions the API and the CLI use (one job's page: :mod:`.job_pages`)."""

from __future__ import annotations

import logging
import time

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from semgraph.errors import SemgraphError
from semgraph.logs import event
from semgraph.queue import browse
from semgraph.queue.models import Job, JobStatus
from semgraph.web.console.fresh import banner
from semgraph.web.console.markup import (
    csrf_field,
    esc,
    hidden,
    page,
    pager,
    table,
    url,
    when,
)
from semgraph.web.console.session import Caller, Refused, acting, first, identify
from semgraph.web.context import WebContext, context
from semgraph.web.scope import readable_repos
from semgraph.web.tokens import Principal

log = logging.getLogger(__name__)
router = APIRouter(include_in_schema=False)
PAGE = 50
#: the most jobs one bulk action touches (the confirmation says so when a filter selects more)
BULK_MAX = 1000
ACTIONS = ("requeue", "abandon")
FILTER_FIELDS = ("status", "repo", "kind", "error")


def _allow(ctx: WebContext, who: Principal) -> tuple[str, ...] | None:
    keys = readable_repos(ctx, who)
    return None if keys is None else tuple(keys)


def job_filter(ctx: WebContext, who: Principal, values: dict[str, str]) -> browse.JobFilter:
    """The filter of a queue request, limited to what ``who`` may read."""
    repo = values.get("repo") or None
    if repo is not None and not who.allows(repo):
        raise Refused(403, "this token may not read that repository")
    status = values.get("status") or None
    if status is not None and status not in {s.value for s in JobStatus}:
        raise Refused(400, "unknown job state")
    return browse.JobFilter(
        status=status,
        repo=repo,
        kind=(values.get("kind") or None),
        error=(values.get("error") or None),
        repos=_allow(ctx, who),
    )


def _filters(values: dict[str, str], kinds: list[str]) -> str:
    def options(choices: list[str], chosen: str) -> str:
        rows = ['<option value="">any</option>']
        rows += [
            f'<option value="{esc(c)}"'
            + (" selected" if c == chosen else "")
            + f">{esc(c)}</option>"
            for c in choices
        ]
        return "".join(rows)

    states = [s.value for s in JobStatus]
    return (
        '<form method="get" action="/console/queue" class="filters" role="search">'
        '<label>State <select name="status">'
        f"{options(states, values.get('status', ''))}</select></label>"
        f'<label>Repository <input name="repo" value="{esc(values.get("repo", ""))}"></label>'
        f'<label>Kind <select name="kind">{options(kinds, values.get("kind", ""))}</select></label>'
        f'<label>Error text <input name="error" value="{esc(values.get("error", ""))}"></label>'
        '<button type="submit">Filter</button></form>'
    )


def _counts(counts: dict[str, int]) -> str:
    items = "".join(
        f'<li><a href="{url("/console/queue", {"status": s})}">{esc(s)}</a> '
        f'<span class="count" data-state="{esc(s)}">{n}</span></li>'
        for s, n in counts.items()
    )
    return f'<ul class="counts" aria-label="Jobs by state">{items}</ul>'


def _job_row(job: Job, selectable: bool) -> list[str]:
    pick = ""
    if selectable:
        pick = (
            f'<input type="checkbox" name="ids" value="{esc(job.id)}" '
            f'aria-label="select job {esc(job.id)}">'
        )
    return [
        pick,
        f'<a href="{url("/console/jobs/" + job.id)}">{esc(job.id[:12])}</a>',
        f'<a href="{url("/console/repos/" + job.repo_key)}">{esc(job.repo_key)}</a>',
        esc(job.kind),
        f'<span class="state {esc(job.status.value)}">{esc(job.status.value)}</span>',
        f"{job.attempts}/{job.max_attempts}",
        str(job.crash_count),
        when(job.created_at),
        esc((job.last_error or "")[:160]),
    ]


def _bulk_form(caller: Caller, values: dict[str, str], total: int) -> str:
    keep = "".join(hidden("f_" + k, values.get(k, "")) for k in FILTER_FIELDS)
    return (
        f"{csrf_field(caller)}{keep}"
        '<fieldset class="bulk"><legend>Bulk action</legend>'
        '<label>Action <select name="action"><option value="requeue">requeue</option>'
        '<option value="abandon">abandon</option></select></label>'
        '<button type="submit" name="scope" value="selected">On the selected jobs</button> '
        f'<button type="submit" name="scope" value="filter">On all {total} jobs of this filter'
        "</button></fieldset>"
    )


def _queue(ctx: WebContext, caller: Caller, values: dict[str, str], offset: int) -> str:
    who = caller.principal
    flt = job_filter(ctx, who, values)
    found = browse.page(ctx.graph, flt, offset=offset, limit=PAGE)
    counts = browse.state_counts(ctx.graph, flt.repos)
    kinds = browse.kinds(ctx.graph)
    rows = [_job_row(j, caller.can_act) for j in found.jobs]
    heads = ["", "Job", "Repository", "Kind", "State", "Attempts", "Crashes", "Created", "Error"]
    listing = table(heads, rows, caption=f"{found.total} jobs match")
    if caller.can_act:
        listing = (
            '<form method="post" action="/console/jobs/bulk">'
            + listing
            + _bulk_form(caller, values, found.total)
            + "</form>"
        )
    paging = pager("/console/queue", values, offset, PAGE, found.total)
    return _counts(counts) + _filters(values, kinds) + listing + paging


def _values(request: Request) -> dict[str, str]:
    params = request.query_params
    return {k: params.get(k, "")[:512] for k in FILTER_FIELDS if params.get(k)}


@router.get("/console/queue")
def queue_page(request: Request) -> HTMLResponse:
    caller = identify(request)
    ctx = context(request)
    raw = request.query_params.get("offset", "0")
    offset = int(raw) if raw.isdigit() and len(raw) < 9 else 0
    values = _values(request)
    body = _queue(ctx, caller, values, offset)
    return page(
        "Queue", body, caller, current="/console/queue", fresh=banner(ctx, caller.principal)
    )


def _targets(ctx: WebContext, caller: Caller, form: dict[str, list[str]]) -> tuple[list[str], int]:
    """The jobs a bulk form names (ids the caller may read) and how many its filter selects."""
    scope = first(form, "scope")
    if scope == "selected":
        wanted = [i[:200] for i in form.get("ids", [])][:BULK_MAX]
        jobs = [ctx.store.get(i) for i in wanted]
        keep = [j.id for j in jobs if j is not None and caller.principal.allows(j.repo_key)]
        return keep, len(keep)
    if scope == "filter":
        values = {k: first(form, "f_" + k)[:512] for k in FILTER_FIELDS}
        flt = job_filter(ctx, caller.principal, {k: v for k, v in values.items() if v})
        return browse.ids(ctx.graph, flt, limit=BULK_MAX), browse.count(ctx.graph, flt)
    raise Refused(400, "scope must be selected or filter")


def _apply(ctx: WebContext, caller: Caller, action: str, ids: list[str]) -> tuple[int, list[str]]:
    done, skipped = 0, []
    reason = f"abandoned from the console by {caller.principal.name}"
    for job_id in ids:
        try:
            if action == "requeue":
                ctx.store.requeue(job_id, now=time.time())
            else:
                ctx.store.abandon(job_id, now=time.time(), reason=reason)
            done += 1
        except SemgraphError as exc:
            skipped.append(f"{job_id[:12]}: {exc.message[:200]}")
    return done, skipped


def _confirm(
    caller: Caller, form: dict[str, list[str]], action: str, ids: list[str], total: int
) -> str:
    keep = "".join(
        hidden(k, v) for k, vs in form.items() if k not in ("csrf", "confirm") for v in vs
    )
    cut = ""
    if total > len(ids):
        cut = f"<p>The filter selects {total} jobs; one action touches at most {BULK_MAX}.</p>"
    return (
        f'<p class="confirm">This will <strong>{esc(action)}</strong> '
        f'<strong class="n">{len(ids)}</strong> jobs.</p>{cut}'
        f'<form method="post" action="/console/jobs/bulk">{csrf_field(caller)}{keep}'
        '<button type="submit" name="confirm" value="yes">'
        f"Yes, {esc(action)} {len(ids)} jobs</button> "
        '<a href="/console/queue">Cancel</a></form>'
    )


@router.post("/console/jobs/bulk")
async def bulk(request: Request) -> HTMLResponse:
    caller, form = await acting(request)
    ctx = context(request)
    action = first(form, "action")
    if action not in ACTIONS:
        raise Refused(400, "action must be requeue or abandon")
    ids, total = await run_in_threadpool(_targets, ctx, caller, form)
    if first(form, "confirm") != "yes":
        body = _confirm(caller, form, action, ids, total)
        return page(f"Confirm {action}", body, caller, current="/console/queue")
    done, skipped = await run_in_threadpool(_apply, ctx, caller, action, ids)
    event(
        log,
        logging.INFO,
        "console_bulk",
        f"{caller.principal.name} {action} {done} jobs ({len(skipped)} skipped)",
        who=caller.principal.name,
        action_name=action,
        jobs=done,
        skipped=len(skipped),
    )
    notes = "".join(f"<li>{esc(s)}</li>" for s in skipped[:100])
    body = (
        f'<p role="status">{esc(action)}: <strong class="n">{done}</strong> jobs; '
        f"{len(skipped)} skipped.</p><ul>{notes}</ul>"
        '<p><a href="/console/queue">Back to the queue</a></p>'
    )
    return page(f"{action.capitalize()} done", body, caller, current="/console/queue")
