"""The code-graph tools: find_definition, callers, callees and impact.

Each fetches at most ``ROW_CAP`` rows from the graph reader (one run: the reader reads the
published subgraph), pages them, and says what it may miss: call sites in scope that did not
resolve or were ambiguous, files that failed to parse, a row cap that cut the walk.
"""

from __future__ import annotations

from typing import Any

from semgraph.errors import GraphInputError
from semgraph.graph.reader import Answer
from semgraph.mcp.backend import Scope
from semgraph.mcp.envelope import Page, ToolFailure, completeness
from semgraph.model import SymbolKind

#: rows one answer computes before paging (the reader's own maximum)
ROW_CAP = 1000
MAX_DEPTH = 5
KINDS = tuple(k.value for k in SymbolKind)

_EMPTY_WHY = {"callers": "symbol found, no callers", "callees": "symbol found, no callees"}


def _symbol(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "qualified_name": row.get("qualified_name"),
        "kind": row.get("kind"),
        "repo": row.get("repo"),
        "path": row.get("path"),
        "start_line": row.get("start_line"),
        "end_line": row.get("end_line"),
        "signature": row.get("signature"),
    }


def _edge(row: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    return {
        "depth": row["depth"],
        "qualified_name": row.get("qualified_name"),
        "kind": row.get("kind"),
        "repo": row.get("repo"),
        "path": row.get("path"),
        "start_line": row.get("start_line"),
        "call_line": row.get("line"),
        "tier": row.get("tier"),
        "candidates": row.get("candidates"),
        "via": names.get(str(row.get("target")), row.get("target")),
    }


def _depth(depth: int | None, default: int) -> int:
    value = default if depth is None else depth
    if not 1 <= value <= MAX_DEPTH:
        raise ToolFailure(
            "invalid_argument",
            f"depth must be between 1 and {MAX_DEPTH}, got {value}",
            field="depth",
        )
    return value


def _read(call: Any, *args: Any, **kw: Any) -> Answer:
    try:
        answer: Answer = call(*args, **kw)
    except GraphInputError as exc:
        raise ToolFailure("invalid_argument", exc.message, field="name") from None
    return answer


def _empty(scope: Scope, why: str) -> dict[str, Any]:
    reason = why if scope.indexed() else "repository not indexed"
    return {"status": "empty", "empty_reason": reason}


def find_definition(
    scope: Scope, name: str, kind: str | None, offset: int, limit: int, args: dict[str, Any]
) -> dict[str, Any]:
    if kind is not None and kind not in KINDS:
        raise ToolFailure(
            "invalid_argument", f"kind must be one of {', '.join(KINDS)}", field="kind"
        )
    across = bool(args.get("across_repos"))
    found = _read(
        scope.backend.reader.definitions, name, None if across else scope.repo, limit=ROW_CAP
    )
    rows = [_symbol(r) for r in scope.filter(found.matches) if kind is None or r["kind"] == kind]
    repos = {str(r["repo"]) for r in rows}
    hidden = {str(r["repo"]) for r in found.matches} - {
        str(r["repo"]) for r in scope.filter(found.matches)
    }
    causes = ["row_cap: more definitions match than were read"] if found.truncated else []
    causes += scope.file_causes(repos or scope.states)
    head: dict[str, Any] = {"tool": "find_definition", "name": name}
    if across:  # which repositories it covered; the hidden ones as a count, never a name
        head["repositories_covered"], head["repositories_hidden"] = sorted(repos), len(hidden)
    if not rows:
        head.update(_empty(scope, "no such symbol"))
    else:
        head["status"] = "ambiguous" if len(rows) > 1 else "ok"
    head["completeness"] = completeness(causes)
    head["freshness"] = scope.freshness(repos or None)
    page = Page("find_definition", args, scope.runs, rows, offset, limit, not found.truncated)
    return page.render(head, scope.backend.tokens)


def _walk_causes(kind: str, stats: dict[str, int]) -> list[str]:
    if kind == "callees":
        causes = []
        if stats.get("unresolved"):
            causes.append(f"unresolved_calls: {stats['unresolved']} call sites in scope")
        if stats.get("ambiguous"):
            causes.append(f"ambiguous_calls: {stats['ambiguous']} call sites in scope")
        return causes
    causes = []
    if stats.get("possible_callers_unlinked"):
        n = stats["possible_callers_unlinked"]
        causes.append(f"ambiguous_calls: {n} call sites name it among too many candidates")
    if stats.get("repository_unresolved"):
        n = stats["repository_unresolved"]
        causes.append(f"unresolved_calls: {n} call sites in the repository did not resolve")
    return causes


def walk(
    scope: Scope,
    kind: str,
    name: str,
    depth: int | None,
    args: dict[str, Any],
    *,
    default_depth: int = 1,
) -> tuple[dict[str, Any], Answer, list[dict[str, Any]]]:
    """(head, reader answer, visible edges) of a callers/callees walk."""
    levels = _depth(depth, default_depth)
    across = bool(args.get("across_repos"))
    visible = scope.visible if across else None
    answer = _read(
        scope.backend.reader.calls,
        kind,
        name,
        scope.repo,
        depth=levels,
        limit=ROW_CAP,
        across_repos=across,
        visible=visible,
    )
    matches = scope.filter(answer.matches)
    head: dict[str, Any] = {"tool": kind, "name": name, "depth": levels}
    if across:  # which repositories it covered; the hidden ones as a count, never a name
        head["repositories_covered"] = [r for r in answer.repositories if scope.visible(r)]
        head["repositories_hidden"] = answer.hidden_repositories
    if not matches:
        head.update(_empty(scope, "no such symbol"))
        head["completeness"] = completeness([])
        head["freshness"] = scope.freshness()
        return head, answer, []
    if len(matches) > 1:
        head["status"] = "ambiguous"
        head["message"] = (
            f"{len(matches)} symbols match {name!r}: ask again with one of the qualified names"
        )
        head["candidates"] = [_symbol(m) for m in matches[:50]]
        head["completeness"] = completeness([])
        head["freshness"] = scope.freshness({str(m["repo"]) for m in matches})
        return head, answer, []
    target = matches[0]
    names = {str(target["key"]): str(target["qualified_name"])}
    for row in answer.edges:
        names.setdefault(str(row["key"]), str(row["qualified_name"]))
    edges = [_edge(r, names) for r in scope.filter(answer.edges)]
    causes = _walk_causes(kind, answer.unresolved_in_scope)
    if answer.truncated:
        causes.append(f"row_cap: the walk stopped at {ROW_CAP} edges")
    causes += scope.file_causes([str(target["repo"])])
    head["target"] = _symbol(target)
    head["status"] = "ok" if edges else "empty"
    if not edges:
        head["empty_reason"] = _EMPTY_WHY.get(kind, "symbol found, no callers")
    head["call_sites_in_scope"] = dict(answer.unresolved_in_scope)
    head["completeness"] = completeness(causes)
    head["freshness"] = scope.freshness([str(target["repo"])])
    return head, answer, edges


def callers_or_callees(
    scope: Scope,
    kind: str,
    name: str,
    depth: int | None,
    offset: int,
    limit: int,
    args: dict[str, Any],
) -> dict[str, Any]:
    """The ``callers`` or ``callees`` tool: a walk's page (no rows when ambiguous)."""
    head, answer, edges = walk(scope, kind, name, depth, args)
    rows: list[Any] = edges if head["status"] != "ambiguous" else []
    page = Page(kind, args, scope.runs, rows, offset, limit, not answer.truncated)
    return page.render(head, scope.backend.tokens)


def impact(
    scope: Scope,
    name: str,
    depth: int | None,
    summary: bool,
    offset: int,
    limit: int,
    args: dict[str, Any],
) -> dict[str, Any]:
    """Transitive callers (default 3 levels): the symbols and files a change may affect."""
    head, answer, edges = walk(scope, "callers", name, depth, args, default_depth=3)
    head["tool"] = "impact"
    if head.get("empty_reason") == "symbol found, no callers":
        head["empty_reason"] = "symbol found, no callers: nothing else is affected"
    first: dict[str, dict[str, Any]] = {}
    for e in edges:
        key = f"{e['repo']}\0{e['qualified_name']}\0{e['path']}"
        if key not in first or e["depth"] < first[key]["depth"]:
            first[key] = e
    symbols = sorted(first.values(), key=lambda e: (e["depth"], e["repo"], e["path"] or ""))
    files = sorted({(str(e["repo"]), str(e["path"])) for e in symbols})
    per_depth: dict[int, dict[str, Any]] = {}
    for e in symbols:
        level = per_depth.setdefault(
            e["depth"], {"depth": e["depth"], "symbols": 0, "files": set()}
        )
        level["symbols"] += 1
        level["files"].add((e["repo"], e["path"]))
    counts = [{**v, "files": len(v["files"])} for _, v in sorted(per_depth.items())]
    head["affected"] = {"symbols": len(symbols), "files": len(files)}
    rows: list[Any]
    if summary:
        head["summary"] = True
        rows = counts
    else:
        rows = [
            {k: e[k] for k in ("depth", "qualified_name", "kind", "repo", "path", "start_line")}
            for e in symbols
        ]
        head["files"] = [{"repo": r, "path": p} for r, p in files[:100]]
        head["files_listed"] = min(len(files), 100)
    page = Page("impact", args, scope.runs, rows, offset, limit, not answer.truncated)
    return page.render(head, scope.backend.tokens)
