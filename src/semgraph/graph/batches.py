"""The statements of one publish, batched: :class:`Batcher` buffers rows per statement and
sends them in dependency order, counting what the server did into :class:`PublishStats`.

Client memory is bounded by the batch size: nothing is accumulated across files (rows of
one source node are grouped only while they arrive consecutively, and a group never
exceeds the batch size). Statements are pipelined one deep: the next batch is built while the
server executes the previous one (its count is read after the next is sent), so the client's
row building and the server's work overlap; at most two batches are held. This is safe on
Memgraph only because every statement returns one row (a count): Memgraph takes the next RUN
of an explicit transaction only once the previous result has been pulled whole, and a one-row
result always is. A statement returning more rows than one fetch must not be pipelined.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from semgraph.db import Tx
from semgraph.faults import Faults
from semgraph.graph import publish_queries as q
from semgraph.graph.publish_stats import PublishStats

# kinds of statements, in the order they must reach the server: a statement only refers to
# nodes of earlier kinds, an unlinked group is re-created after, and deletions come last
# (the published state of a file goes after its node, whose SET f = row drops it)
_ORDER = ("file", "node", "unlink", "edge", "state", "drop")
#: the edge each node-writing statement creates along with its node
_STRUCTURAL = {
    q.PUBLISH_FILES_NEW: "CONTAINS",
    q.PUBLISH_FILES: "CONTAINS",
    **{cypher: "DEFINES" for cypher in q.PUBLISH_SYMBOLS_NEW.values()},
    **{cypher: "DEFINES" for cypher in q.PUBLISH_SYMBOLS.values()},
}


@dataclass
class _Buffer:
    rows: list[Any] = field(default_factory=list)
    weight: int = 0  # rows of the graph (a grouped row holds several)


class Batcher:
    """Buffers rows per statement. Before a buffer is sent, every buffer of an earlier kind
    is sent first, so a row never refers to a node still waiting in a buffer."""

    def __init__(self, tx: Tx, repo: str, size: int, stats: PublishStats, faults: Faults) -> None:
        self.tx, self.repo, self.size, self.stats, self.faults = tx, repo, size, stats, faults
        self.buffers: dict[tuple[str, str, str], _Buffer] = {}
        # the statement sent last, not yet read: (result, kind, what, cypher, graph rows it
        # holds, statement rows it holds)
        self.pending: tuple[Any, str, str, str, int, int] | None = None

    def add(self, kind: str, what: str, cypher: str, row: Any, weight: int = 1) -> None:
        """``kind`` is one of ``_ORDER``; ``what`` the label / edge type counted; ``weight``
        the graph rows ``row`` holds."""
        buf = self.buffers.setdefault((kind, what, cypher), _Buffer())
        buf.rows.append(row)
        buf.weight += weight
        if buf.weight >= self.size:
            if kind != _ORDER[0]:
                self.flush(_ORDER[_ORDER.index(kind) - 1])
            self._send(kind, what, cypher, buf)

    def flush(self, upto: str = _ORDER[-1]) -> None:
        """Send every buffer of kind ``upto`` and earlier kinds, in order."""
        for kind in _ORDER[: _ORDER.index(upto) + 1]:
            for (k, what, cypher), buf in self.buffers.items():
                if k == kind and buf.rows:
                    self._send(k, what, cypher, buf)

    def finish(self) -> None:
        """Send every buffer and read every statement's count."""
        self.flush()
        self._settle()

    def _send(self, kind: str, what: str, cypher: str, buf: _Buffer) -> None:
        # tx.run returns once the server has started the statement; its rows are executed
        # while the caller builds the next batch, and read when that one is sent (one row:
        # see the module docstring on Memgraph)
        result = self.tx.run(cypher, repo=self.repo, rows=buf.rows)
        self._settle()
        self.pending = (result, kind, what, cypher, buf.weight, len(buf.rows))
        self.stats.batches += 1
        buf.rows = []
        buf.weight = 0
        self.faults.point("publish.batch", n=self.stats.batches)

    def _settle(self) -> None:
        if self.pending is None:
            return
        result, kind, what, cypher, weight, sent = self.pending
        self.pending = None
        record = result.single()
        done = int(record[0]) if record is not None else 0
        stats = self.stats
        if kind == "unlink":
            stats.deleted_edges += done
            return  # a group may have had any number of edges
        if kind == "state":  # one statement row per file (or the externals): not graph rows
            stats.state_rows += done
            stats.dropped_rows += sent - done
            return
        if kind == "drop":
            stats.deleted_nodes += done
        elif kind in ("file", "node"):
            stats.nodes[what] = stats.nodes.get(what, 0) + done
            edge = _STRUCTURAL.get(cypher)
            if edge is not None:
                stats.edges[edge] = stats.edges.get(edge, 0) + done
        else:
            stats.edges[what] = stats.edges.get(what, 0) + done
        stats.dropped_rows += weight - done
