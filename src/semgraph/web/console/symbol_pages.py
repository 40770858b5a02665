"""The console's symbol pages: a symbol's definition with its callers and callees (each
edge with its resolution tier and candidate count), the candidates of an ambiguous call
site, all answered by the MCP tools within the caller's allowlist."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from semgraph.graph import fileview
from semgraph.mcp import graph_tools
from semgraph.mcp.backend import Scope
from semgraph.mcp.envelope import ToolFailure
from semgraph.mcp.tools import Tools
from semgraph.web.console.code_pages import allow_of, file_link, int_param, param, tools_of
from semgraph.web.console.fresh import banner
from semgraph.web.console.markup import esc, link, message, page, sym_url, table, url
from semgraph.web.console.session import Caller, identify
from semgraph.web.context import WebContext, context

router = APIRouter(include_in_schema=False)
SHOWN = 200
KINDS = ("callers", "callees")


@router.get("/console/calls")
def calls_page(request: Request) -> HTMLResponse:
    """An ambiguous call site's candidates, each with its resolution tier."""
    caller = identify(request)
    ctx = context(request)
    repo, path, name = (
        param(request, "repo", 512),
        param(request, "path", 4096),
        param(request, "name"),
    )
    line = int_param(request, "line", 0)
    if not repo or not path or not name or not caller.principal.allows(repo):
        return message("Call", "no such call site", caller, 404)
    found = [c for c in fileview.calls(ctx.graph, repo, path, line, line) if c["name"] == name]
    found = [c for c in found if caller.principal.allows(str(c["repo"]))]
    rows = [
        [
            link(
                file_link(str(c["repo"]), str(c["path"]), c.get("start_line")), c["qualified_name"]
            ),
            esc(c["kind"]),
            esc(c["tier"]),
            esc(c["path"]),
        ]
        for c in found
    ]
    site = link(file_link(repo, path, line), f"{path}:{line}")
    body = f"<p>Call of <code>{esc(name)}</code> at {site}</p>"
    body += table(["Candidate", "Kind", "Tier", "Path"], rows, caption=f"{len(rows)} candidates")
    return page("Call site", body, caller, fresh=banner(ctx, caller.principal, repo))


def edge_rows(edges: list[dict[str, Any]], *, at_call: bool) -> list[list[str]]:
    out = []
    for e in edges:
        repo, path = str(e["repo"]), str(e["path"])
        line = e.get("call_line") if at_call else e.get("start_line")
        out.append(
            [
                link(sym_url(repo, e["qualified_name"]), e["qualified_name"]),
                f'<a href="{file_link(repo, path, line)}">{esc(path)}:{esc(line)}</a>',
                esc(e.get("tier")),
                str(e.get("candidates") or 1),
            ]
        )
    return out


def symbol_body(ctx: WebContext, tools: Tools, caller: Caller, repo: str | None, name: str) -> str:
    allow = allow_of(caller)
    found = tools.call("find_definition", allow, {"name": name, "repo": repo, "limit": 50})
    if "error" in found:
        return f'<p role="alert">{esc(found["error"].get("message"))}</p>'
    defs = found.get("rows") or []
    if not defs:
        return f'<p role="status">{esc(found.get("empty_reason", "no such symbol"))}</p>'
    if len(defs) > 1:
        rows = [
            [
                link(sym_url(d["repo"], d["qualified_name"]), d["qualified_name"]),
                esc(d["kind"]),
                link(
                    file_link(str(d["repo"]), str(d["path"]), d.get("start_line")),
                    f"{d['repo']}: {d['path']}",
                ),
            ]
            for d in defs
        ]
        return table(["Symbol", "Kind", "Defined in"], rows, caption=f"{len(defs)} symbols match")
    d = defs[0]
    where = file_link(str(d["repo"]), str(d["path"]), d.get("start_line"))
    qualified = str(d["qualified_name"])
    args: dict[str, Any] = {"name": qualified, "repo": d["repo"]}
    parts = [
        f"<p>{esc(d['kind'])} <code>{esc(d.get('signature') or qualified)}</code> defined at "
        f'<a href="{where}" class="definition">{esc(d["path"])}:{esc(d.get("start_line"))}</a> · '
        f"{link(url('/console/graph', {'repo': d['repo'], 'name': qualified}), 'call graph')}</p>"
    ]
    heads = ["Symbol", "Where", "Tier", "Candidates"]
    try:  # the walk itself (row cap 1000), without the agents' token-bounded envelope
        scope = Scope(tools.backend, allow, str(d["repo"])).load()
        walks = {k: graph_tools.walk(scope, k, qualified, 1, args) for k in KINDS}
    except ToolFailure as exc:
        return "".join(parts) + f'<p role="alert">{esc(exc.message)}</p>'
    for kind, title in (("callers", "Callers"), ("callees", "Callees")):
        _, answer, edges = walks[kind]
        cut = f" (the first {SHOWN} shown)" if len(edges) > SHOWN else ""
        cut += "; the walk stopped at its row cap" if answer.truncated else ""
        parts.append(f'<h2 id="{kind}">{title}</h2>')
        parts.append(
            table(
                heads,
                edge_rows(edges[:SHOWN], at_call=kind == "callers"),
                caption=f"{len(edges)} {kind}{cut}",
            )
        )
    return "".join(parts)


@router.get("/console/symbol")
def symbol_page(request: Request) -> HTMLResponse:
    caller = identify(request)
    ctx = context(request)
    repo, name = param(request, "repo", 512), param(request, "name")
    if not name:
        return message("Symbol", "name is required", caller, 400)
    body = symbol_body(ctx, tools_of(request), caller, repo, name)
    return page(
        name, body, caller, current="/console/search", fresh=banner(ctx, caller.principal, repo)
    )
