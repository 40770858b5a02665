"""The freshness line every console page shows: for a page about one repository, its indexed
commit and how many commits it is behind the newest push the queue knows of; elsewhere the
same for each repository the caller may read (the first :data:`MAX_SHOWN`), from the MCP
tools' freshness (:mod:`semgraph.mcp.freshness`), so the console and the agents agree."""

from __future__ import annotations

from typing import Any

from semgraph.graph.reader import GraphReader
from semgraph.mcp.freshness import freshness, load_state
from semgraph.queue.staleness import reason_line
from semgraph.web.console.markup import esc, short, url
from semgraph.web.context import WebContext
from semgraph.web.tokens import Principal

MAX_SHOWN = 8


def repo_freshness(ctx: WebContext, key: str) -> dict[str, Any]:
    return freshness(ctx.settings, load_state(GraphReader(ctx.graph), ctx.store, key))


def _item(row: dict[str, Any]) -> str:
    behind = row.get("commits_behind")
    if not row.get("indexed_commit"):
        state = "not indexed"
    elif behind is None:
        state = "behind (count unknown)" if row.get("stale") else "up to date"
    else:
        state = "up to date" if behind == 0 else f"{behind} commits behind"
    why = reason_line(row.get("stale_reason"))
    if why:
        state = f"{state} ({why})"
    cls = "ok" if state == "up to date" else "warn"
    link = url("/console/repos/" + str(row["repo"]))
    return (
        f'<li><a href="{link}">{esc(row["repo"])}</a> at '
        f"<code>{short(row.get('indexed_commit'))}</code>: "
        f'<span class="{cls}">{esc(state)}</span></li>'
    )


def banner(ctx: WebContext, who: Principal, repo: str | None = None) -> str:
    """The freshness line (escaped HTML) of ``repo``, or of the caller's repositories."""
    if repo is not None:
        keys = [repo] if who.allows(repo) else []
    else:
        keys = [str(r["key"]) for r in GraphReader(ctx.graph).repositories()]
        keys = [k for k in keys if who.allows(k)]
    if not keys:
        return '<aside class="fresh" aria-label="Freshness"><p>No repository indexed.</p></aside>'
    rows = [repo_freshness(ctx, k) for k in keys[:MAX_SHOWN]]
    more = f"<li>and {len(keys) - MAX_SHOWN} more</li>" if len(keys) > MAX_SHOWN else ""
    items = "".join(_item(r) for r in rows)
    return (
        '<aside class="fresh" aria-label="Freshness"><h2>Freshness</h2>'
        f"<ul>{items}{more}</ul></aside>"
    )
