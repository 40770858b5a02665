"""A fixture repository through the real parser, resolution and graph server, for the call
resolution tests: :func:`publish` returns the reader of the published graph and the
resolution's counts."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.reader import GraphReader
from semgraph.graph.writer import GraphWriter, RepoInfo
from semgraph.indexer.parse import parse_repository
from semgraph.indexer.spill import SpillReader
from semgraph.resolve.resolver import resolve
from tests.repos import make_repo


def publish(
    graph: Graph, settings: Settings, tmp_path: Path, files: Mapping[str, str], name: str
) -> tuple[GraphReader, dict[str, Any]]:
    repo = make_repo(tmp_path / "repo", files)
    spill_path = tmp_path / "spill" / "x.spill"
    parse_repository(settings.model_copy(update={"pool_size": 1}), repo, spill_path)
    spill = SpillReader(spill_path)
    with resolve(lambda: iter(spill), name, tmp_path / "res") as res:
        stats = GraphWriter(graph, settings).publish(
            RepoInfo(name, str(repo), "main", "c1"), res, run_id="r1", fingerprint="fp", now=1.0
        )
        counts = res.counts
    assert stats.dropped_rows == 0
    return GraphReader(graph), counts


def callees(reader: GraphReader, qn: str, repo: str) -> set[tuple[str, str]]:
    """(callee qualified name, tier) of every CALLS edge leaving ``qn``."""
    return {(e["qualified_name"], e["tier"]) for e in reader.callees(qn, repo=repo).edges}


def callers(reader: GraphReader, qn: str, repo: str) -> set[tuple[str, str]]:
    return {(e["qualified_name"], e["tier"]) for e in reader.callers(qn, repo=repo).edges}
