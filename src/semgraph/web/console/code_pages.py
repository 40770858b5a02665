"""The console's search and code pages: hybrid search with filters, the file view at the
indexed commit (line numbers, outline, highlighting, call sites linked to their definitions),
a symbol's page (definition, callers, callees, each edge with its tier) and an ambiguous
call's candidates. Everything is answered by the MCP tools (:class:`semgraph.mcp.tools.Tools`)
with the caller's repository allowlist, so the console, the agents and the API agree on
what a token may see; the file view adds the graph's outline and call sites
(:mod:`semgraph.graph.fileview`)."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from semgraph.errors import SearchNotIndexed, SearchQueryError
from semgraph.graph import fileview
from semgraph.mcp.tools import Tools
from semgraph.search.query import MAX_K, search, validate
from semgraph.web.console import highlight
from semgraph.web.console.fresh import banner
from semgraph.web.console.markup import esc, link, message, page, sym_url, url
from semgraph.web.console.session import Caller, identify
from semgraph.web.context import context
from semgraph.web.scope import readable_repos

router = APIRouter(include_in_schema=False)
WINDOW = 400
RESULTS = 20
MAX_TERMS = 8


def tools_of(request: Request) -> Tools:
    found: Tools = request.app.state.console_tools
    return found


def allow_of(caller: Caller) -> Any:
    return None if caller.principal.repos is None else caller.principal.allows


def param(request: Request, name: str, most: int = 1000) -> str | None:
    value = request.query_params.get(name)
    return value[:most] if value else None


def int_param(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name, "")
    return int(raw) if raw.isdigit() and len(raw) < 10 else default


def mark(text: str, query: str) -> str:
    """``text`` escaped, with the query's words in ``<mark>`` (case-insensitive)."""
    words = sorted({w for w in re.findall(r"\w{2,}", query)}, key=len, reverse=True)[:MAX_TERMS]
    if not words:
        return esc(text)
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    out, last = [], 0
    for found in pattern.finditer(text):
        out.append(esc(text[last : found.start()]))
        out.append(f"<mark>{esc(found.group(0))}</mark>")
        last = found.end()
    out.append(esc(text[last:]))
    return "".join(out)


def file_link(repo: str, path: str, line: int | None) -> str:
    start = max(1, (line or 1) - 10)
    return url("/console/file", {"repo": repo, "path": path, "start": start}) + (
        f"#L{int(line)}" if line else ""
    )


def _search_form(values: dict[str, str]) -> str:
    def field(name: str, label: str) -> str:
        return (
            f'<label>{esc(label)} <input name="{name}" value="{esc(values.get(name, ""))}"></label>'
        )

    return (
        '<form method="get" action="/console/search" role="search" class="filters">'
        f"{field('q', 'Query')}{field('repo', 'Repository')}{field('lang', 'Language')}"
        f'{field("path", "Path prefix")}<button type="submit">Search</button></form>'
    )


def _hit(row: dict[str, Any], query: str) -> str:
    repo, path = str(row["repo"]), str(row["path"])
    start, end = int(row["start_line"]), int(row["end_line"])
    symbol = row.get("symbol")
    sym = ""
    if symbol:
        sym = (
            f' · <a href="{url("/console/symbol", {"repo": repo, "name": symbol})}">'
            f"{esc(symbol)}</a> ({esc(row.get('kind'))})"
        )
    commits = "".join(f"<li>{esc(line)}</li>" for line in row.get("history") or ())
    history = f'<ul class="history">{commits}</ul>' if commits else ""
    return (
        f'<li class="hit"><a href="{file_link(repo, path, start)}">{esc(repo)}: {esc(path)}</a> '
        f"lines {start}&#8211;{end}{sym}"
        f"<pre><code>{mark(str(row.get('snippet', '')), query)}</code></pre>{history}</li>"
    )


def _hits(
    request: Request, caller: Caller, values: dict[str, str], offset: int
) -> tuple[list[dict[str, Any]], bool]:
    """One page of hybrid search hits within the caller's allowlist (as ``GET /search``
    answers: one search per readable repository for a limited token) and whether more may
    follow. Raises the search errors (bad input, nothing indexed)."""
    ctx = context(request)
    who = caller.principal
    query, repo = values["q"], values.get("repo")
    validate(query, k=RESULTS, mode="hybrid", settings=ctx.settings)
    if repo is not None and not who.allows(repo):
        raise SearchNotIndexed("this token may not read that repository")
    keys = None if repo is not None else readable_repos(ctx, who)
    k = min(MAX_K, offset + RESULTS)
    embedder = tools_of(request).embedder()
    hits = []
    for key in [repo] if keys is None else keys:
        try:
            hits += search(
                ctx.search,
                ctx.settings,
                embedder,
                query,
                repo=key,
                lang=values.get("lang"),
                path_prefix=values.get("path"),
                k=k,
            )
        except SearchNotIndexed:
            if keys is None:
                raise
    hits.sort(key=lambda hit: hit.score, reverse=True)
    return [h.to_dict() for h in hits[offset : offset + RESULTS]], len(hits) >= k and k < MAX_K


