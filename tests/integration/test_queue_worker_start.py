"""On Neo4j (no storage modes) the worker and ``semgraph serve`` start: the refusal of
Memgraph's IN_MEMORY_ANALYTICAL mode (tests/unit/test_unsafe_graph_refusal.py) asks nothing
of Neo4j and refuses nothing; a graph server that cannot be reached yet does not stop serve."""

from __future__ import annotations

import logging
import time

import pytest
from typer.testing import CliRunner

from semgraph.cli import app
from semgraph.commands.serve import _refuse_unsafe_graph
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.doctor import refuse_unsafe_graph, storage_mode

pytestmark = pytest.mark.integration


def test_neo4j_is_not_refused(graph: Graph, settings: Settings) -> None:
    assert storage_mode(graph) is None
    refuse_unsafe_graph(graph)
    _refuse_unsafe_graph(settings)


def test_the_worker_starts_and_runs_in_its_lane(graph: Graph) -> None:
    result = CliRunner().invoke(app, ["worker", "--once", "--lane", "small"])
    assert result.exit_code == 0, (result.output, result.exception)
    rows = graph.query("workers", "MATCH (w:Worker) RETURN w.lane AS lane, w.status AS status")
    assert rows == [{"lane": "small", "status": "stopped"}]


def test_serve_does_not_wait_for_an_unreachable_graph(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Nothing listens on port 9: the check gives up after the connect timeout (1 s here),
    logs that the storage mode went unchecked, and raises nothing."""
    away = settings.model_copy(
        update={"bolt_uri": "bolt://127.0.0.1:9", "bolt_connect_timeout_s": 1}
    )
    began = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="semgraph"):
        _refuse_unsafe_graph(away)
    waited = time.monotonic() - began
    assert [getattr(r, "action", "") for r in caplog.records].count("web_graph_unchecked") == 1
    # a refused connection answers at once; the bound leaves room for a loaded CI machine,
    # and is far below what waiting for the server (the driver's 30 s retry) would take
    assert waited < 10, waited
