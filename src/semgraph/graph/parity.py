"""Graph parity: does the live subgraph of a repository equal the graph a fresh full publish
of the same commit would write, node for node, edge for edge, property for property?

Both sides are streamed into one SQLite file as canonical text rows (a node: key, sorted
labels, properties as sorted JSON; an edge: source key, type, target key, properties) with
the side they came from, and compared as multisets by one grouped query, so neither side is
held in memory and a duplicated edge counts as a difference. The ``:Repository`` node's own
properties (run id, timestamps, published state) are not compared; its ``CONTAINS`` edges
are. Nor are the published state's properties on ``:File`` nodes (:data:`STATE_PROPS`): they
describe the graph to the next delta, they are not code; the parity test compares them apart.

The delta publish is proved against real full publishes by the model-based test in
``tests/integration/test_graph_parity.py``; ``semgraph check --graph-parity REPO`` runs the
same comparison on demand against the rows of :mod:`semgraph.graph.rows`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from semgraph.db import Graph
from semgraph.graph import queries as q
from semgraph.graph.pubstate import STATE_PROPS
from semgraph.graph.rows import external_rows, file_groups, file_nodes
from semgraph.resolve.resolution import Resolution

MAX_SAMPLES = 20
_STRUCTURAL = {"File": "CONTAINS", "Symbol": "DEFINES"}
_INSERT = "INSERT INTO rows (side, kind, ident) VALUES (?, ?, ?)"
_DIFF = """
SELECT kind, ident, sum(side = 0) - sum(side = 1) AS d FROM rows
GROUP BY kind, ident HAVING d != 0 ORDER BY kind, ident
"""
LIVE, MODEL = 0, 1


@dataclass
class ParityReport:
    repo: str
    live_rows: int = 0
    model_rows: int = 0
    only_live: int = 0  # rows the graph has and the model does not (or has more often)
    only_model: int = 0  # rows the model has and the graph does not
    samples: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.only_live == 0 and self.only_model == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "ok": self.ok,
            "live_rows": self.live_rows,
            "model_rows": self.model_rows,
            "only_live": self.only_live,
            "only_model": self.only_model,
            "samples": self.samples,
        }


def _node(key: str, labels: Iterable[str], props: dict[str, Any]) -> str:
    return json.dumps([key, sorted(labels), props], sort_keys=True, default=str)


def _edge(src: str, edge: str, dst: str, props: dict[str, Any]) -> str:
    return json.dumps([src, edge, dst, props], sort_keys=True, default=str)


def live_rows(graph: Graph, repo_key: str) -> Iterator[tuple[str, str]]:
    """(kind, canonical row) of every node and edge of the repository in the graph."""
    with graph.session() as session:
        for r in session.run(q.PARITY_NODES, repo=repo_key):
            props = {k: v for k, v in r["props"].items() if k not in STATE_PROPS}
            yield "node", _node(r["key"], r["labels"], props)
        for r in session.run(q.PARITY_EDGES, repo=repo_key):
            yield "edge", _edge(r["src"], r["type"], r["dst"], dict(r["props"]))


def model_rows(res: Resolution) -> Iterator[tuple[str, str]]:
    """(kind, canonical row) of every node and edge a full publish of ``res`` writes."""
    res.prepare_lookups()
    repo_key = res.repo_key
    for path, _ in res.file_bundles():
        nodes, groups = file_nodes(res, path)
        for node in nodes:
            labels = [node.label, *([node.kind_label] if node.kind_label else [])]
            yield "node", _node(node.key, labels, node.props)
            src = repo_key if node.label == "File" else nodes[0].key
            yield "edge", _edge(src, _STRUCTURAL[node.label], node.key, {})
        for g in [*groups, *file_groups(res, path)]:
            yield from _group_rows(g.src, g.type, g.dst)
    for ext in external_rows(res):
        yield "node", _node(ext.key, [ext.label], ext.props)


def _group_rows(src: str, edge: str, dst: list[dict[str, Any]]) -> Iterator[tuple[str, str]]:
    for d in dst:
        props = {k: v for k, v in d.items() if k != "key"}
        yield "edge", _edge(src, edge, d["key"], props)


def compare(
    repo_key: str,
    live: Iterable[tuple[str, str]],
    model: Iterable[tuple[str, str]],
    workdir: Path,
) -> ParityReport:
    """Compare two row streams (either may come from a live graph) as multisets."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "parity.sqlite"
    path.unlink(missing_ok=True)
    report = ParityReport(repo_key)
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("CREATE TABLE rows (side INTEGER, kind TEXT, ident TEXT)")
        report.live_rows = _load(db, LIVE, live)
        report.model_rows = _load(db, MODEL, model)
        for kind, ident, d in db.execute(_DIFF):
            if d > 0:
                report.only_live += d
            else:
                report.only_model += -d
            if len(report.samples) < MAX_SAMPLES:
                where = "only in the graph" if d > 0 else "missing from the graph"
                report.samples.append(f"{kind} {where} (x{abs(d)}): {ident[:400]}")
    finally:
        db.close()
        path.unlink(missing_ok=True)
    return report


def _load(db: sqlite3.Connection, side: int, rows: Iterable[tuple[str, str]]) -> int:
    n = 0
    batch: list[tuple[int, str, str]] = []
    for kind, ident in rows:
        batch.append((side, kind, ident))
        n += 1
        if len(batch) >= 5000:
            db.executemany(_INSERT, batch)
            batch = []
    db.executemany(_INSERT, batch)
    return n