@router.get("/console/search")
def search_page(request: Request) -> HTMLResponse:
    caller = identify(request)
    ctx = context(request)
    values = {k: v for k in ("q", "repo", "lang", "path") if (v := param(request, k))}
    body = _search_form(values)
    if values.get("q", "").strip():
        offset = min(int_param(request, "offset", 0), MAX_K)
        try:
            rows, more = _hits(request, caller, values, offset)
        except (SearchQueryError, SearchNotIndexed) as exc:
            body += f'<p role="alert">{esc(exc.message)}</p>'
        else:
            body += _results(rows, more, values, offset)
    fresh = banner(ctx, caller.principal, values.get("repo"))
    return page("Search", body, caller, current="/console/search", fresh=fresh)


def _results(rows: list[dict[str, Any]], more: bool, values: dict[str, str], offset: int) -> str:
    if not rows:
        return '<p role="status">No results.</p>'
    after = ""
    if more:
        nxt = url("/console/search", {**values, "offset": offset + RESULTS})
        after = link(nxt, "More results", rel="next")
    items = "".join(_hit(r, values["q"]) for r in rows)
    shown = f"results {offset + 1}&#8211;{offset + len(rows)}"
    return f'<p role="status">{shown}</p><ol class="hits" start="{offset + 1}">{items}</ol>{after}'


def _call_links(calls: list[dict[str, Any]], repo: str, path: str) -> dict[tuple[int, str], str]:
    """(line, short name) -> link: the definition when resolved to one symbol, else the
    page of the call's candidates."""
    by_site: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
    for c in calls:
        by_site[(int(c["line"]), str(c["name"]))].append(c)
    links = {}
    for (line, name), targets in by_site.items():
        if len(targets) == 1 and int(targets[0].get("candidates") or 1) <= 1:
            t = targets[0]
            links[(line, name)] = file_link(str(t["repo"]), str(t["path"]), t.get("start_line"))
        else:
            links[(line, name)] = url(
                "/console/calls", {"repo": repo, "path": path, "line": line, "name": name}
            )
    return links


def _outline(rows: list[dict[str, Any]], repo: str, path: str) -> str:
    items = "".join(
        f"<li>{link(file_link(repo, path, r.get('start_line')), r['qualified_name'])} "
        f'<span class="kind">{esc(r["kind"])}</span> '
        f"{link(sym_url(repo, r['qualified_name']), 'callers and callees')}</li>"
        for r in rows
    )
    items = items or "<li>no symbols</li>"
    head = '<nav class="outline" aria-label="Outline"><h2>Outline of these lines</h2>'
    return f"{head}<ul>{items}</ul></nav>"


def _code(answer: dict[str, Any], repo: str, path: str, calls: list[dict[str, Any]]) -> str:
    links = _call_links(calls, repo, path)
    first = int(answer["start_line"])
    rendered = highlight.lines(
        str(answer.get("text", "")),
        path,
        answer.get("language"),
        first,
        lambda n, name: links.get((n, name)),
    )
    rows = "".join(
        f'<span class="line" id="L{first + i}"><a class="ln" href="#L{first + i}" '
        f'aria-label="line {first + i}">{first + i}</a>{text}</span>\n'
        for i, text in enumerate(rendered)
    )
    return f'<pre class="code hl" tabindex="0" aria-label="{esc(path)}"><code>{rows}</code></pre>'


@router.get("/console/file")
def file_page(request: Request) -> HTMLResponse:
    caller = identify(request)
    ctx = context(request)
    repo, path = param(request, "repo", 512), param(request, "path", 4096)
    if not repo or not path:
        return message("File", "repo and path are required", caller, 400)
    start = max(1, int_param(request, "start", 1))
    answer = tools_of(request).call(
        "get_snippet",
        allow_of(caller),
        {"repo": repo, "path": path, "start_line": start, "end_line": start + WINDOW - 1},
    )
    if "error" in answer:
        return message("File", str(answer["error"].get("message")), caller, 404)
    fresh = banner(ctx, caller.principal, repo)
    if answer.get("status") != "ok":
        return page(path, f"<p>{esc(answer.get('empty_reason'))}</p>", caller, fresh=fresh)
    end = int(answer["end_line"])
    outline = fileview.outline(ctx.graph, repo, str(answer["path"]), start, end)
    calls = fileview.calls(ctx.graph, repo, str(answer["path"]), start, end)
    nav = []
    if start > 1:
        nav.append(
            link(
                url("/console/file", {"repo": repo, "path": path, "start": max(1, start - WINDOW)}),
                "Previous lines",
                rel="prev",
            )
        )
    nav.append(f"<span>lines {start}&#8211;{end} of {answer.get('file_last_line')}</span>")
    if answer.get("has_more"):
        nav.append(
            link(
                url(
                    "/console/file",
                    {"repo": repo, "path": path, "start": answer["next_start_line"]},
                ),
                "Next lines",
                rel="next",
            )
        )
    head = (
        f"<p>{esc(repo)} · <code>{esc(str(answer.get('blob_sha', ''))[:12])}</code> · "
        f"{esc(answer.get('language'))} · "
        f"{link(url('/console/graph', {'repo': repo}), 'graph')}</p>"
    )
    pager = '<nav class="pager" aria-label="Lines">' + " ".join(nav) + "</nav>"
    body = (
        head
        + '<div class="fileview">'
        + _outline(outline, repo, path)
        + _code(answer, repo, path, calls)
        + "</div>"
        + pager
    )
    return page(path, body, caller, fresh=fresh)
