"""Publish one repository's code graph in ONE explicit transaction, writing only what changed.

The transaction takes the ``:Repository`` node first (so two publishes of one repository
serialize) and reads the run id the graph carried before. Then one of three forms:

* **first publish** (the repository has no node yet): every node and edge is CREATEd;
* **delta publish** (the repository's published state on disk, :mod:`semgraph.graph.pubstate`,
  describes exactly that run): every node row and edge group (:mod:`semgraph.graph.rows`) is
  compared by digest with what the last publish wrote. New nodes are CREATEd, changed ones
  overwritten by key, changed edge groups unlinked and re-created; rows and groups the new
  model no longer has are deleted last. The transaction holds the change, not the
  repository. Resolution is global, so a group whose file did not change still changes when
  a new definition elsewhere resolves one of its calls: groups are compared whatever their
  file. A delta whose rows do not find the nodes the state promised (the graph was changed
  behind the state's back) is rolled back and done again as a full publish;
* **full publish in place** (no usable state): the repository's edges are deleted in bounded
  slices, every node upserted by key, every edge re-created, and the nodes the new model no
  longer has swept at the end.

Run id, fingerprint, commit and ``indexed_at`` are written on ``:Repository`` in the same
transaction. Any failure rolls the whole transaction back: readers keep seeing the previous
graph, and other repositories are never touched (every statement is keyed by this
repository). The new published state is written beside the old one and replaces it only
after the commit.

Client memory is bounded by the batch size: nothing is accumulated across files (rows of
one source node are grouped only while they arrive consecutively, and a group never
exceeds the batch size). Statements are pipelined one deep: the next batch is built while the
server executes the previous one (its count is read after the next is sent), so the client's
row building and the server's work overlap; at most two batches are held. This is safe on
Memgraph only because every statement returns one row (a count): Memgraph takes the next RUN
of an explicit transaction only once the previous result has been pulled whole, and a one-row
result always is. A statement returning more rows than one fetch must not be pipelined.

A graph too large for one transaction on the server's memory settings fails with
:class:`~semgraph.errors.GraphTooLarge` naming the server's limit; it is never split.
"""

from __future__ import annotations

import enum
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import GraphError, GraphTooLarge, JobError
from semgraph.graph import publish_queries as q
from semgraph.graph.pubstate import EXTERNALS, NODE, Entries, PublishedState, state_path
from semgraph.graph.resolution import Resolution
from semgraph.graph.rows import (
    EXTERNAL,
    FILE,
    SYMBOL,
    EdgeGroup,
    NodeRow,
    external_rows,
    file_groups,
    file_nodes,
)
from semgraph.logs import event

log = logging.getLogger(__name__)
DELETE_SLICE = 10_000  # nodes per sweep statement
DELETE_EDGE_SLICE = 50_000  # edges per delete statement


class PublishMode(enum.StrEnum):
    FIRST = "first"  # no node of the repository yet: CREATE everything
    DELTA = "delta"  # write the difference against the published state
    FULL = "full"  # no usable state: replace the subgraph in place


@dataclass(frozen=True)
class RepoInfo:
    key: str
    url: str
    default_branch: str
    commit: str


@dataclass
class PublishStats:
    nodes: dict[str, int] = field(default_factory=dict)  # label -> created or overwritten
    edges: dict[str, int] = field(default_factory=dict)  # type -> created
    deleted_nodes: int = 0  # nodes the new model no longer has
    deleted_edges: int = 0  # edges deleted: all of them (full), changed groups' (delta)
    dropped_rows: int = 0  # rows whose endpoints were missing (a bug if ever non-zero)
    batches: int = 0
    tx_duration_s: float = 0.0
    mode: str = PublishMode.FIRST.value
    unchanged_nodes: int = 0  # delta: node rows equal to the published ones, not written
    unchanged_groups: int = 0  # delta: edge groups equal to the published ones
    changed_groups: int = 0  # delta: edge groups unlinked (changed or gone)
    files_changed: int = 0  # files whose rows were built (every file unless a delta)
    files_removed: int = 0  # delta: files the model no longer has
    delta_fallback: str = ""  # why a delta was abandoned for a full publish, if it was

    @property
    def first_publish(self) -> bool:
        return self.mode == PublishMode.FIRST

    @property
    def total_nodes(self) -> int:
        return sum(self.nodes.values())

    @property
    def total_edges(self) -> int:
        return sum(self.edges.values())

    @property
    def rows_written(self) -> int:
        """Everything the transaction changed: nodes and edges written plus deleted."""
        return self.total_nodes + self.total_edges + self.deleted_nodes + self.deleted_edges

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
            "graph_tx_rows": self.rows_written,
            "graph_tx_batches": self.batches,
            "graph_tx_duration_s": round(self.tx_duration_s, 4),
            "graph_first_publish": self.first_publish,
            "graph_mode": self.mode,
            "graph_unchanged_nodes": self.unchanged_nodes,
            "graph_unchanged_groups": self.unchanged_groups,
            "graph_delta_fallback": self.delta_fallback,
            "graph_files_changed": self.files_changed,
            "graph_files_removed": self.files_removed,
        }


