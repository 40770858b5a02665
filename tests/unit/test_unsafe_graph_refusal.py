"""The worker, ``semgraph index`` and ``semgraph serve`` refuse to start on a Memgraph in
``IN_MEMORY_ANALYTICAL`` storage mode (issue 26 item 7: the queue's lock-by-write detects no
conflict there and nothing rolls back), with a message naming the setting; answered by the
recorded Memgraph rows of the doctor's tests. On Neo4j they start:
tests/integration/test_queue_worker_start.py."""

from __future__ import annotations

from typing import cast

import pytest
from typer.testing import CliRunner

from semgraph import db
from semgraph.cli import app
from semgraph.db import Graph
from semgraph.doctor import refuse_unsafe_graph, storage_mode
from semgraph.errors import ConfigError
from tests.unit.test_doctor_memgraph import FakeGraph

runner = CliRunner()
ANALYTICAL = "IN_MEMORY_ANALYTICAL"


@pytest.mark.parametrize("version", ["3.12.0", "2.21.0"])
def test_the_analytical_mode_is_refused_naming_the_setting(version: str) -> None:
    fake = cast(Graph, FakeGraph(version, storage_mode=ANALYTICAL))
    assert storage_mode(fake) == ANALYTICAL
    with pytest.raises(ConfigError) as caught:
        refuse_unsafe_graph(fake)
    message = str(caught.value)
    assert ANALYTICAL in message
    assert "--storage-mode=IN_MEMORY_TRANSACTIONAL" in message
    assert "STORAGE MODE IN_MEMORY_TRANSACTIONAL" in message


@pytest.mark.parametrize("version", ["3.12.0", "2.21.0"])
def test_the_transactional_mode_is_accepted(version: str) -> None:
    fake = cast(Graph, FakeGraph(version))
    assert storage_mode(fake) == "IN_MEMORY_TRANSACTIONAL"
    refuse_unsafe_graph(fake)


@pytest.mark.parametrize("command", [["worker", "--once"], ["serve"]])
def test_worker_and_serve_refuse_to_start_on_it(
    command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeGraph("3.12.0", storage_mode=ANALYTICAL)
    monkeypatch.setattr(db, "connect_graph", lambda settings: fake)
    result = runner.invoke(app, command)
    assert isinstance(result.exception, ConfigError), result.output
    assert "--storage-mode=IN_MEMORY_TRANSACTIONAL" in str(result.exception)
    assert [q for q in fake.asked if "STORAGE INFO" in q]  # it asked, then stopped
    assert not any("Worker" in q or "JobQueue" in q for q in fake.asked)


def test_an_unknown_lane_stops_the_worker_before_it_connects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_graph(settings: object) -> Graph:
        raise AssertionError("connected")

    monkeypatch.setattr(db, "connect_graph", no_graph)
    result = runner.invoke(app, ["worker", "--lane", "tiny"])
    assert isinstance(result.exception, ConfigError)
    assert "unknown lane 'tiny': one of small, large, any" in str(result.exception)
