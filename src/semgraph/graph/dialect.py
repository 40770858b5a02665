"""What differs between Memgraph (production) and Neo4j 5 (the test stand-in).

Chosen once from the Bolt agent string (``server_info.agent``). Memgraph reports
``"Neo4j/v5.11.0 compatible graph database server - Memgraph"``; Neo4j reports
``"Neo4j/5.26.x"``.

Differences handled here:

* schema DDL syntax, and that Memgraph forbids DDL in explicit transactions (so DDL always
  runs in auto-commit here, for both);
* "already exists" answers to DDL, treated as success;
* isolation: Neo4j is read-committed (take the node's write lock, then re-check); Memgraph is
  snapshot isolation (a conflicting writer aborts with a transient error; retry with a bound);
* server clocks differ (``timestamp()`` units): never used; callers pass ``now`` in.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass


class ServerKind(enum.StrEnum):
    MEMGRAPH = "memgraph"
    NEO4J = "neo4j"


def detect_kind(agent: str) -> ServerKind:
    """Server kind from a Bolt agent string."""
    return ServerKind.MEMGRAPH if "memgraph" in agent.lower() else ServerKind.NEO4J


#: error codes / messages meaning "this transaction needs more memory than the server allows".
#: Neo4j 5 answers ``Neo.TransientError.General.MemoryPoolOutOfMemoryError`` with "... would
#: use more than the limit 4.0 MiB. ... db.memory.transaction.max threshold reached" (checked
#: against a real server by tests/integration/test_graph_too_large.py).
OUT_OF_MEMORY_MARKERS = (
    "MemoryPoolOutOfMemoryError",  # Neo4j: db.memory.transaction.max / .total.max
    "TransactionOutOfMemoryError",  # Neo4j 4: dbms.memory.transaction.max_size
    "TransactionMemoryLimit",
    "Neo.TransientError.General.OutOfMemoryError",  # Neo4j: the JVM heap ran out
    "Memory limit exceeded",  # Memgraph --memory-limit / query memory limit
    "memory limit exceeded",
)
#: Neo4j settings a refusal may name, most specific first
_NEO4J_MEMORY_SETTINGS = (
    "dbms.memory.transaction.total.max",
    "db.memory.transaction.total.max",
    "db.memory.transaction.max",
)
_LIMIT_VALUE = re.compile(r"the limit ([0-9.]+ ?[KMGT]?i?B)")


@dataclass(frozen=True)
class IndexSpec:
    """A uniqueness constraint (``unique=True``) or a plain property index."""

    label: str
    prop: str
    unique: bool = False

    @property
    def name(self) -> str:
        kind = "uniq" if self.unique else "idx"
        return f"semgraph_{kind}_{self.label.lower()}_{self.prop.lower()}"


@dataclass(frozen=True)
class Dialect:
    kind: ServerKind

    @property
    def ddl_in_explicit_tx(self) -> bool:
        """Whether schema DDL may run inside an explicit transaction (never on Memgraph)."""
        return self.kind is ServerKind.NEO4J

    @property
    def snapshot_isolation(self) -> bool:
        """True where a write-write conflict aborts the later transaction (Memgraph)."""
        return self.kind is ServerKind.MEMGRAPH

    def create_ddl(self, spec: IndexSpec) -> str:
        label, prop = spec.label, spec.prop
        if self.kind is ServerKind.MEMGRAPH:
            if spec.unique:
                return f"CREATE CONSTRAINT ON (n:{label}) ASSERT n.{prop} IS UNIQUE"
            return f"CREATE INDEX ON :{label}({prop})"
        if spec.unique:
            return (
                f"CREATE CONSTRAINT {spec.name} IF NOT EXISTS "
                f"FOR (n:{label}) REQUIRE n.{prop} IS UNIQUE"
            )
        return f"CREATE INDEX {spec.name} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})"

    def drop_ddl(self, spec: IndexSpec) -> str:
        if self.kind is ServerKind.MEMGRAPH:
            if spec.unique:
                return f"DROP CONSTRAINT ON (n:{spec.label}) ASSERT n.{spec.prop} IS UNIQUE"
            return f"DROP INDEX ON :{spec.label}({spec.prop})"
        kind = "CONSTRAINT" if spec.unique else "INDEX"
        return f"DROP {kind} {spec.name} IF EXISTS"

    @staticmethod
    def is_already_exists(message: str) -> bool:
        """Whether a DDL error only says the object is already there."""
        text = message.lower()
        return any(
            marker in text
            for marker in (
                "already exists",
                "equivalent",
                "constraint already",
                "index already",
            )
        )

    @staticmethod
    def is_out_of_memory(message: str) -> bool:
        """Whether an error says a transaction exceeded the server's memory limit."""
        return any(marker in message for marker in OUT_OF_MEMORY_MARKERS)

    def memory_limit_setting(self, message: str = "") -> str:
        """The server limit a memory refusal hit, named as precisely as its ``message``
        allows (with the limit's value when the server reported it)."""
        if self.kind is ServerKind.MEMGRAPH:
            return "Memgraph --memory-limit (and any per-query memory limit)"
        if "General.OutOfMemoryError" in message:
            return "the Neo4j server's JVM heap (-Xmx; SEMGRAPH_NEO4J_HEAP_MB on the local stack)"
        named = next((name for name in _NEO4J_MEMORY_SETTINGS if name in message), None)
        if named is None:
            return "Neo4j db.memory.transaction.max / db.memory.transaction.total.max"
        value = _LIMIT_VALUE.search(message)
        return f"Neo4j {named} = {value.group(1)}" if value else f"Neo4j {named}"

    @property
    def version_query(self) -> str:
        if self.kind is ServerKind.MEMGRAPH:
            return "SHOW VERSION"
        return "CALL dbms.components() YIELD name, versions RETURN versions[0] AS version"

    @property
    def storage_info_query(self) -> str | None:
        return "SHOW STORAGE INFO" if self.kind is ServerKind.MEMGRAPH else None

    @property
    def config_query(self) -> str | None:
        return "SHOW CONFIG" if self.kind is ServerKind.MEMGRAPH else None