# kinds of statements, in the order they must reach the server: a statement only refers to
# nodes of earlier kinds, an unlinked group is re-created after, and deletions come last
_ORDER = ("file", "node", "unlink", "edge", "drop")
#: the edge each node-writing statement creates along with its node
_STRUCTURAL = {
    q.PUBLISH_FILES_NEW: "CONTAINS",
    q.PUBLISH_FILES: "CONTAINS",
    **{cypher: "DEFINES" for cypher in q.PUBLISH_SYMBOLS_NEW.values()},
    **{cypher: "DEFINES" for cypher in q.PUBLISH_SYMBOLS.values()},
}
#: (edge type, target label) -> the statement creating a group's edges
_CREATE_EDGES = {
    ("CONTAINS", SYMBOL): q.PUBLISH_CONTAINS,
    ("HAS_METHOD", SYMBOL): q.PUBLISH_HAS_METHOD,
    ("INHERITS", SYMBOL): q.PUBLISH_INHERITS,
    ("CALLS", SYMBOL): q.PUBLISH_CALLS,
    ("IMPORTS", FILE): q.PUBLISH_IMPORTS_FILE,
    ("IMPORTS", EXTERNAL): q.PUBLISH_IMPORTS_EXTERNAL,
}
_SOURCE_LABEL = {"IMPORTS": FILE}  # other edge types leave a Symbol


class _DeltaMismatch(Exception):
    """The graph does not hold what the published state says: redo as a full publish."""


@dataclass
class _Buffer:
    rows: list[Any] = field(default_factory=list)
    weight: int = 0  # rows of the graph (a grouped row holds several)


class _Batcher:
    """Buffers rows per statement. Before a buffer is sent, every buffer of an earlier kind
    is sent first, so a row never refers to a node still waiting in a buffer."""

    def __init__(self, tx: Any, repo: str, size: int, stats: PublishStats, hook: Any) -> None:
        self.tx, self.repo, self.size, self.stats, self.hook = tx, repo, size, stats, hook
        self.buffers: dict[tuple[str, str, str], _Buffer] = {}
        # the statement sent last, not yet read: (result, kind, what, cypher, rows it holds)
        self.pending: tuple[Any, str, str, str, int] | None = None

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
        self.pending = (result, kind, what, cypher, buf.weight)
        self.stats.batches += 1
        buf.rows = []
        buf.weight = 0
        if self.hook is not None:
            self.hook(self.stats.batches)

    def _settle(self) -> None:
        if self.pending is None:
            return
        result, kind, what, cypher, weight = self.pending
        self.pending = None
        record = result.single()
        done = int(record[0]) if record is not None else 0
        stats = self.stats
        if kind == "unlink":
            stats.deleted_edges += done
            return  # a group may have had any number of edges
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


