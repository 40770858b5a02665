"""The tools as plain, synchronous functions over a :class:`Backend`: each returns the
answer (a JSON-ready dict) or raises :class:`ToolFailure`; store failures become
``store_unavailable``, never a stack trace. :mod:`semgraph.mcp.server` registers them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from semgraph.errors import (
    GraphInputError,
    SearchNotIndexed,
    SearchQueryError,
    StoreError,
)
from semgraph.localize.locate import MAX_FILES, SEARCH_CHUNKS, localize
from semgraph.localize.rank import LocalizeOptions
from semgraph.mcp import graph_tools, source
from semgraph.mcp.backend import Allow, Backend, Scope
from semgraph.mcp.envelope import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    Page,
    ToolFailure,
    check_limit,
    completeness,
    decode_cursor,
)
from semgraph.search.embed import Embedder
from semgraph.search.query import MAX_K, search_answer

_embedder_lock = threading.Lock()
LOCALIZE_DEFAULT_FILES = 10


class Tools:
    """One per server; ``allowed`` is set per call by the transport (HTTP tokens)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._embedder: Embedder | None = None

    def embedder(self) -> Embedder:
        with _embedder_lock:
            if self._embedder is None:
                self._embedder = Embedder(self.backend.settings)
            return self._embedder

    def call(self, tool: str, allowed: Allow, args: dict[str, Any]) -> dict[str, Any]:
        """Run ``tool``; the answer or an error object (``{"error": {...}}``)."""
        handler: Callable[..., dict[str, Any]] = getattr(self, f"_{tool}")
        try:
            return handler(allowed, **args)
        except ToolFailure as exc:
            return exc.to_dict()
        except (GraphInputError, SearchQueryError) as exc:
            return ToolFailure("invalid_argument", exc.message[:300]).to_dict()
        except StoreError as exc:
            kind = type(exc).__name__
            return ToolFailure(
                "store_unavailable",
                f"a data store failed ({kind}); retry later. {exc.message[:200]}",
                retryable=True,
            ).to_dict()

    def _scope(self, allowed: Allow, repo: str | None) -> Scope:
        return Scope(self.backend, allowed, repo).load()

    def _paged(
        self,
        tool: str,
        allowed: Allow,
        args: dict[str, Any],
        default: int = DEFAULT_LIMIT,
        most: int = MAX_LIMIT,
    ) -> tuple[Scope, int, int, dict[str, Any]]:
        """(scope, offset, limit, the cursor's arguments) of a paged tool's call."""
        cursor = args.pop("cursor", None)
        limit = check_limit(args.pop("limit", None), default, most)
        scope = self._scope(allowed, args.get("repo"))
        offset = decode_cursor(cursor, tool, {**args, "limit": limit}, scope.runs)
        return scope, offset, limit, {**args, "limit": limit}

    def _search_code(self, allowed: Allow, **args: Any) -> dict[str, Any]:
        scope, offset, limit, key = self._paged("search_code", allowed, args)
        text = str(args["text"])
        head: dict[str, Any] = {"tool": "search_code", "text": text[:200]}
        if not scope.indexed():
            return _not_indexed(head, scope)
        try:
            answer = search_answer(
                self.backend.search,
                self.backend.settings,
                self.embedder(),
                text,
                repo=args.get("repo"),
                lang=args.get("language"),
                path_prefix=args.get("path_prefix"),
                k=MAX_K,
                role=args.get("role"),
            )
        except SearchNotIndexed:
            return _not_indexed(head, scope)
        hits = answer.hits
        head["truncated"] = answer.truncated
        head["semantic"] = {
            repo: s.to_dict() for repo, s in sorted(answer.semantic.items()) if scope.visible(repo)
        }
        if answer.notice:
            head["notice"] = answer.notice
        rows = [h.to_dict() for h in hits if scope.visible(h.repo)]
        for row in rows:
            row.pop("index", None)
        mismatched = sorted({r["repo"] for r in rows if r["run_id"] != scope.runs.get(r["repo"])})
        causes = _ranked_causes(len(hits), MAX_K, mismatched)
        repos = {r["repo"] for r in rows} or None
        paged = Page("search_code", key, scope.runs, rows, offset, limit, len(hits) < MAX_K)
        return self._answer(head, scope, paged, causes, repos, "no chunk matches")

    def _localize(self, allowed: Allow, **args: Any) -> dict[str, Any]:
        scope, offset, limit, key = self._paged(
            "localize", allowed, args, LOCALIZE_DEFAULT_FILES, MAX_FILES
        )
        text = str(args["text"])
        mode = args.get("mode") or "hybrid"
        options = LocalizeOptions.parse(args.get("options"))  # bad: invalid_argument
        head: dict[str, Any] = {"tool": "localize", "text": text[:200]}
        indexed = sorted(k for k, state in scope.states.items() if state.indexed)
        repo = args.get("repo") or (indexed[0] if len(indexed) == 1 else None)
        if repo is None and len(indexed) > 1:
            raise ToolFailure(
                "invalid_argument",
                f"{len(indexed)} repositories are indexed: name one (repo); "
                "index_status() lists them",
                field="repo",
            )
        if repo is None or repo not in indexed:
            return _not_indexed(head, scope)
        try:
            answer = localize(
                self.backend.search,
                self.backend.graph,
                self.backend.settings,
                self.embedder(),
                text,
                repo=repo,
                k=MAX_FILES,
                mode=mode,
                options=options,
            )
        except SearchNotIndexed:
            return _not_indexed(head, scope, [repo])
        head.update(repo=repo, truncated=answer.truncated, mentions=answer.mentions.to_dict())
        if args.get("options") or args.get("mode"):
            head.update(mode=mode, options=options.to_dict())
        if answer.notice:
            head["notice"] = answer.notice
        served = answer.run_id is not None and answer.run_id != scope.runs.get(repo)
        causes = _ranked_causes(answer.chunks_ranked, SEARCH_CHUNKS, [repo] if served else [])
        causes += scope.file_causes([repo])
        rows = answer.files
        paged = Page("localize", key, scope.runs, rows, offset, limit, len(rows) < MAX_FILES)
        return self._answer(
            head, scope, paged, causes, [repo], "nothing in the text matches a file"
        )

    def _answer(
        self,
        head: dict[str, Any],
        scope: Scope,
        page: Page,
        causes: list[str],
        repos: Iterable[str] | None,
        empty_reason: str,
    ) -> dict[str, Any]:
        """The answer of a search tool: its status, completeness and freshness after ``head``,
        then the page of rows."""
        head["status"] = "ok" if page.rows else "empty"
        if not page.rows:
            head["empty_reason"] = empty_reason
        head["completeness"] = completeness(causes)
        head["freshness"] = scope.freshness(repos)
        return page.render(head, self.backend.tokens)

    def _find_definition(self, allowed: Allow, **args: Any) -> dict[str, Any]:
        scope, offset, limit, key = self._paged("find_definition", allowed, args)
        return graph_tools.find_definition(
            scope, args["name"], args.get("kind"), offset, limit, key
        )

    def _callers(self, allowed: Allow, **args: Any) -> dict[str, Any]:
        return self._walk("callers", allowed, args)

    def _callees(self, allowed: Allow, **args: Any) -> dict[str, Any]:
        return self._walk("callees", allowed, args)

    def _walk(self, kind: str, allowed: Allow, args: dict[str, Any]) -> dict[str, Any]:
        scope, offset, limit, key = self._paged(kind, allowed, args)
        return graph_tools.callers_or_callees(
            scope, kind, args["name"], args.get("depth"), offset, limit, key
        )

    def _impact(self, allowed: Allow, **args: Any) -> dict[str, Any]:
        scope, offset, limit, key = self._paged("impact", allowed, args)
        summary = bool(args.get("summary", False))
        return graph_tools.impact(
            scope, args["name"], args.get("depth"), summary, offset, limit, key
        )

    def _get_snippet(self, allowed: Allow, **args: Any) -> dict[str, Any]:
        scope = self._scope(allowed, args["repo"])
        return source.get_snippet(scope, args["path"], args.get("start_line"), args.get("end_line"))

    def _index_status(self, allowed: Allow, **args: Any) -> dict[str, Any]:
        scope, offset, limit, key = self._paged("index_status", allowed, args)
        rows = []
        for state in scope.states.values():
            run = state.run or {}
            stats = state.stats()
            rows.append(
                {
                    **scope.freshness([state.key])[0],
                    "jobs": _job_counts(state.jobs),
                    "last_failed_job": next(
                        (
                            {"id": j.id, "commit": j.commit, "error": (j.last_error or "")[:300]}
                            for j in state.jobs
                            if j.status.value in ("failed", "quarantined")
                        ),
                        None,
                    ),
                    "run_status": run.get("status"),
                    "resolution_rate": stats.get("resolution_rate", run.get("resolution_rate")),
                    "resolution": stats.get("resolution"),
                    "files_by_status": (stats.get("parse") or {}).get("files_by_status"),
                    "skipped_by_reason": state.skipped(),
                }
            )
        head: dict[str, Any] = {"tool": "index_status", "status": "ok" if rows else "empty"}
        if not rows:
            head["empty_reason"] = "repository not indexed"
        head["completeness"] = completeness([])
        page = Page("index_status", key, scope.runs, rows, offset, limit)
        return page.render(head, self.backend.tokens)


def _job_counts(jobs: list[Any]) -> dict[str, int]:
    counts = {"pending": 0, "running": 0, "failed": 0}
    for job in jobs:
        status = job.status.value
        if status in ("failed", "quarantined"):
            counts["failed"] += 1
        elif status in counts:
            counts[status] += 1
    return counts


def _not_indexed(
    head: dict[str, Any], scope: Scope, repos: list[str] | None = None
) -> dict[str, Any]:
    """A search tool's answer when there is no search index to ask."""
    head.update(status="empty", empty_reason="repository not indexed")
    head["freshness"] = scope.freshness(repos)
    return head


def _ranked_causes(ranked: int, most: int, mismatched: Iterable[str]) -> list[str]:
    """Why a search tool's answer may be incomplete: the search ranked only its best ``most``
    chunks, and repositories whose search index serves another run than their graph."""
    causes = [f"ranked_search: only the best {most} chunks are ranked"] if ranked >= most else []
    return causes + [
        f"{key}: the search index serves another run than the graph" for key in mismatched
    ]
