"""The re-link of a library's dependents is a phase of the reindex job: timed with the others,
recorded in the run with its dependents, rows and outcome, shown by ``runs show`` and the
console; a failed re-link is recorded, fails the job, and the retry (a no-op) re-links again.
Real parser, graph server and Elasticsearch."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from typer.testing import CliRunner

from semgraph.cli import app
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.faults import Faults
from semgraph.graph.runs import RunStore
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest, ReindexResult, RunOutcome
from semgraph.indexer.run_state import RelinkFailed
from semgraph.indexer.sources import repo_key_for
from semgraph.web.console.job_pages import run_rows
from tests.integration.xrepo_repos import LIB, SVC, counts
from tests.repos import commit, make_repo
from tests.shared_kinds import shared_embedder

pytestmark = pytest.mark.integration

Run = Callable[..., ReindexResult]


class Boom(RuntimeError):
    pass


def _boom(**_: object) -> None:
    raise Boom("injected before the re-link")


@pytest.fixture
def run_index(settings: Settings, graph: Graph, es: Elasticsearch) -> Run:
    embedder = shared_embedder(settings)

    def run(source: Path, faults: Faults | None = None) -> ReindexResult:
        request = ReindexRequest(source=str(source))
        job = Reindex(settings, graph, es, request, embedder=embedder, faults=faults or Faults())
        return job.run()

    return run


def _run(graph: Graph, run_id: str) -> dict[str, Any]:
    run = RunStore(graph).get(run_id)
    assert run is not None
    return run


def _newest_run(graph: Graph, repo: str) -> dict[str, Any]:
    runs = RunStore(graph).list(repo=repo, limit=10)
    assert len(runs) == 2, runs  # the first index, then the change
    return runs[0]


def test_the_relink_is_a_recorded_phase(graph: Graph, tmp_path: Path, run_index: Run) -> None:
    lib = make_repo(tmp_path / "lib", LIB)
    svc = make_repo(tmp_path / "svc", SVC)
    first = run_index(lib)
    linked = run_index(svc)
    assert counts(graph, linked.repo_key)["linked"] == 4
    # the library's first index: nothing depended on it yet
    assert first.phases_s["relink"] >= 0
    assert _run(graph, first.run_id)["relink"] == {
        "outcome": "ok",
        "dependents": 0,
        "sites": 0,
        "rows": 0,
    }

    added = "from .app import Flask\n\n\ndef missing():\n    pass\n"
    commit(lib, {"src/lib/__init__.py": added})
    changed = run_index(lib)  # lib.missing() is defined now: the dependent's site links
    run = _run(graph, changed.run_id)
    assert run["status"] == "succeeded"
    assert json.loads(run["phases_s"])["relink"] > 0
    assert run["relink"]["outcome"] == "ok"
    assert run["relink"]["dependents"] == 1
    assert run["relink"]["rows"] >= 1
    assert counts(graph, linked.repo_key)["linked"] == 5

    shown = CliRunner().invoke(app, ["runs", "show", changed.run_id])
    assert shown.exit_code == 0, shown.output
    assert re.search(r"^relink\s+\{.*\"dependents\": 1", shown.output, re.M), shown.output
    cells = run_rows([run])[0]
    assert "relink" in cells[5] and "re-link: 1 dependents" in cells[5]


def test_a_failed_relink_is_recorded_and_its_retry_relinks(
    graph: Graph, tmp_path: Path, run_index: Run
) -> None:
    lib = make_repo(tmp_path / "lib", LIB)
    svc = make_repo(tmp_path / "svc", SVC)
    run_index(lib)
    dependent = run_index(svc).repo_key
    commit(lib, {"src/lib/app.py": "class Flask:\n    def route(self):\n        pass\n"})
    faults = Faults()
    faults.arm("reindex.relink", _boom)
    with pytest.raises(RelinkFailed) as raised:
        run_index(lib, faults)
    assert isinstance(raised.value.__cause__, Boom)
    failed = _newest_run(graph, repo_key_for(str(lib)))
    assert failed["status"] == "succeeded"
    # the publish is complete and served; the run says its re-link failed
    assert failed["relink"]["outcome"] == "failed"
    assert "injected before the re-link" in failed["relink"]["error"]
    assert counts(graph, dependent)["linked"] == 4  # not re-linked yet

    retry = run_index(lib)  # the job's retry: an unchanged commit
    assert retry.status is RunOutcome.NOOP
    assert _run(graph, retry.run_id)["relink"]["dependents"] == 1
    assert counts(graph, dependent)["linked"] == 3
