"""Graph queries: where is X defined, who calls it, what does it call, what does a file import.

Names may be short (``total``) or qualified, fully or by a trailing part
(``shop.models.Order.total``, ``Order.total``). When a name matches several symbols,
``callers``/``callees`` do not pick one: the answer lists the candidates and no edges, so the
caller can ask again with a qualified name. Every edge carries its resolution tier, and every
answer says how many call sites in scope did not resolve, so a caller knows what it may miss.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from semgraph.db import Graph
from semgraph.errors import GraphInputError
from semgraph.graph import queries as q

Visible = Callable[[str], bool]  # a repository key the caller may see
MAX_NAME_CHARS = 1000
MAX_DEPTH = 10
_SEPARATORS = re.compile(r"::|#|/")
# the statement of one hop, by direction and whether cross-repository links are followed
_STEPS: dict[tuple[str, bool], str] = {
    ("callers", False): q.CALLERS_STEP,
    ("callers", True): q.CALLERS_STEP_ACROSS,
    ("callees", False): q.CALLEES_STEP,
    ("callees", True): q.CALLEES_STEP_ACROSS,
}


@dataclass
class Answer:
    """One query's answer; ``to_dict()`` is the JSON the CLI and HTTP API print."""

    query: str
    name: str
    matches: list[dict[str, Any]] = field(default_factory=list)  # the symbols the name names
    ambiguous: bool = False  # several symbols matched: ``edges`` is empty, pick a candidate
    edges: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False  # ``limit`` cut the answer
    unresolved_in_scope: dict[str, int] = field(default_factory=dict)
    # across repositories: the repositories the walk covered, and how many it met
    # that the caller may not see (a count, never a name); a hidden one is never walked through
    repositories: list[str] = field(default_factory=list)
    hidden_repositories: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _split_name(name: str) -> tuple[str, str | None, str | None]:
    """(short name, qualified name or None, ``.suffix`` for trailing matches or None)."""
    text = name.strip()
    if not text or len(text) > MAX_NAME_CHARS or any(c in text for c in "\n\r\x00"):
        raise GraphInputError(f"invalid symbol name {name[:80]!r}")
    dotted = _SEPARATORS.sub(".", text).strip(".")
    if not dotted:
        raise GraphInputError(f"invalid symbol name {name[:80]!r}")
    if "." not in dotted:
        return dotted, None, None
    return dotted.rsplit(".", 1)[1], dotted, "." + dotted


