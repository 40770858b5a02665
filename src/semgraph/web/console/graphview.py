"""The call-graph view: one or two hops of callers (left) and callees (right) around a
symbol, drawn on the server as SVG whose nodes are links (click to open; keyboard reachable),
with pan and zoom added by ``/console/static/console.js``. It is bounded: at most
:data:`PER_COLUMN` nodes per hop and side, and the page says what it cut. The edges come from
the MCP tools' walk (:func:`semgraph.mcp.graph_tools.walk`), within the caller's allowlist."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from semgraph.mcp import graph_tools
from semgraph.mcp.backend import Scope
from semgraph.mcp.envelope import ToolFailure
from semgraph.web.console.code_pages import allow_of, tools_of
from semgraph.web.console.fresh import banner
from semgraph.web.console.markup import esc, message, page, url
from semgraph.web.console.session import identify
from semgraph.web.context import context

router = APIRouter(include_in_schema=False)
PER_COLUMN = 40
COL_W, ROW_H, NODE_W, NODE_H = 260, 28, 220, 22


def _columns(edges: list[dict[str, Any]], depth: int) -> tuple[list[list[dict[str, Any]]], int]:
    """Nodes per hop (first hop first), each capped, and how many were cut."""
    cols: list[list[dict[str, Any]]] = []
    cut = 0
    for hop in range(1, depth + 1):
        seen: dict[str, dict[str, Any]] = {}
        for e in edges:
            if e["depth"] == hop:
                seen.setdefault(f"{e['repo']}\0{e['qualified_name']}", e)
        nodes = sorted(seen.values(), key=lambda e: str(e["qualified_name"]))
        cut += max(0, len(nodes) - PER_COLUMN)
        cols.append(nodes[:PER_COLUMN])
    return cols, cut


def _node(x: float, y: float, label: str, href: str, cls: str) -> str:
    text = label if len(label) <= 34 else "…" + label[-33:]
    return (
        f'<a href="{href}" class="node {cls}"><rect x="{x:.0f}" y="{y:.0f}" width="{NODE_W}" '
        f'height="{NODE_H}" rx="4"/><text x="{x + 6:.0f}" y="{y + 15:.0f}">{esc(text)}</text>'
        f"<title>{esc(label)}</title></a>"
    )


def draw(
    target: dict[str, Any], callers: list[dict[str, Any]], callees: list[dict[str, Any]], depth: int
) -> tuple[str, int, int]:
    """(svg, nodes drawn, nodes cut)."""
    left, cut_l = _columns(callers, depth)
    right, cut_r = _columns(callees, depth)
    tallest = max([1] + [len(c) for c in left + right])
    height = tallest * ROW_H + 40
    width = (2 * depth + 1) * COL_W + 40
    cx = depth * COL_W + 20
    cy = height / 2 - NODE_H / 2
    pos: dict[str, tuple[float, float]] = {}
    parts: list[str] = []
    nodes: list[str] = []
    center = str(target["qualified_name"])
    pos[center] = (cx, cy)
    for side, cols in ((-1, left), (1, right)):
        for hop, col in enumerate(cols, start=1):
            x = cx + side * hop * COL_W
            top = height / 2 - len(col) * ROW_H / 2
            for i, e in enumerate(col):
                name = str(e["qualified_name"])
                y = top + i * ROW_H
                pos.setdefault(f"{side}:{name}", (x, y))
                href = url("/console/symbol", {"repo": e["repo"], "name": name})
                nodes.append(_node(x, y, name, href, "caller" if side < 0 else "callee"))
    for side, edges in ((-1, callers), (1, callees)):
        for e in edges:
            a = pos.get(f"{side}:{e['qualified_name']}")
            via = str(e.get("via") or center)
            b = pos.get(center) if e["depth"] == 1 else pos.get(f"{side}:{via}")
            if a is None or b is None:
                continue
            ax = a[0] + (NODE_W if side < 0 else 0)
            bx = b[0] + (0 if side < 0 else NODE_W)
            tier = esc(e.get("tier"))
            parts.append(
                f'<line class="edge {tier}" x1="{ax:.0f}" y1="{a[1] + NODE_H / 2:.0f}" '
                f'x2="{bx:.0f}" y2="{b[1] + NODE_H / 2:.0f}"><title>{tier}</title></line>'
            )
    href = url("/console/symbol", {"repo": target["repo"], "name": center})
    nodes.append(_node(cx, cy, center, href, "target"))
    svg = (
        f'<svg id="callgraph" class="graph" role="group" aria-label="call graph of {esc(center)}" '
        f'viewBox="0 0 {width} {height:.0f}" width="100%" '
        f'height="{min(900, max(300, height)):.0f}" tabindex="0">'
        f'<g class="viewport">{"".join(parts)}{"".join(nodes)}</g></svg>'
    )
    return svg, len(nodes), cut_l + cut_r


@router.get("/console/graph")
def graph_page(request: Request) -> HTMLResponse:
    caller = identify(request)
    ctx = context(request)
    repo = request.query_params.get("repo") or None
    name = request.query_params.get("name") or None
    raw = request.query_params.get("depth", "1")
    depth = 2 if raw == "2" else 1
    form = (
        '<form method="get" action="/console/graph" class="filters">'
        f'<label>Repository <input name="repo" value="{esc(repo or "")}"></label>'
        f'<label>Symbol <input name="name" value="{esc(name or "")}"></label>'
        '<label>Hops <select name="depth"><option value="1">1</option>'
        f'<option value="2"{" selected" if depth == 2 else ""}>2</option></select></label>'
        '<button type="submit">Draw</button></form>'
    )
    fresh = banner(ctx, caller.principal, repo)
    if not name:
        return page("Call graph", form, caller, fresh=fresh)
    tools = tools_of(request)
    try:
        scope = Scope(tools.backend, allow_of(caller), repo[:512] if repo else None).load()
        walks = {
            kind: graph_tools.walk(scope, kind, name[:1000], depth, {"name": name})
            for kind in ("callers", "callees")
        }
    except ToolFailure as exc:
        return message("Call graph", exc.message, caller, 404)
    head = walks["callers"][0]
    if head.get("status") == "ambiguous" or "target" not in head:
        reason = head.get("message") or head.get("empty_reason") or "no such symbol"
        return page("Call graph", form + f'<p role="status">{esc(reason)}</p>', caller, fresh=fresh)
    svg, drawn, cut = draw(head["target"], walks["callers"][2], walks["callees"][2], depth)
    truncated = any(w[1].truncated for w in walks.values())
    note = f"{drawn} nodes drawn."
    if cut or truncated:
        note += f" Cut: {cut} more nodes not drawn (at most {PER_COLUMN} per hop and side)"
        note += "; the walk itself stopped at its row cap." if truncated else "."
    controls = (
        '<div class="graph-controls" aria-label="Zoom">'
        '<button type="button" data-zoom="in">Zoom in</button>'
        '<button type="button" data-zoom="out">Zoom out</button>'
        '<button type="button" data-zoom="reset">Reset</button></div>'
    )
    body = form + f'<p role="status" class="graph-note">{esc(note)}</p>' + controls + svg
    return page(f"Call graph of {name}", body, caller, fresh=fresh)
