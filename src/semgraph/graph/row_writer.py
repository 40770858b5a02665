"""How each form of a publish (:class:`~semgraph.graph.publish_stats.PublishMode`, chosen by
:class:`semgraph.graph.writer.GraphWriter`) sends a file's rows (:class:`RowWriter`): a first
publish CREATEs every row, a full publish upserts every row by key, a delta publish writes
only the node rows and edge groups whose digest differs from the published state's, and
unlinks or drops what the new model no longer has. Every form writes, in the same transaction,
the published state of each file it wrote (:mod:`semgraph.graph.pubstate`).
"""

from __future__ import annotations

from typing import Any

from semgraph.graph import publish_queries as q
from semgraph.graph.batches import Batcher
from semgraph.graph.publish_stats import PublishMode
from semgraph.graph.pubstate import (
    EXTERNALS,
    NODE,
    Entries,
    PublishedState,
    bundle_text,
    encode,
    payload_bytes,
)
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
from semgraph.resolve.resolution import Resolution
from semgraph.resolve.symtab import external_key, file_key
from semgraph.xrepo.relink import Held

#: (edge type, target label) -> the statement creating a group's edges
_CREATE_EDGES = {
    ("CONTAINS", SYMBOL): q.PUBLISH_CONTAINS,
    ("HAS_METHOD", SYMBOL): q.PUBLISH_HAS_METHOD,
    ("INHERITS", SYMBOL): q.PUBLISH_INHERITS,
    ("CALLS", SYMBOL): q.PUBLISH_CALLS,
    ("IMPORTS", FILE): q.PUBLISH_IMPORTS_FILE,
    ("IMPORTS", EXTERNAL): q.PUBLISH_IMPORTS_EXTERNAL,
    ("CALLS_EXTERNAL", EXTERNAL): q.PUBLISH_CALLS_EXTERNAL,
}
_SOURCE_LABEL = {"IMPORTS": FILE}  # other edge types leave a Symbol


class RowWriter:
    """Sends one publish's rows in its mode, file by file, and writes every row's digest into
    the state the publish leaves in the graph (``state``: the published one a delta compares
    against; empty for the other forms)."""

    def __init__(
        self, batch: Batcher, mode: PublishMode, state: PublishedState, res: Resolution
    ) -> None:
        self.batch, self.mode, self.state, self.res = batch, mode, state, res
        self.delta = mode is PublishMode.DELTA
        self.stats = batch.stats
        #: symbols whose external call sites were written or unlinked: their links are redone
        self.external_sources: set[str] = set()
        #: a delta: the symbols and files it wrote or dropped, and the names its files held
        #: before (what its dependents' re-link reads, :mod:`semgraph.xrepo.relink`)
        self.symbols_added: set[str] = set()
        self.symbols_updated: set[str] = set()
        self.symbols_dropped: set[str] = set()
        self.bases_changed: set[str] = set()  # classes whose INHERITS group changed
        self.files_changed: set[str] = set()
        self.held = Held()

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
        if bundle is not None:
            key = file_key(self.res.repo_key, path)
            text = bundle_text(bundle)
            rows = encode(key, key, text, now)
            self.stats.state_bytes += payload_bytes(rows, text)
            row = {"key": key, "bundle": text, "rows": rows}
            self.batch.add("state", FILE, q.PUBLISH_FILE_STATE, row, len(rows))

    def removed(self, path: str) -> None:
        """A file the model no longer has: its nodes go, with every edge they have (and its
        published state, which lives on its node)."""
        self._gone(self.state.entries(path), {})

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
        if self.delta and before == now:
            return
        repo = self.res.repo_key
        rows = encode(repo, external_key(repo, ""), "", now)
        self.stats.state_bytes += payload_bytes(rows)
        self.batch.add("state", "Repository", q.PUBLISH_EXTERNALS_STATE, rows, len(rows))

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
        if node.label == SYMBOL:
            (self.symbols_added if had is None else self.symbols_updated).add(node.key)
        elif node.label == FILE:
            self.files_changed.add(node.key)
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
        if g.type == "CALLS_EXTERNAL":
            self.external_sources.add(g.src)
        elif g.type == "INHERITS" and self.delta:  # its inherited members may differ
            self.bases_changed.add(g.src)
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
                if label in (SYMBOL, FILE):
                    (self.symbols_dropped if label == SYMBOL else self.files_changed).add(key)
            else:
                edge, dst_label = kind.split(":", 1)
                if edge == "CALLS_EXTERNAL":
                    self.external_sources.add(key)
                elif edge == "INHERITS":
                    self.bases_changed.add(key)
                self._unlink(edge, _SOURCE_LABEL.get(edge, SYMBOL), dst_label, key)

    def _unlink(self, edge: str, src_label: str, dst_label: str, src: str) -> None:
        self.stats.changed_groups += 1
        cypher = q.PUBLISH_UNLINK[(edge, src_label, dst_label)]
        self.batch.add("unlink", edge, cypher, {"src": src})
