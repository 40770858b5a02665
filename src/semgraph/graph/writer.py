"""Publish one repository's code graph in ONE explicit transaction.

The transaction takes the ``:Repository`` node first (so two publishes of one repository
serialize) and replaces that repository's subgraph in place: it deletes the repository's
edges in bounded slices, upserts every ``File``/``Symbol``/``ExternalModule`` by key
(streamed from the parsed model), creates the edges (streamed from the resolution's SQLite
file), and finally deletes the nodes the new model no longer has. A repository with no node
in the graph yet (its first publish) has nothing to delete or match: its nodes are CREATEd.
Rows go in UNWIND batches of at most ``batch_size`` rows; run id, fingerprint, commit and
``indexed_at`` are written on ``:Repository`` in that transaction. Any failure rolls the
whole transaction back: readers keep seeing the previous graph, and other repositories are
never touched (every statement is keyed by this repository). Why nodes are upserted rather
than deleted and re-created: see :mod:`semgraph.graph.queries`.

Client memory is bounded by the batch size: nothing is accumulated across files (rows of
one source node are grouped only while they arrive consecutively, and a group never
exceeds the batch size). Statements are pipelined one deep: the next batch is built while the
server executes the previous one (its count is read after the next is sent), so the client's
row building and the server's work overlap; at most two batches are held.

A graph too large for one transaction on the server's memory settings fails with
:class:`~semgraph.errors.GraphTooLarge` naming the server's limit; it is never split.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from semgraph.config import Settings
from semgraph.db import Graph, graph_errors
from semgraph.errors import GraphError, GraphTooLarge, JobError
from semgraph.graph import queries as q
from semgraph.graph.resolve import Resolution
from semgraph.graph.symtab import CLASS_KINDS, file_key, symbol_rows
from semgraph.indexer.model import FileFacts, SkippedFile
from semgraph.logs import event

log = logging.getLogger(__name__)
DELETE_SLICE = 10_000  # nodes per sweep statement
DELETE_EDGE_SLICE = 50_000  # edges per delete statement
MAX_PARSE_ERROR_CHARS = 500
_EDGE_WITH_NODE = {"File": "CONTAINS", "Symbol": "DEFINES"}


@dataclass(frozen=True)
class RepoInfo:
    key: str
    url: str
    default_branch: str
    commit: str


@dataclass
class PublishStats:
    nodes: dict[str, int] = field(default_factory=dict)  # label -> created
    edges: dict[str, int] = field(default_factory=dict)  # type -> created
    deleted_nodes: int = 0  # nodes the new model no longer has
    deleted_edges: int = 0  # every edge of the previous graph (all are re-created)
    dropped_rows: int = 0  # rows whose endpoints were missing (a bug if ever non-zero)
    batches: int = 0
    tx_duration_s: float = 0.0
    first_publish: bool = False  # the repository had no node yet: nodes were CREATEd

    @property
    def total_nodes(self) -> int:
        return sum(self.nodes.values())

    @property
    def total_edges(self) -> int:
        return sum(self.edges.values())

    @property
    def throughput(self) -> float:
        """Nodes plus edges written per second of transaction."""
        total = self.total_nodes + self.total_edges
        return total / self.tx_duration_s if self.tx_duration_s > 0 else 0.0

    def as_run_fields(self) -> dict[str, Any]:
        """Flat fields for :meth:`semgraph.graph.runs.RunStore.update`."""
        return {
            "graph_nodes": self.total_nodes,
            "graph_edges": self.total_edges,
            "graph_nodes_by_label": dict(self.nodes),
            "graph_edges_by_type": dict(self.edges),
            "graph_deleted_nodes": self.deleted_nodes,
            "graph_deleted_edges": self.deleted_edges,
            "graph_dropped_rows": self.dropped_rows,
            "graph_tx_rows": self.total_nodes + self.total_edges,
            "graph_tx_batches": self.batches,
            "graph_tx_duration_s": round(self.tx_duration_s, 4),
            "graph_first_publish": self.first_publish,
        }


_ORDER = ("file", "node", "edge", "stats")  # a statement only refers to earlier kinds


@dataclass
class _Buffer:
    rows: list[dict[str, Any]] = field(default_factory=list)
    weight: int = 0  # rows of the graph (a grouped row holds several)


class _Batcher:
    """Buffers rows per statement. Before a buffer is sent, every buffer of an earlier kind
    is sent first, so a row never refers to a node still waiting in a buffer."""

    def __init__(self, tx: Any, repo: str, size: int, stats: PublishStats, hook: Any) -> None:
        self.tx, self.repo, self.size, self.stats, self.hook = tx, repo, size, stats, hook
        self.buffers: dict[tuple[str, str, str], _Buffer] = {}
        self.fresh = stats.first_publish  # CREATE forms: the repository has no node yet
        # the statement sent last, not yet read: (result, kind, what, rows it holds)
        self.pending: tuple[Any, str, str, int] | None = None

    def add(self, kind: str, what: str, cypher: str, row: dict[str, Any], weight: int = 1) -> None:
        """``kind`` is one of ``_ORDER``; ``what`` the label / edge type counted; ``weight``
        the graph rows ``row`` holds."""
        buf = self.buffers.setdefault((kind, what, cypher), _Buffer())
        buf.rows.append(row)
        buf.weight += weight
        self._maybe_send(kind, what, cypher, buf)

    def add_edge(self, what: str, cypher: str, src: str, dst: dict[str, Any]) -> None:
        """One edge; consecutive edges of one source share a row ``{src, dst: [...]}``."""
        buf = self.buffers.setdefault(("edge", what, cypher), _Buffer())
        last = buf.rows[-1] if buf.rows else None
        if last is not None and last["src"] == src:
            last["dst"].append(dst)
        else:
            buf.rows.append({"src": src, "dst": [dst]})
        buf.weight += 1
        self._maybe_send("edge", what, cypher, buf)

    def _maybe_send(self, kind: str, what: str, cypher: str, buf: _Buffer) -> None:
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
        # while the caller builds the next batch, and read when that one is sent
        result = self.tx.run(cypher, repo=self.repo, rows=buf.rows)
        self._settle()
        self.pending = (result, kind, what, buf.weight)
        self.stats.batches += 1
        buf.rows = []
        buf.weight = 0
        if self.hook is not None:
            self.hook(self.stats.batches)

    def _settle(self) -> None:
        if self.pending is None:
            return
        result, kind, what, weight = self.pending
        self.pending = None
        record = result.single()
        done = int(record[0]) if record is not None else 0
        if kind in ("file", "node"):
            self.stats.nodes[what] = self.stats.nodes.get(what, 0) + done
            edge = _EDGE_WITH_NODE.get(what)  # created by the same statement
            if edge is not None:
                self.stats.edges[edge] = self.stats.edges.get(edge, 0) + done
        elif kind == "edge":
            self.stats.edges[what] = self.stats.edges.get(what, 0) + done
        self.stats.dropped_rows += weight - done


class GraphWriter:
    """Replaces one repository's subgraph in one transaction."""

    def __init__(self, graph: Graph, settings: Settings) -> None:
        self.graph = graph
        self.settings = settings

    def publish(
        self,
        repo: RepoInfo,
        files: Callable[[], Iterable[FileFacts | SkippedFile]],
        resolution: Resolution,
        *,
        run_id: str,
        fingerprint: str,
        now: float,
        batch_size: int | None = None,
        on_batch: Callable[[int], None] | None = None,
        before_commit: Callable[[], None] | None = None,
    ) -> PublishStats:
        """Publish; ``on_batch`` (called with the number of batches run so far) and
        ``before_commit`` are test seams for fault injection, never used in production."""
        size = batch_size or self.settings.graph_batch_rows
        if size < 1:
            raise ValueError("batch_size must be at least 1")
        stats = PublishStats()
        started = time.monotonic()
        what = f"publish graph of {repo.key}"
        try:
            with graph_errors(what), self.graph.session() as session:
                tx = session.begin_transaction()
                try:
                    self._write(
                        tx, repo, files, resolution, run_id, fingerprint, now, size, stats, on_batch
                    )
                    if stats.dropped_rows:
                        raise JobError(
                            f"{stats.dropped_rows} graph rows of {repo.key} referred to nodes "
                            "that were not written (the parsed model and the resolution "
                            "disagree); nothing was published"
                        )
                    if before_commit is not None:
                        before_commit()
                    tx.commit()
                finally:
                    if not tx.closed():
                        tx.rollback()
        except GraphError as exc:
            if self.graph.dialect.is_out_of_memory(str(exc)):
                limit = self.graph.dialect.memory_limit_setting(str(exc))
                raise GraphTooLarge(
                    f"the graph of {repo.key} ({stats.total_nodes + stats.total_edges} rows "
                    f"written before the server refused) exceeds the server's transaction "
                    f"memory limit ({limit}); raise that limit: a publish is never split"
                ) from exc
            raise
        stats.tx_duration_s = time.monotonic() - started
        event(
            log,
            logging.INFO,
            "graph_publish",
            f"published {stats.total_nodes} nodes and {stats.total_edges} edges",
            repo=repo.key,
            run_id=run_id,
            duration_s=round(stats.tx_duration_s, 3),
            rows_per_s=round(stats.throughput),
        )
        return stats

    def _write(
        self,
        tx: Any,
        repo: RepoInfo,
        files: Callable[[], Iterable[FileFacts | SkippedFile]],
        res: Resolution,
        run_id: str,
        fingerprint: str,
        now: float,
        size: int,
        stats: PublishStats,
        hook: Callable[[int], None] | None,
    ) -> None:
        counts = res.counts["calls"]
        props = {
            "calls_total": counts["total"],
            "calls_resolved": counts["resolved"],
            "calls_ambiguous": counts["ambiguous"],
            "calls_external": counts["external"],
            "calls_unresolved": counts["unresolved"],
            "resolution_rate": round(res.rate, 4),
        }
        tx.run(
            q.PUBLISH_REPOSITORY,
            key=repo.key,
            url=repo.url,
            default_branch=repo.default_branch,
            commit=repo.commit,
            run_id=run_id,
            fingerprint=fingerprint,
            now=now,
            props=props,
        ).consume()
        present = tx.run(q.PUBLISH_HAS_NODES, repo=repo.key).single()
        stats.first_publish = not (present is not None and present["present"])
        if not stats.first_publish:
            stats.deleted_edges = _delete_all(
                tx,
                repo.key,
                DELETE_EDGE_SLICE,
                (
                    q.PUBLISH_DELETE_REPOSITORY_EDGES,
                    q.PUBLISH_DELETE_FILE_EDGES,
                    q.PUBLISH_DELETE_SYMBOL_EDGES,
                ),
            )
        batch = _Batcher(tx, repo.key, size, stats, hook)
        for item in files():
            if isinstance(item, FileFacts):
                _add_file(batch, repo.key, item)
        externals = q.PUBLISH_EXTERNALS_NEW if batch.fresh else q.PUBLISH_EXTERNALS
        for key, name in res.iter_externals():
            row = {"key": key, "repo": repo.key, "name": name}
            batch.add("node", "ExternalModule", externals, row)
        batch.flush("node")
        _add_edges(batch, res)
        batch.finish()
        if not stats.first_publish:
            stats.deleted_nodes = _delete_all(
                tx,
                repo.key,
                DELETE_SLICE,
                (q.PUBLISH_SWEEP_FILES, q.PUBLISH_SWEEP_SYMBOLS, q.PUBLISH_SWEEP_EXTERNALS),
            )