class _Rows:
    """Sends one publish's rows in its mode, file by file, and records every row's digest in
    the state the publish leaves."""

    def __init__(
        self, batch: _Batcher, mode: PublishMode, state: PublishedState, res: Resolution
    ) -> None:
        self.batch, self.mode, self.state, self.res = batch, mode, state, res
        self.delta = mode is PublishMode.DELTA
        self.stats = batch.stats

    def nodes(self, path: str) -> Entries:
        """Pass 1: the file's nodes and its structure edges; returns the file's entries."""
        nodes, groups = file_nodes(self.res, path)
        before = self.state.entries(path) if self.delta else {}
        now: Entries = {}
        symbols: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for node in nodes:
            form = self._node_form(node, before, now)
            if form is None:
                continue
            if node.label == SYMBOL and form != "update":  # grouped per (file, label)
                where = (form, node.kind_label)
                symbols.setdefault(where, []).append(node.props)
                if len(symbols[where]) >= self.batch.size:
                    self._symbols(form, node.kind_label, nodes[0].key, symbols.pop(where))
            else:
                self._send_node(node, form)
        for (form, label), group in symbols.items():
            self._symbols(form, label, nodes[0].key, group)
        for g in groups:
            self._group(g, before, now)
        return now

    def edges(self, path: str, bundle: bytes | None, now: Entries) -> None:
        """Pass 2 (every node exists): the file's resolution edges; then what the file lost
        since the last publish is unlinked or dropped, and its state entries replaced."""
        before = self.state.entries(path) if self.delta else {}
        for g in file_groups(self.res, path):
            self._group(g, before, now)
        self._gone(before, now)
        self.state.replace(path, bundle, now)

    def removed(self, path: str) -> None:
        """A file the model no longer has: its nodes go, with every edge they have."""
        self._gone(self.state.entries(path), {})
        self.state.remove(path)

    def externals(self) -> None:
        before = self.state.entries(EXTERNALS) if self.delta else {}
        now: Entries = {}
        for node in external_rows(self.res):
            form = self._node_form(node, before, now)
            if form is not None:
                self._send_node(node, form)
        self._externals = (before, now)

    def externals_gone(self) -> None:
        before, now = self._externals
        self._gone(before, now)
        self.state.replace(EXTERNALS, None, now)

    def _node_form(self, node: NodeRow, before: Entries, now: Entries) -> str | None:
        """``new`` (CREATE), ``merge`` (upsert), ``update`` (SET by key) or None (unchanged)."""
        digest = node.digest
        now[(node.key, NODE + node.label)] = digest
        if self.mode is PublishMode.FIRST:
            return "new"
        if self.mode is PublishMode.FULL:
            return "merge"
        had = before.get((node.key, NODE + node.label))
        if had == digest:
            self.stats.unchanged_nodes += 1
            return None
        return "new" if had is None else "update"

    def _send_node(self, node: NodeRow, form: str) -> None:
        if node.label == FILE:
            cypher = {"new": q.PUBLISH_FILES_NEW, "merge": q.PUBLISH_FILES}.get(
                form, q.PUBLISH_FILES_UPDATE
            )
            self.batch.add("file", FILE, cypher, node.props)
        elif node.label == SYMBOL:  # an update: one row per symbol
            self.batch.add("node", SYMBOL, q.PUBLISH_SYMBOLS_UPDATE[node.kind_label], node.props)
        else:
            cypher = {"new": q.PUBLISH_EXTERNALS_NEW, "merge": q.PUBLISH_EXTERNALS}.get(
                form, q.PUBLISH_EXTERNALS_UPDATE
            )
            self.batch.add("node", EXTERNAL, cypher, node.props)

    def _symbols(self, form: str, label: str, fkey: str, group: list[dict[str, Any]]) -> None:
        cypher = (q.PUBLISH_SYMBOLS_NEW if form == "new" else q.PUBLISH_SYMBOLS)[label]
        self.batch.add("node", SYMBOL, cypher, {"file": fkey, "symbols": group}, len(group))

    def _group(self, g: EdgeGroup, before: Entries, now: Entries) -> None:
        digest = g.digest
        now[(g.src, g.kind)] = digest
        if self.delta:
            had = before.get((g.src, g.kind))
            if had == digest:
                self.stats.unchanged_groups += 1
                return
            if had is not None:
                self._unlink(g.type, g.src_label, g.dst_label, g.src)
        cypher = _CREATE_EDGES[(g.type, g.dst_label)]
        for i in range(0, len(g.dst), self.batch.size):
            chunk = g.dst[i : i + self.batch.size]
            self.batch.add("edge", g.type, cypher, {"src": g.src, "dst": chunk}, len(chunk))

    def _gone(self, before: Entries, now: Entries) -> None:
        """Unlink the published groups and delete the published nodes no longer there."""
        for key, kind in sorted(set(before) - set(now)):
            if kind.startswith(NODE):
                label = kind[len(NODE) :]
                self.batch.add("drop", label, q.PUBLISH_DROP[label], key)
            else:
                edge, dst_label = kind.split(":", 1)
                self._unlink(edge, _SOURCE_LABEL.get(edge, SYMBOL), dst_label, key)

    def _unlink(self, edge: str, src_label: str, dst_label: str, src: str) -> None:
        self.stats.changed_groups += 1
        cypher = q.PUBLISH_UNLINK[(edge, src_label, dst_label)]
        self.batch.add("unlink", edge, cypher, {"src": src})


