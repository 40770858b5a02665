"""The foundation against the real servers: Bolt round trip, schema init, Elasticsearch
dense vectors + kNN + alias swap."""

from __future__ import annotations

from typing import Any

import neo4j
import pytest
from elasticsearch import Elasticsearch

from semgraph.db import Graph
from semgraph.dialect import ServerKind
from semgraph.errors import GraphConstraintViolation, GraphQueryError
from semgraph.graph.schema import SCHEMA
from tests.optional import some

pytestmark = pytest.mark.integration


def test_bolt_round_trip_in_explicit_write_transaction(graph: Graph) -> None:
    def write(tx: neo4j.ManagedTransaction, value: str) -> Any:
        return some(tx.run("CREATE (n:RoundTrip {v: $v}) RETURN n.v AS v", v=value).single())["v"]

    assert graph.execute_write("round trip", write, "héllo") == "héllo"
    rows = graph.query("read back", "MATCH (n:RoundTrip) RETURN n.v AS v")
    assert rows == [{"v": "héllo"}]


def test_failed_explicit_transaction_rolls_back(graph: Graph) -> None:
    def write(tx: neo4j.ManagedTransaction) -> None:
        tx.run("CREATE (:RoundTrip {v: 1})").consume()
        tx.run("THIS IS NOT CYPHER").consume()

    with pytest.raises(GraphQueryError):
        graph.execute_write("broken", write)
    assert graph.query("count", "MATCH (n:RoundTrip) RETURN count(n) AS c") == [{"c": 0}]


def test_server_kind_detected(graph: Graph) -> None:
    assert graph.dialect.kind is ServerKind.NEO4J
    assert graph.server_info().agent.startswith("Neo4j/5.")


def test_init_is_idempotent_and_creates_every_constraint(graph: Graph) -> None:
    graph.ensure_schema(SCHEMA)
    graph.ensure_schema(SCHEMA)
    names = {r["name"] for r in graph.query("constraints", "SHOW CONSTRAINTS YIELD name")}
    names |= {r["name"] for r in graph.query("indexes", "SHOW INDEXES YIELD name")}
    assert {spec.name for spec in SCHEMA if graph.dialect.create_ddl(spec)} <= names


def test_uniqueness_constraint_is_enforced(graph: Graph) -> None:
    graph.query("first", "CREATE (:JobQueue {id: 'dup'})")
    with pytest.raises(GraphConstraintViolation, match="already exists"):
        graph.query("second", "CREATE (:JobQueue {id: 'dup'})")


def test_the_transaction_helper_commits_rolls_back_and_types_a_lost_race(graph: Graph) -> None:
    with graph.transaction("commit") as tx:
        tx.run("CREATE (:RoundTrip {v: 1})").consume()
    with pytest.raises(RuntimeError), graph.transaction("raise") as tx:
        tx.run("CREATE (:RoundTrip {v: 2})").consume()
        raise RuntimeError("the caller failed before COMMIT")
    with pytest.raises(GraphConstraintViolation), graph.transaction("duplicate") as tx:
        tx.run("CREATE (:JobQueue {id: 'dup'})").consume()
        tx.run("CREATE (:JobQueue {id: 'dup'})").consume()
    with pytest.raises(GraphQueryError) as syntax:
        graph.query("not a violation", "THIS IS NOT CYPHER")
    assert not isinstance(syntax.value, GraphConstraintViolation)
    rows = graph.query("count", "MATCH (n:RoundTrip) RETURN n.v AS v")
    assert rows == [{"v": 1}]
    assert graph.query("jobs", "MATCH (j:JobQueue) RETURN count(j) AS c") == [{"c": 0}]


def test_elasticsearch_dense_vector_knn_and_alias_swap(es: Elasticsearch) -> None:
    mapping = {
        "properties": {
            "code": {"type": "text"},
            "vec": {"type": "dense_vector", "dims": 3, "index": True, "similarity": "cosine"},
        }
    }
    es.indices.create(index="found-a", mappings=mapping)
    es.indices.create(index="found-b", mappings=mapping)
    docs = [
        ("x", [1.0, 0.0, 0.0], "def parse_file(): pass"),
        ("y", [0.0, 1.0, 0.0], "class Queue: pass"),
        ("z", [0.0, 0.0, 1.0], "fn main() {}"),
    ]
    ops: list[dict[str, object]] = []
    for doc_id, vec, code in docs:
        ops += [{"index": {"_index": "found-a", "_id": doc_id}}, {"code": code, "vec": vec}]
    resp = es.bulk(operations=ops, refresh=True)
    assert not resp["errors"]

    hits = es.search(
        index="found-a",
        knn={"field": "vec", "query_vector": [0.1, 0.9, 0.0], "k": 1, "num_candidates": 10},
    )["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["y"]

    es.indices.put_alias(index="found-a", name="found")
    es.indices.update_aliases(
        actions=[
            {"remove": {"index": "found-a", "alias": "found"}},
            {"add": {"index": "found-b", "alias": "found"}},
        ]
    )
    assert list(es.indices.get_alias(name="found")) == ["found-b"]
