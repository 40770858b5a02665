"""What the console's file view reads from the graph besides the file's text: the symbol
outline of a file and the resolved call sites in a window of its lines (each with its target
and resolution tier). Cypher: :data:`semgraph.graph.queries.FILE_OUTLINE` and ``FILE_CALLS``."""

from __future__ import annotations

from typing import Any

from semgraph.db import Graph
from semgraph.graph import queries as q
from semgraph.resolve.symtab import file_key

MAX_OUTLINE = 2000
MAX_CALLS = 5000


def outline(
    graph: Graph,
    repo: str,
    path: str,
    start: int = 1,
    end: int = 2**31 - 1,
    *,
    limit: int = MAX_OUTLINE,
) -> list[dict[str, Any]]:
    """The symbols ``path`` defines in the published graph that overlap lines
    ``start``..``end``, in line order."""
    key = file_key(repo, path)
    return graph.query("file outline", q.FILE_OUTLINE, key=key, start=start, end=end, limit=limit)


def calls(
    graph: Graph, repo: str, path: str, start: int, end: int, *, limit: int = MAX_CALLS
) -> list[dict[str, Any]]:
    """The resolved call sites on lines ``start``..``end`` of ``path`` with their targets."""
    key = file_key(repo, path)
    return graph.query("file calls", q.FILE_CALLS, key=key, start=start, end=end, limit=limit)
