from __future__ import annotations

import pytest

from semgraph.dialect import Dialect, IndexSpec, ServerKind, detect_kind
from semgraph.errors import SchemaError
from semgraph.graph.schema import SCHEMA

MEMGRAPH = Dialect(ServerKind.MEMGRAPH)
NEO4J = Dialect(ServerKind.NEO4J)


@pytest.mark.parametrize(
    ("agent", "kind"),
    [
        ("Neo4j/v5.11.0 compatible graph database server - Memgraph", ServerKind.MEMGRAPH),
        ("Neo4j/5.26.21", ServerKind.NEO4J),
        ("", ServerKind.NEO4J),
    ],
)
def test_detect_kind(agent: str, kind: ServerKind) -> None:
    assert detect_kind(agent) is kind


def test_memgraph_ddl() -> None:
    # a uniqueness constraint creates no index on Memgraph: the key gets one too
    assert MEMGRAPH.create_ddl(IndexSpec("JobQueue", "id", unique=True)) == [
        "CREATE CONSTRAINT ON (n:JobQueue) ASSERT n.id IS UNIQUE",
        "CREATE INDEX ON :JobQueue(id)",
    ]
    assert MEMGRAPH.create_ddl(IndexSpec("Symbol", "name")) == ["CREATE INDEX ON :Symbol(name)"]
    assert MEMGRAPH.create_ddl(IndexSpec("IndexRun")) == ["CREATE INDEX ON :IndexRun"]
    assert MEMGRAPH.drop_ddl(IndexSpec("Symbol", "name")) == ["DROP INDEX ON :Symbol(name)"]
    assert MEMGRAPH.drop_ddl(IndexSpec("JobQueue", "id", unique=True)) == [
        "DROP CONSTRAINT ON (n:JobQueue) ASSERT n.id IS UNIQUE",
        "DROP INDEX ON :JobQueue(id)",
    ]
    assert MEMGRAPH.drop_ddl(IndexSpec("IndexRun")) == ["DROP INDEX ON :IndexRun"]
    assert not MEMGRAPH.ddl_in_explicit_tx
    assert MEMGRAPH.snapshot_isolation


def test_neo4j_ddl() -> None:
    assert NEO4J.create_ddl(IndexSpec("JobQueue", "id", unique=True)) == [
        "CREATE CONSTRAINT semgraph_uniq_jobqueue_id IF NOT EXISTS "
        "FOR (n:JobQueue) REQUIRE n.id IS UNIQUE"
    ]
    assert NEO4J.create_ddl(IndexSpec("Symbol", "name")) == [
        "CREATE INDEX semgraph_idx_symbol_name IF NOT EXISTS FOR (n:Symbol) ON (n.name)"
    ]
    # labels are scanned through Neo4j's built-in token lookup index
    assert NEO4J.create_ddl(IndexSpec("IndexRun")) == []
    assert NEO4J.drop_ddl(IndexSpec("Symbol", "name", unique=True)) == [
        "DROP CONSTRAINT semgraph_uniq_symbol_name IF EXISTS"
    ]
    assert not NEO4J.snapshot_isolation


def test_a_label_index_cannot_be_unique() -> None:
    with pytest.raises(SchemaError, match="needs a property"):
        IndexSpec("JobQueue", unique=True)
    assert IndexSpec("JobQueue").name == "semgraph_label_jobqueue"


def test_already_exists_messages() -> None:
    assert Dialect.is_already_exists("Constraint already exists on :A(b)")
    assert Dialect.is_already_exists("Index already exists.")
    assert not Dialect.is_already_exists("Invalid input 'CREAT'")


def test_schema_names_are_unique() -> None:
    names = [spec.name for spec in SCHEMA]
    assert len(names) == len(set(names))
