"""How the real Neo4j server plans the claim by id (issue 26 item 7): the job is found by the
unique ``id`` lookup, and no step reads the ``claim_key`` range index (every pending job).
On Memgraph the same holds by construction: the statement's only index-servable predicate on
``j`` is the id map (the filters follow a WITH, and ``coalesce(j.claim_key, '')`` is no
predicate an index serves)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from semgraph.db import Graph
from semgraph.queue import queries as q

pytestmark = pytest.mark.integration


def operators(plan: dict[str, Any]) -> list[tuple[str, str]]:
    found = [(str(plan["operatorType"]), str(plan.get("args", {}).get("Details", "")))]
    for child in plan.get("children", []):
        found += operators(child)
    return found


def test_the_claim_by_id_has_no_predicate_an_index_could_serve_but_the_id() -> None:
    """What Memgraph's planner could pick instead (it prefers the index it estimates
    smaller, and cannot estimate without ANALYZE GRAPH): a comparison on ``j.claim_key``."""
    text = q.CLAIM_CANDIDATE_BY_ID
    assert "MATCH (j:JobQueue {id: $id})\nWITH j\nWHERE" in text
    assert not re.search(r"j\.claim_key\s*(>=|<=|>|<|=|IS\s+NOT|STARTS|IN\b)", text)


def test_the_claim_by_id_seeks_the_id_and_never_the_claim_key(graph: Graph) -> None:
    for i in range(50):  # pending jobs in the claim_key index, to tempt the planner
        graph.query(
            "job",
            "CREATE (:JobQueue {id: $id, repo_key: $id, status: 'pending', claim_key: $id, "
            "run_after: 0.0, kind: 'reindex'})",
            id=f"j{i:03d}",
        )
    with graph.session() as session:
        result = session.run(
            "EXPLAIN " + q.CLAIM_CANDIDATE_BY_ID, id="j007", now=1.0, kinds=["reindex"]
        )
        plan = result.consume().plan
    assert plan is not None
    ops = operators(plan)
    seeks = [d for op, d in ops if op.startswith("NodeUniqueIndexSeek")]
    assert any(re.search(r"j:JobQueue\(id\)", d) for d in seeks), ops
    assert not any("claim_key" in d for op, d in ops if "Index" in op or "Scan" in op), ops
    rows = graph.query(
        "claim by id", q.CLAIM_CANDIDATE_BY_ID, id="j007", now=1.0, kinds=["reindex"]
    )
    assert rows == [{"id": "j007", "repo_key": "j007"}]
    assert graph.query("none", q.CLAIM_CANDIDATE_BY_ID, id="j007", now=1.0, kinds=["x"]) == []
