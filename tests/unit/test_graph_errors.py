"""db.graph_errors, the one translation point: Memgraph's and Neo4j's answers, as their
drivers hydrate them, become our errors. A timeout abort is GraphTimeout (never a conflict,
even though Memgraph files it as transient); the real Neo4j server's timeout is met in
tests/integration/test_graph_timeout.py."""

from __future__ import annotations

import neo4j.exceptions as neo_exc
import pytest

from semgraph.db import graph_errors
from semgraph.errors import (
    GraphConflict,
    GraphConstraintViolation,
    GraphError,
    GraphQueryError,
    GraphTimeout,
)

MEMGRAPH_TRANSIENT = "Memgraph.TransientError.MemgraphError.MemgraphError"
MEMGRAPH_CLIENT = "Memgraph.ClientError.MemgraphError.MemgraphError"
# verbatim from Memgraph's sources (src/query/exceptions.hpp, src/storage/v2)
MEMGRAPH_TIMEOUT = "Transaction was asked to abort because of transaction timeout."
MEMGRAPH_CONFLICT = (
    "Cannot resolve conflicting transactions. You can retry this transaction when the "
    "conflicting transaction is finished"
)
MEMGRAPH_TERMINATED = "Transaction was asked to abort by another user."
MEMGRAPH_UNIQUE = "Unable to commit due to unique constraint violation on :RepoLock(key)"
NEO4J_TIMEOUT_SERVER = (
    "The transaction has been terminated. Retry your operation in a new transaction, and you "
    "should see a successful result. The transaction has not completed within the specified "
    "timeout (db.transaction.timeout). You may want to retry with a longer timeout."
)


def translate(code: str, message: str) -> GraphError:
    with pytest.raises(GraphError) as caught, graph_errors("publish"):
        raise neo_exc.Neo4jError._hydrate_neo4j(code=code, message=message)
    assert isinstance(caught.value.__cause__, neo_exc.Neo4jError)
    return caught.value


def test_memgraph_timeout_abort_is_a_timeout_naming_the_flag_not_a_conflict() -> None:
    error = translate(MEMGRAPH_TRANSIENT, MEMGRAPH_TIMEOUT)
    assert isinstance(error, GraphTimeout) and not isinstance(error, GraphConflict)
    assert "--query-execution-timeout-sec" in str(error)
    assert "query.timeout" in str(error)  # the runtime setting too
    assert str(error).startswith("publish: ")


@pytest.mark.parametrize(
    ("code", "named"),
    [
        ("Neo.ClientError.Transaction.TransactionTimedOut", "db.transaction.timeout"),
        (
            "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
            "the transaction timeout the client set",
        ),
    ],
)
def test_neo4j_timeouts_name_the_setting(code: str, named: str) -> None:
    error = translate(code, NEO4J_TIMEOUT_SERVER)
    assert isinstance(error, GraphTimeout)
    assert named in str(error) and "db.transaction.timeout" in str(error)


@pytest.mark.parametrize("message", [MEMGRAPH_CONFLICT, MEMGRAPH_TERMINATED])
def test_other_memgraph_transients_stay_conflicts(message: str) -> None:
    assert type(translate(MEMGRAPH_TRANSIENT, message)) is GraphConflict


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (MEMGRAPH_CLIENT, MEMGRAPH_UNIQUE),
        (
            "Neo.ClientError.Schema.ConstraintValidationFailed",
            "Node(12) already exists with label `JobQueue` and property `id` = 'dup'",
        ),
    ],
)
def test_a_unique_violation_is_its_own_type_from_the_translation_point(
    code: str, message: str
) -> None:
    error = translate(code, message)
    assert type(error) is GraphConstraintViolation and isinstance(error, GraphQueryError)


def test_other_client_errors_are_plain_query_errors() -> None:
    error = translate(MEMGRAPH_CLIENT, "line 1:1 mismatched input 'THIS'")
    assert type(error) is GraphQueryError


def test_the_timeout_default_message_names_both_settings() -> None:
    text = str(GraphTimeout())
    assert "--query-execution-timeout-sec" in text and "db.transaction.timeout" in text
