"""How the real Neo4j server plans the claim (issue 26): by id, the job is found by the unique
``id`` lookup and no step reads the ``claim_key`` range index (every pending job); the
candidates, lanes and affinity included, are read in claim_key order up to the LIMIT.
On Memgraph the same holds by construction: the statement's only index-servable predicate on
``j`` is the id map (the filters follow a WITH, and ``coalesce(j.claim_key, '')`` is no
predicate an index serves)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from semgraph.config import load_settings
from semgraph.db import Graph
from semgraph.queue import queries as q
from semgraph.queue.lanes import ClaimScope, Lane

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


def test_the_candidates_are_read_in_claim_key_order_up_to_the_limit(graph: Graph) -> None:
    """With lanes and affinity the candidates' statement still reads claim_key's index in
    order and stops at the LIMIT (a sort of every pending job made a claim 3-5x slower)."""
    for i in range(200):
        graph.query(
            "job",
            "CREATE (:JobQueue {id: $id, repo_key: $id, status: 'pending', claim_key: $id, "
            "run_after: 0.0, created_at: 0.0, kind: 'reindex'})",
            id=f"j{i:03d}",
        )
    params = {
        **ClaimScope(Lane.SMALL, "host").params(load_settings()),
        **{"now": 1.0, "kinds": ["reindex"], "limit": 8, "busy": []},
        **{"warm_small": [], "warm_large": []},
    }
    params["lane"] = "any"
    # the statistics as they are now (200 pending jobs), not a plan cached by an earlier test
    # of the session on an almost empty queue: a server replans as its statistics move
    graph.query("replan", "CALL db.prepareForReplanning()")
    with graph.session() as session:
        result = session.run("PROFILE " + q.CLAIM_CANDIDATES, params)
        rows = [r["id"] for r in result]
        profile = result.consume().profile
    assert rows == [f"j{i:03d}" for i in range(8)]
    assert profile is not None
    ops = operators(profile)
    assert not any(op.startswith(("Top", "Sort", "PartialTop")) for op, _ in ops), ops
    seek = [p for p in walk(profile) if str(p["operatorType"]).startswith("NodeIndexSeekByRange")]
    assert seek and all(int(p["rows"]) <= 8 for p in seek), ops


def walk(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [plan] + [p for child in plan.get("children", []) for p in walk(child)]