def _delete_all(tx: Any, repo_key: str, limit: int, statements: Iterable[str]) -> int:
    """Run each slice-deleting statement until it deletes fewer than ``limit``."""
    total = 0
    for cypher in statements:
        while True:
            record = tx.run(cypher, repo=repo_key, limit=limit).single()
            deleted = int(record["deleted"]) if record is not None else 0
            total += deleted
            if deleted < limit:
                break
    return total


def _add_file(batch: _Batcher, repo_key: str, facts: FileFacts) -> None:
    fkey = file_key(repo_key, facts.path)
    row: dict[str, Any] = {
        "key": fkey,
        "repo": repo_key,
        "path": facts.path,
        "language": facts.language,
        "blob_sha": facts.blob_sha,
        "loc": facts.line_count,
        "size_bytes": facts.size_bytes,
        "parse_status": str(facts.parse_status),
    }
    if facts.parse_error:
        row["parse_error"] = facts.parse_error[:MAX_PARSE_ERROR_CHARS]
    batch.add("file", "File", q.PUBLISH_FILES_NEW if batch.fresh else q.PUBLISH_FILES, row)
    rows = symbol_rows(repo_key, facts)
    kinds = {sym.key: sym.kind for sym in rows}
    by_label: dict[str, list[dict[str, Any]]] = {}
    for sym in rows:
        label = q.SYMBOL_LABELS.get(sym.kind, q.GENERIC_SYMBOL_LABEL)
        group = by_label.setdefault(label, [])
        group.append(
            {
                "key": sym.key,
                "repo": repo_key,
                "name": sym.name,
                "qualified_name": sym.qualified_name,
                "kind": sym.kind,
                "path": facts.path,
                "start_line": sym.start_line,
                "end_line": sym.end_line,
                "signature": sym.signature,
            }
        )
        if len(group) >= batch.size:  # a group never exceeds one batch
            _add_symbols(batch, fkey, label, by_label.pop(label))
    for label, group in by_label.items():
        _add_symbols(batch, fkey, label, group)
    for sym in rows:
        if sym.parent_key is None:
            continue
        parent_kind = kinds.get(sym.parent_key, "")
        if sym.kind == "method" and parent_kind in CLASS_KINDS:
            batch.add_edge("HAS_METHOD", q.PUBLISH_HAS_METHOD, sym.parent_key, {"key": sym.key})
        else:
            batch.add_edge("CONTAINS", q.PUBLISH_CONTAINS, sym.parent_key, {"key": sym.key})


