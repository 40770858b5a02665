"""What differs between Memgraph (production) and Neo4j 5 (the test stand-in).

Chosen once from the Bolt agent string (``server_info.agent``). Memgraph reports
``"Neo4j/v5.11.0 compatible graph database server - Memgraph"``; Neo4j reports
``"Neo4j/5.26.x"``.

Differences handled here:

* schema DDL syntax, and that Memgraph forbids DDL in explicit transactions (so DDL always
  runs in auto-commit here, for both); on Memgraph a uniqueness constraint creates no index,
  so every unique key also gets a label-property index, and labels that statements scan get
  a label index (Neo4j backs constraints with indexes and scans labels with its built-in
  token lookup index);
* "already exists" answers to DDL, treated as success;
* isolation: Neo4j is read-committed (take the node's write lock, then re-check); Memgraph is
  snapshot isolation (a conflicting writer aborts with a transient error; retry within a time
  budget), and a unique constraint is checked only at COMMIT;
* timeouts: Memgraph aborts a transaction that runs past ``--query-execution-timeout-sec``
  (timed from BEGIN) with a *transient* error, which must not be retried as a conflict;
* server clocks differ (``timestamp()`` units): never used; callers pass ``now`` in.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass

from semgraph.errors import SchemaError


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

#: Memgraph's answer when a transaction (explicit: timed from BEGIN) or query runs past
#: ``--query-execution-timeout-sec`` (or a per-transaction timeout): a ``HintedAbortError``
#: (src/query/exceptions.hpp, ``AbortReason::TIMEOUT``), sent as the *transient* code
#: ``Memgraph.TransientError.MemgraphError.MemgraphError``
MEMGRAPH_TIMEOUT_MESSAGE = "Transaction was asked to abort because of transaction timeout"
#: Neo4j 5: ``db.transaction.timeout`` reached, or the timeout the client set at BEGIN
#: (checked against a real server by tests/integration/test_graph_timeout.py)
NEO4J_TIMEOUT_CODES = {
    "Neo.ClientError.Transaction.TransactionTimedOut": (
        "Neo4j db.transaction.timeout (the server's limit per transaction)"
    ),
    "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration": (
        "the transaction timeout the client set at its start (and Neo4j db.transaction.timeout)"
    ),
}
MEMGRAPH_TIMEOUT_SETTING = (
    "Memgraph --query-execution-timeout-sec (it times a whole explicit transaction from "
    "BEGIN; 0 means no limit; at runtime: SET DATABASE SETTING 'query.timeout' TO '<s>')"
)


def timeout_setting(code: str | None, message: str | None) -> str | None:
    """The server setting to raise when ``code``/``message`` say a transaction was aborted at
    its execution timeout; None for any other error."""
    if code and "TransactionTimedOut" in code:
        return NEO4J_TIMEOUT_CODES.get(
            code, NEO4J_TIMEOUT_CODES["Neo.ClientError.Transaction.TransactionTimedOut"]
        )
    if message and MEMGRAPH_TIMEOUT_MESSAGE.lower() in message.lower():
        return MEMGRAPH_TIMEOUT_SETTING
    return None


def is_unique_violation(code: str | None, message: str | None) -> bool:
    """Whether the server refused a write (often at COMMIT) on a uniqueness constraint:
    Neo4j's ``Neo.ClientError.Schema.ConstraintValidationFailed``, Memgraph's "Unable to
    commit due to unique constraint violation"."""
    if code and "ConstraintValidationFailed" in code:
        return True
    return bool(message and "unique constraint" in message.lower())


@dataclass(frozen=True)
class IndexSpec:
    """A uniqueness constraint (``unique=True``), a label-property index, or (``prop`` None)
    a label index for statements that scan a label."""

    label: str
    prop: str | None = None
    unique: bool = False

    def __post_init__(self) -> None:
        if self.prop is None and self.unique:
            raise SchemaError(f"a uniqueness constraint on :{self.label} needs a property")

    @property
    def name(self) -> str:
        if self.prop is None:
            return f"semgraph_label_{self.label.lower()}"
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

    def create_ddl(self, spec: IndexSpec) -> list[str]:
        """The statements that create ``spec`` here, in order.

        Memgraph: a uniqueness constraint creates no index, so a unique key also gets its
        label-property index (else every lookup by it scans every node), and a label index
        is ``CREATE INDEX ON :Label``. Neo4j: a unique constraint is backed by an index, and
        every label scan uses the built-in token lookup index, so a label spec needs nothing.
        """
        label, prop = spec.label, spec.prop
        if self.kind is ServerKind.MEMGRAPH:
            return _memgraph_ddl("CREATE", spec)
        if prop is None:
            return []
        if spec.unique:
            return [
                f"CREATE CONSTRAINT {spec.name} IF NOT EXISTS "
                f"FOR (n:{label}) REQUIRE n.{prop} IS UNIQUE"
            ]
        return [f"CREATE INDEX {spec.name} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})"]

    def drop_ddl(self, spec: IndexSpec) -> list[str]:
        """The statements that remove what :meth:`create_ddl` created."""
        if self.kind is ServerKind.MEMGRAPH:
            return _memgraph_ddl("DROP", spec)
        if spec.prop is None:
            return []
        kind = "CONSTRAINT" if spec.unique else "INDEX"
        return [f"DROP {kind} {spec.name} IF EXISTS"]

    def schema_ddl(self, specs: Iterable[IndexSpec]) -> list[str]:
        """Every statement that creates ``specs`` here (what ``semgraph init`` runs)."""
        return [ddl for spec in specs for ddl in self.create_ddl(spec)]

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
    def storage_info_queries(self) -> tuple[str, ...]:
        """Where the storage mode and isolation level in force are read, first choice first:
        Memgraph 3.11+ answers the bare ``SHOW STORAGE INFO`` with the instance's start-up
        flags and the current database's real values only ``ON CURRENT DATABASE``, a syntax
        older versions reject (their bare answer holds the real values)."""
        if self.kind is ServerKind.MEMGRAPH:
            return ("SHOW STORAGE INFO ON CURRENT DATABASE", "SHOW STORAGE INFO")
        return ()

    @property
    def config_query(self) -> str | None:
        return "SHOW CONFIG" if self.kind is ServerKind.MEMGRAPH else None


def _memgraph_ddl(verb: str, spec: IndexSpec) -> list[str]:
    """Memgraph's ``CREATE`` or ``DROP`` of ``spec``: a label index, or a label-property index
    behind the uniqueness constraint of a unique key (which creates no index of its own)."""
    label, prop = spec.label, spec.prop
    if prop is None:
        return [f"{verb} INDEX ON :{label}"]
    index = f"{verb} INDEX ON :{label}({prop})"
    if spec.unique:
        return [f"{verb} CONSTRAINT ON (n:{label}) ASSERT n.{prop} IS UNIQUE", index]
    return [index]