class GraphWriter:
    """Publishes one repository's subgraph in one transaction."""

    def __init__(self, graph: Graph, settings: Settings) -> None:
        self.graph = graph
        self.settings = settings

    def publish(
        self,
        repo: RepoInfo,
        resolution: Resolution,
        *,
        run_id: str,
        fingerprint: str,
        now: float,
        batch_size: int | None = None,
        on_batch: Callable[[int], None] | None = None,
        before_commit: Callable[[], None] | None = None,
        delta: bool = True,
    ) -> PublishStats:
        """Publish the model ``resolution`` holds; ``delta=False`` never compares against the
        published state (a full publish, as a parity reference). ``on_batch`` (called with the
        number of batches run so far) and ``before_commit`` are test seams for fault
        injection, never used in production."""
        size = batch_size or self.settings.graph_batch_rows
        if size < 1:
            raise ValueError("batch_size must be at least 1")
        resolution.prepare_lookups()
        args = (repo, resolution, run_id, fingerprint, now, size, on_batch, before_commit)
        try:
            return self._publish_once(*args, delta)
        except _DeltaMismatch as exc:
            event(
                log,
                logging.WARNING,
                "graph_delta_fallback",
                f"delta publish abandoned, publishing in full: {exc}",
                repo=repo.key,
                run_id=run_id,
            )
            stats = self._publish_once(*args, False)
            stats.delta_fallback = str(exc)
            return stats

    def _publish_once(
        self,
        repo: RepoInfo,
        resolution: Resolution,
        run_id: str,
        fingerprint: str,
        now: float,
        size: int,
        on_batch: Callable[[int], None] | None,
        before_commit: Callable[[], None] | None,
        delta: bool,
    ) -> PublishStats:
        stats = PublishStats()
        started = time.monotonic()
        final = state_path(self.settings, repo.key)
        old = PublishedState.open(final) if delta else None
        state: PublishedState | None = None
        what = f"publish graph of {repo.key}"
        try:
            with self.graph.transaction(what) as tx:
                mode = self._begin(tx, repo, resolution, run_id, fingerprint, now, old)
                stats.mode = mode.value
                if mode is PublishMode.DELTA:
                    assert old is not None
                    state, old = old, None
                else:
                    state = PublishedState.create(final, run_id)
                batch = _Batcher(tx, repo.key, size, stats, on_batch)
                rows = _Rows(batch, mode, state, resolution)
                self._write(tx, repo.key, resolution, mode, rows)
                if stats.dropped_rows and mode is PublishMode.DELTA:
                    raise _DeltaMismatch(
                        f"{stats.dropped_rows} rows did not find the nodes the published "
                        "state promised (the graph was changed outside a publish)"
                    )
                if stats.dropped_rows:
                    raise JobError(
                        f"{stats.dropped_rows} graph rows of {repo.key} referred to nodes "
                        "that were not written (the parsed model and the resolution "
                        "disagree); nothing was published"
                    )
                if before_commit is not None:
                    before_commit()
        except GraphError as exc:
            _discard(state, old)
            if self.graph.dialect.is_out_of_memory(str(exc)):
                limit = self.graph.dialect.memory_limit_setting(str(exc))
                raise GraphTooLarge(
                    f"the graph of {repo.key} ({resolution.model_rows()} rows; "
                    f"{stats.rows_written} written before the server refused) exceeds the "
                    f"server's transaction memory limit ({limit}); raise that limit: a "
                    "publish is never split"
                ) from exc
            raise
        except BaseException:
            _discard(state, old)
            raise
        if old is not None:
            old.close()
        assert state is not None
        try:
            state.commit(run_id)
        except (OSError, sqlite3.Error) as exc:  # the graph committed: only the saving is lost
            event(
                log,
                logging.WARNING,
                "graph_state_not_saved",
                f"published state not saved ({exc}); the next publish is a full one",
                repo=repo.key,
                run_id=run_id,
            )
            state.discard()
        stats.tx_duration_s = time.monotonic() - started
        event(
            log,
            logging.INFO,
            "graph_publish",
            f"published ({stats.mode}) {stats.total_nodes} nodes and {stats.total_edges} edges, "
            f"deleted {stats.deleted_nodes} nodes and {stats.deleted_edges} edges",
            repo=repo.key,
            run_id=run_id,
            mode=stats.mode,
            rows_written=stats.rows_written,
            files_changed=stats.files_changed,
            duration_s=round(stats.tx_duration_s, 3),
            rows_per_s=round(stats.throughput),
        )
        return stats

    def _begin(
        self,
        tx: Any,
        repo: RepoInfo,
        res: Resolution,
        run_id: str,
        fingerprint: str,
        now: float,
        old: PublishedState | None,
    ) -> PublishMode:
        """Lock and stamp the repository node; choose the publish's form."""
        counts = res.counts["calls"]
        props = {
            "calls_total": counts["total"],
            "calls_resolved": counts["resolved"],
            "calls_ambiguous": counts["ambiguous"],
            "calls_external": counts["external"],
            "calls_unresolved": counts["unresolved"],
            "resolution_rate": round(res.rate, 4),
        }
        record = tx.run(
            q.PUBLISH_REPOSITORY,
            key=repo.key,
            url=repo.url,
            default_branch=repo.default_branch,
            commit=repo.commit,
            run_id=run_id,
            fingerprint=fingerprint,
            now=now,
            props=props,
        ).single()
        previous = record["previous"] if record is not None else None
        present = tx.run(q.PUBLISH_HAS_NODES, repo=repo.key).single()
        if not (present is not None and present["present"]):
            return PublishMode.FIRST
        if old is not None and previous is not None and old.run_id == previous:
            return PublishMode.DELTA
        return PublishMode.FULL

    def _write(
        self, tx: Any, repo_key: str, res: Resolution, mode: PublishMode, rows: _Rows
    ) -> None:
        stats = rows.stats
        if mode is PublishMode.FULL:
            stats.deleted_edges = _delete_all(
                tx,
                repo_key,
                DELETE_EDGE_SLICE,
                (
                    q.PUBLISH_DELETE_REPOSITORY_EDGES,
                    q.PUBLISH_DELETE_FILE_EDGES,
                    q.PUBLISH_DELETE_SYMBOL_EDGES,
                ),
            )
        if mode is PublishMode.DELTA:
            changed, removed = rows.state.plan(res.path)
            rows.state.begin()  # after the plan: SQLite detaches nothing inside a transaction
            bundles = dict(_bundles_of(res, changed))
        else:
            bundles, removed = dict(res.file_bundles()), []
        stats.files_changed, stats.files_removed = len(bundles), len(removed)
        entries: dict[str, Entries] = {}
        for path in bundles:  # pass 1: every node first, so pass 2's edges find their ends
            entries[path] = rows.nodes(path)
        rows.externals()
        rows.batch.flush("node")
        for path, bundle in bundles.items():
            rows.edges(path, bundle, entries.pop(path))
        for path in removed:
            rows.removed(path)
        rows.externals_gone()
        rows.batch.finish()
        if mode is PublishMode.FULL:
            stats.deleted_nodes = _delete_all(
                tx,
                repo_key,
                DELETE_SLICE,
                (q.PUBLISH_SWEEP_FILES, q.PUBLISH_SWEEP_SYMBOLS, q.PUBLISH_SWEEP_EXTERNALS),
            )


def _bundles_of(res: Resolution, paths: list[str]) -> Iterator[tuple[str, bytes]]:
    wanted = set(paths)
    for path, bundle in res.file_bundles():
        if path in wanted:
            yield path, bundle


def _discard(*states: PublishedState | None) -> None:
    for state in states:
        if state is not None:
            state.discard()


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
