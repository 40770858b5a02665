"""What the tools share: the stores, the token counter, the caller's repository allowlist,
and the scope of one call (the repositories it may answer from, and their runs)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.reader import GraphReader
from semgraph.mcp.envelope import ToolFailure
from semgraph.mcp.freshness import RepoState, freshness, load_state
from semgraph.mcp.tokens import TokenCounter
from semgraph.queue.store import JobStore

MAX_REPO_CHARS = 512
#: the caller's repository allowlist as a predicate over repository keys (None: every one)
Allow = Callable[[str], bool] | None


@dataclass
class Backend:
    settings: Settings
    graph: Graph
    search: elasticsearch.Elasticsearch
    store: JobStore
    tokens: TokenCounter

    @property
    def reader(self) -> GraphReader:
        return GraphReader(self.graph)


@dataclass
class Scope:
    """The repositories one call answers from. ``allowed`` is the caller's allowlist (None:
    every repository); a repository outside it is answered exactly like an unknown one."""

    backend: Backend
    allowed: Allow
    repo: str | None
    states: dict[str, RepoState] = field(default_factory=dict)

    def visible(self, key: str) -> bool:
        return self.allowed is None or self.allowed(key)

    def load(self) -> Scope:
        """Reads the repository (or every visible one) with its published run and jobs.
        A named repository that neither the graph nor the queue knows is ``unknown_repository``."""
        b = self.backend
        if self.repo is not None:
            if not self.repo.strip() or len(self.repo) > MAX_REPO_CHARS or "\x00" in self.repo:
                raise ToolFailure("invalid_argument", "repo must be a repository key", field="repo")
            state = load_state(b.reader, b.store, self.repo)
            if not self.visible(self.repo) or (state.record is None and not state.jobs):
                raise ToolFailure(
                    "unknown_repository",
                    f"no repository {self.repo[:200]!r} is known; index_status() lists them",
                    field="repo",
                )
            self.states[self.repo] = state
            return self
        for row in b.reader.repositories():
            key = str(row["key"])
            if self.visible(key):
                self.states[key] = load_state(b.reader, b.store, key)
        return self

    @property
    def runs(self) -> dict[str, str | None]:
        return {k: s.run_id for k, s in self.states.items()}

    def indexed(self) -> bool:
        return any(s.indexed for s in self.states.values())

    def filter(self, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r for r in rows if self.visible(str(r.get("repo")))]

    def freshness(self, repos: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Freshness of ``repos`` (default: the named repository, or every one in scope)."""
        keys = sorted(set(repos)) if repos is not None else sorted(self.states)
        settings = self.backend.settings
        return [freshness(settings, self.states[k]) for k in keys if k in self.states]

    def file_causes(self, repos: Iterable[str]) -> list[str]:
        """Completeness causes that come from the files of ``repos`` the run could not parse."""
        causes = []
        for key in sorted(set(repos)):
            state = self.states.get(key)
            if state is not None and state.parse_failed():
                causes.append(f"{key}: {state.parse_failed()} files parse_failed (text only)")
        return causes