class GraphReader:
    def __init__(self, graph: Graph, max_limit: int = 1000, max_depth: int = 5) -> None:
        self.graph = graph
        self.max_limit = max_limit
        self.max_depth = min(max_depth, MAX_DEPTH)

    def _limit(self, limit: int) -> int:
        if not 1 <= limit <= self.max_limit:
            raise GraphInputError(f"limit must be between 1 and {self.max_limit}, got {limit}")
        return limit

    def definitions(self, name: str, repo: str | None = None, limit: int = 20) -> Answer:
        limit = self._limit(limit)
        short, qualified, suffix = _split_name(name)
        rows = self.graph.query(
            "definitions",
            q.DEFINITIONS,
            name=short,
            qualified=qualified,
            suffix=suffix,
            repo=repo,
            limit=limit + 1,
        )
        answer = Answer("definitions", name, matches=rows[:limit], truncated=len(rows) > limit)
        answer.ambiguous = len(rows) > 1
        return answer

    def calls(
        self,
        direction: str,
        name: str,
        repo: str | None = None,
        depth: int = 1,
        limit: int = 50,
        *,
        across_repos: bool = False,
        visible: Visible | None = None,
    ) -> Answer:
        """Walk the call graph from ``name`` for ``depth`` hops, ``direction`` ``callers``
        (who calls it) or ``callees`` (what it calls); ``across_repos`` follows
        cross-repository links too, through the repositories ``visible`` allows."""
        step = _STEPS[direction, bool(across_repos)]
        if not 1 <= depth <= self.max_depth:
            raise GraphInputError(f"depth must be between 1 and {self.max_depth}, got {depth}")
        found = self.definitions(name, repo, limit=self._limit(limit))
        matches = found.matches
        if len(matches) > 1:  # a module named like a function does not make it ambiguous
            matches = [m for m in matches if m["kind"] != "module"] or matches
        answer = Answer(direction, name, matches=matches, truncated=found.truncated)
        if len(matches) != 1:
            answer.ambiguous = len(matches) > 1
            return answer
        target = matches[0]
        covered, hidden = {str(target["repo"])}, set()
        seen = {target["key"]}
        frontier = [target["key"]]
        scope = [target["key"]]
        for level in range(1, depth + 1):
            remaining = limit - len(answer.edges)
            if not frontier or remaining <= 0:
                break
            rows = self.graph.query(
                f"{direction} depth {level}", step, keys=frontier, limit=remaining + 1
            )
            if len(rows) > remaining:
                answer.truncated = True
                rows = rows[:remaining]
            frontier = []
            for row in rows:
                if visible is not None and not visible(str(row["repo"])):
                    hidden.add(str(row["repo"]))  # the allowlist applies at every hop
                    continue
                covered.add(str(row["repo"]))
                row["depth"] = level
                answer.edges.append(row)
                if row["key"] not in seen:
                    seen.add(row["key"])
                    frontier.append(row["key"])
            if direction == "callees" and level < depth:  # their calls are walked next
                scope += frontier
        answer.unresolved_in_scope = self._scope_stats(direction, scope, target["repo"])
        answer.repositories, answer.hidden_repositories = sorted(covered), len(hidden)
        return answer

    def callers(self, name: str, *args: Any, **kwargs: Any) -> Answer:
        """Who calls ``name``: :meth:`calls` toward it, same arguments."""
        return self.calls("callers", name, *args, **kwargs)

    def callees(self, name: str, *args: Any, **kwargs: Any) -> Answer:
        """What ``name`` calls: :meth:`calls` away from it, same arguments."""
        return self.calls("callees", name, *args, **kwargs)

    def _scope_stats(self, kind: str, keys: list[str], repo: str) -> dict[str, int]:
        """Callees: the call sites of the walked symbols that produced no edge. Callers: the
        ambiguous call sites naming the target without an edge (over the cap), and the
        repository's unresolved call sites (any of them might be a call to it)."""
        stats = self.graph.query("scope stats", q.SCOPE_STATS, keys=keys)[0]
        repo_stats = self.graph.query("repository stats", q.REPOSITORY_STATS, repos=[repo])
        repo_row = repo_stats[0] if repo_stats else {"unresolved": 0, "ambiguous": 0}
        if kind == "callees":
            return {
                "unresolved": int(stats["unresolved"] or 0),
                "ambiguous": int(stats["ambiguous"] or 0),
                "external": int(stats["external"] or 0),
            }
        return {
            "possible_callers_unlinked": int(stats["possible_callers"] or 0),
            "repository_unresolved": int(repo_row["unresolved"]),
            "repository_ambiguous": int(repo_row["ambiguous"]),
        }

    def imports(self, path: str, repo: str | None = None, limit: int = 200) -> Answer:
        limit = self._limit(limit)
        clean = path.strip().removeprefix("./")
        if not clean or len(clean) > 4096 or "\x00" in clean:
            raise GraphInputError(f"invalid path {path[:80]!r}")
        files = self.graph.query("file by path", q.FILES_BY_PATH, path=clean, repo=repo, limit=50)
        answer = Answer("imports", clean, matches=files)
        if len(files) != 1:
            answer.ambiguous = len(files) > 1
            return answer
        key = files[0]["key"]
        rows = self.graph.query("imports of", q.IMPORTS_OF, key=key, limit=limit + 1)
        answer.truncated = len(rows) > limit
        answer.edges = [{"direction": "imports", **r} for r in rows[:limit]]
        back = self.graph.query("imported by", q.IMPORTED_BY, key=key, limit=limit + 1)
        answer.truncated = answer.truncated or len(back) > limit
        answer.edges += [
            {"direction": "imported_by", "kind": "file", "target": r["path"], "line": r["line"]}
            for r in back[:limit]
        ]
        answer.unresolved_in_scope = {"imports_unresolved": int(files[0]["unresolved"])}
        return answer

    def repositories(self, *, include_removing: bool = False) -> list[dict[str, Any]]:
        """The published repositories; one whose removal started (``state: 'removing'``,
        :mod:`semgraph.repos.graph`) only with ``include_removing``."""
        rows = self.graph.query("repositories", q.REPOSITORIES)
        return [r for r in rows if include_removing or r.get("state") != "removing"]

    def repository(self, key: str) -> dict[str, Any] | None:
        """The published record of one repository (an index lookup), None before its first
        publish."""
        rows = self.graph.query("repository", q.REPOSITORY, repo=key)
        return rows[0] if rows else None

    def file_blobs(self, repo: str) -> dict[str, str]:
        """``{path: blob sha}`` of the repository's ``File`` nodes (names and keys only)."""
        rows = self.graph.query("file blobs", q.FILE_BLOBS, repo=repo)
        return {str(r["path"]): str(r["blob_sha"]) for r in rows}
