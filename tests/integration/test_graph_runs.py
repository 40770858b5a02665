"""Index runs and the ``graph``/``runs`` CLI against the real Bolt server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from semgraph.cli import app
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import GraphInputError, RunStateError
from semgraph.graph.runs import RunStore
from semgraph.graph.writer import GraphWriter, RepoInfo
from semgraph.resolve.resolver import resolve
from tests.graph_repos import shop_repo
from tests.optional import some

pytestmark = pytest.mark.integration


def test_run_lifecycle_with_nested_fields(graph: Graph) -> None:
    store = RunStore(graph)
    store.start("run-1", "shop", "c1", job_id="job-9", worker_id="w1", now=100.0)
    store.update(
        "run-1",
        phase_s={"parse": 1.5, "resolve": 0.25},
        calls_by_language={"python": {"resolved": 3, "unresolved": 1}},
        files_total=12,
        parse_failures=["a.py"],
    )
    run = store.finish("run-1", "succeeded", now=110.5, resolution_rate=0.75)
    assert run["phase_s"] == {"parse": 1.5, "resolve": 0.25}
    assert run["calls_by_language"] == {"python": {"resolved": 3, "unresolved": 1}}
    assert (run["status"], run["started_at"], run["finished_at"], run["duration_s"]) == (
        "succeeded",
        100.0,
        110.5,
        10.5,
    )
    assert (run["job_id"], run["worker_id"], run["commit"], run["files_total"]) == (
        "job-9",
        "w1",
        "c1",
        12,
    )
    assert run["parse_failures"] == ["a.py"]
    linked = graph.query(
        "of", "MATCH (:IndexRun {id: 'run-1'})-[:OF]->(r:Repository) RETURN r.key AS k"
    )
    assert linked == [{"k": "shop"}]
    with pytest.raises(RunStateError, match="already succeeded"):
        store.finish("run-1", "failed", now=120.0)
    assert some(store.get("run-1"))["status"] == "succeeded"


def test_diverged_run_can_be_finished_after_repair(graph: Graph) -> None:
    store = RunStore(graph)
    store.start("run-d", "shop", "c1", None, None, now=1.0)
    store.finish("run-d", "diverged", now=2.0, error="alias flip failed")
    assert store.finish("run-d", "succeeded", now=3.0)["status"] == "succeeded"


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"status": "x"}, "invalid run field"),
        ({"Bad-Name": 1}, "invalid run field"),
        ({"x_json": 1}, "invalid run field"),
        ({"obj": object()}, "unsupported value"),
        ({"mixed": [1, {"a": 1}]}, "unsupported value"),
    ],
)
def test_bad_run_fields_are_refused(graph: Graph, fields: dict[str, Any], match: str) -> None:
    store = RunStore(graph)
    store.start("run-b", "shop", "c1", None, None, now=1.0)
    with pytest.raises(GraphInputError, match=match):
        store.update("run-b", **fields)


def test_unknown_run_and_status(graph: Graph) -> None:
    store = RunStore(graph)
    with pytest.raises(RunStateError):
        store.update("missing", files=1)
    with pytest.raises(RunStateError):
        store.finish("missing", "failed", now=1.0)
    with pytest.raises(GraphInputError):
        store.finish("missing", "exploded", now=1.0)
    assert store.get("missing") is None


def test_list_newest_first_by_repo_and_status(graph: Graph) -> None:
    store = RunStore(graph)
    for i, repo in enumerate(["a", "b", "a", "a"]):
        store.start(f"r{i}", repo, f"c{i}", None, None, now=float(i))
    store.finish("r2", "noop", now=10.0)
    assert [r["id"] for r in store.list()] == ["r3", "r2", "r1", "r0"]
    assert [r["id"] for r in store.list(repo="a", limit=2)] == ["r3", "r2"]
    assert [r["id"] for r in store.list(status="noop")] == ["r2"]
    with pytest.raises(GraphInputError):
        store.list(limit=0)


@pytest.fixture
def published(graph: Graph, settings: Settings, tmp_path: Path) -> None:
    files = shop_repo()
    store = RunStore(graph)
    store.start("run-cli", "shop", "c1", "job-1", "w1", now=5.0)
    with resolve(lambda: iter(files), "shop", tmp_path / "r") as res:
        stats = GraphWriter(graph, settings).publish(
            RepoInfo("shop", "u", "main", "c1"),
            res,
            run_id="run-cli",
            fingerprint="fp",
            now=6.0,
        )
        store.finish("run-cli", "succeeded", now=7.0, calls=res.counts, **stats.as_run_fields())


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_cli_graph_queries(published: None) -> None:
    result = _cli("graph", "callers", "Base.save", "--repo", "shop", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [(e["qualified_name"], e["tier"]) for e in data["edges"]] == [
        ("shop.models.Order.total", "receiver")
    ]
    text = _cli("graph", "callees", "checkout").output
    assert "[ambiguous of 2]" in text and "[module]" in text
    # order.total(): a receiver of unknown type, the only `total` of the repository
    assert "shop.models.Order.total  [candidate: name only]" in text
    assert "not resolved in scope: unresolved=1, ambiguous=2, external=1" in text
    ambiguous = _cli("graph", "callers", "validate").output
    assert "is ambiguous; candidates:" in ambiguous and "shop.models.Order.validate" in ambiguous
    defs = _cli("graph", "def", "Order", "--json")
    assert json.loads(defs.output)["matches"][0]["path"] == "shop/models.py"
    imports = _cli("graph", "imports", "shop/service.py").output
    assert "-> requests  [external]" in imports


def test_cli_runs_list_and_show(published: None) -> None:
    listed = json.loads(_cli("runs", "list", "--repo", "shop", "--json").output)
    assert [r["id"] for r in listed] == ["run-cli"]
    shown = json.loads(_cli("runs", "show", "run-cli", "--json").output)
    assert shown["calls"]["calls"]["total"] == 30
    assert shown["graph_edges_by_type"]["CALLS"] == 21
    assert shown["graph_tx_duration_s"] > 0
    text = _cli("runs", "list").output
    assert "succeeded" in text
    assert re.search(r"started=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  took=\d+\.\ds  ", text), text


def test_cli_bad_input_exits_non_zero(published: None) -> None:
    runner = CliRunner()
    for args in (
        ["graph", "callers", "x", "--depth", "0"],
        ["graph", "callers", "x", "--depth", "50"],
        ["graph", "def", "x", "--limit", "0"],
        ["runs", "show", "nope"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code != 0, args