def _add_symbols(batch: _Batcher, fkey: str, label: str, group: list[dict[str, Any]]) -> None:
    row = {"file": fkey, "symbols": group}
    cypher = (q.PUBLISH_SYMBOLS_NEW if batch.fresh else q.PUBLISH_SYMBOLS)[label]
    batch.add("node", "Symbol", cypher, row, weight=len(group))


def _add_edges(batch: _Batcher, res: Resolution) -> None:
    for imp in res.iter_imports():
        cypher = q.PUBLISH_IMPORTS_FILE if imp.dst_label == "File" else q.PUBLISH_IMPORTS_EXTERNAL
        batch.add_edge("IMPORTS", cypher, imp.src_key, {"key": imp.dst_key, "line": imp.line})
    for child, parent in res.iter_inherits():
        batch.add_edge("INHERITS", q.PUBLISH_INHERITS, child, {"key": parent})
    for call in res.iter_calls():
        dst = {
            "key": call.dst_key,
            "line": call.line,
            "tier": call.tier,
            "candidates": call.candidates,
        }
        batch.add_edge("CALLS", q.PUBLISH_CALLS, call.src_key, dst)
    for s in res.iter_symbol_stats():
        row = {
            "key": s.key,
            "unresolved": s.calls_unresolved,
            "external": s.calls_external,
            "ambiguous": s.calls_ambiguous,
            "possible": s.possible_callers,
        }
        batch.add("stats", "symbol", q.PUBLISH_SYMBOL_STATS, row)
    for key, n in res.iter_file_stats():
        batch.add("stats", "file", q.PUBLISH_FILE_STATS, {"key": key, "n": n})
