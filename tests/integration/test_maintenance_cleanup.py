"""The maintenance pass that removes what failed and abandoned work leaves in the graph:
orphan ``:Package`` nodes and ``:IndexRun`` nodes past the retention (never a repository's
published run, never a running one), counted in ``semgraph_cleanup_removed_total``. Real
graph server; time passed in."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.jobs import register_job_kinds
from semgraph.maintenance import cleanup
from semgraph.maintenance.cleanup import clean_up
from semgraph.queue import registry
from tests.shared_kinds import KINDS

pytestmark = pytest.mark.integration

NOW = 1_900_000_000.0
DAY = 86_400.0


def _removed(what: str) -> float:
    value = REGISTRY.get_sample_value("semgraph_cleanup_removed_total", {"what": what})
    return value or 0.0


def _keys(graph: Graph, label: str, prop: str) -> set[str]:
    rows = graph.query("read back", f"MATCH (n:{label}) RETURN n.{prop} AS k")
    return {str(r["k"]) for r in rows}


def test_orphan_packages_and_old_runs_go_the_published_and_the_running_stay(
    graph: Graph, settings: Settings
) -> None:
    graph.query(
        "seed",
        """
        CREATE (r:Repository {key: 'lib', run_id: 'old-published'})
        CREATE (r)-[:PROVIDES]->(:Package {key: 'pypi:provided'})
        CREATE (r)-[:DEPENDS_ON {spec: '>=1'}]->(:Package {key: 'pypi:depended'})
        CREATE (:Package {key: 'pypi:orphan-a'}), (:Package {key: 'pypi:orphan-b'})
        WITH r
        UNWIND $runs AS run
        CREATE (x:IndexRun {id: run.id, repo: run.repo, status: run.status,
                            started_at: run.at, finished_at: run.done})
        WITH r, x WHERE x.repo = 'lib'
        CREATE (x)-[:OF]->(r)
        """,
        runs=[
            {"id": "old-published", "repo": "lib", "status": "succeeded", "at": 1.0, "done": 2.0},
            {"id": "old-failed", "repo": "lib", "status": "failed", "at": 1.0, "done": 2.0},
            {"id": "old-gone-repo", "repo": "gone", "status": "abandoned", "at": 1.0, "done": 2.0},
            {"id": "recent", "repo": "lib", "status": "failed", "at": NOW - DAY, "done": NOW - 1},
            {"id": "running", "repo": "lib", "status": "running", "at": 1.0, "done": None},
        ],
    )
    before = {what: _removed(what) for what in ("package", "run")}
    counts = clean_up(settings.model_copy(update={"job_retention_s": 7 * DAY}), graph, now=NOW)
    assert counts == {"package": 2, "run": 2}
    assert _keys(graph, "Package", "key") == {"pypi:provided", "pypi:depended"}
    assert _keys(graph, "IndexRun", "id") == {"old-published", "recent", "running"}
    assert _removed("package") - before["package"] == 2
    assert _removed("run") - before["run"] == 2
    # nothing left: a second pass removes nothing and counts nothing
    assert clean_up(settings, graph, now=NOW) == {"package": 0, "run": 0}


def test_a_backlog_is_removed_in_bounded_slices_over_passes(
    graph: Graph, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cleanup, "SLICE", 3)
    monkeypatch.setattr(cleanup, "MAX_SLICES", 2)
    graph.query("seed", "UNWIND range(1, 10) AS i CREATE (:Package {key: 'npm:p' + toString(i)})")
    assert clean_up(settings, graph, now=NOW)["package"] == 6  # two slices of three
    assert clean_up(settings, graph, now=NOW)["package"] == 4
    assert _keys(graph, "Package", "key") == set()


def test_the_worker_maintenance_runs_the_clean_up_once() -> None:
    register_job_kinds()
    register_job_kinds(KINDS)  # built again: its passes take the older ones' places
    names = [getattr(hook, "__name__", "") for hook in registry.maintenance_hooks()]
    assert names.count("maintain_cleanup") == 1
