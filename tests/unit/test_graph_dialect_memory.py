"""The dialect recognises the graph servers' memory refusals and names the limit hit."""

from __future__ import annotations

import pytest

from semgraph.dialect import Dialect, ServerKind

NEO4J = Dialect(ServerKind.NEO4J)
MEMGRAPH = Dialect(ServerKind.MEMGRAPH)

# verbatim from Neo4j 5.26 (tests/integration/test_graph_too_large.py meets it for real)
TX_MAX = (
    "publish graph of shop: transient server error, may be retried "
    "(Neo.TransientError.General.MemoryPoolOutOfMemoryError: The allocation of an extra "
    "2.0 MiB would use more than the limit 4.0 MiB. Currently using 4.0 MiB. "
    "db.memory.transaction.max threshold reached)"
)
TOTAL_MAX = TX_MAX.replace("db.memory.transaction.max", "db.memory.transaction.total.max")
HEAP = (
    "publish: transient server error, may be retried (Neo.TransientError.General."
    "OutOfMemoryError: There is not enough memory to perform the current task.)"
)


@pytest.mark.parametrize(
    ("message", "named"),
    [
        (TX_MAX, "Neo4j db.memory.transaction.max = 4.0 MiB"),
        (TOTAL_MAX, "Neo4j db.memory.transaction.total.max = 4.0 MiB"),
        (HEAP, "the Neo4j server's JVM heap"),
        ("TransactionOutOfMemoryError", "Neo4j db.memory.transaction.max / "),
    ],
)
def test_neo4j_refusals_are_recognised_and_name_the_limit(message: str, named: str) -> None:
    assert NEO4J.is_out_of_memory(message)
    assert NEO4J.memory_limit_setting(message).startswith(named)


def test_memgraph_refusal_names_its_flag() -> None:
    message = "Memory limit exceeded! Attempting to allocate a chunk of 2.00MiB"
    assert MEMGRAPH.is_out_of_memory(message)
    assert "--memory-limit" in MEMGRAPH.memory_limit_setting(message)


@pytest.mark.parametrize(
    "message",
    [
        "Neo.ClientError.Statement.SyntaxError: Invalid input 'MEMORY'",
        "Neo.TransientError.Transaction.DeadlockDetected: memory of a lock",
        "",
    ],
)
def test_other_errors_are_not_memory_refusals(message: str) -> None:
    assert not NEO4J.is_out_of_memory(message)
