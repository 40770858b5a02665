"""The one line ``semgraph index`` prints when the server refused a publish as too large for
one transaction, built from the job error the worker recorded (``GraphTooLarge: ...``)."""

from __future__ import annotations

import pytest

from semgraph.commands.index import too_large_line


def _writer_error(rows: int, limit: str, repo: str = "shop", total: int | None = None) -> str:
    """A job error in the form the graph writer and the worker record it (``total``: the
    model's rows, which the writer names first; without it, the writer's older form)."""
    counted = f"{rows}" if total is None else f"{total} rows; {rows}"
    return (
        f"GraphTooLarge: the graph of {repo} ({counted} rows written before the server refused) "
        f"exceeds the server's transaction memory limit ({limit}); raise that limit: a "
        "publish is never split"
    ).replace(f"{total} rows; {rows} rows written", f"{total} rows; {rows} written")


def test_the_local_stack_cap_names_the_heap_setting() -> None:
    line = too_large_line(
        _writer_error(592697, "Neo4j db.memory.transaction.total.max = 716.0 MiB"), 1024
    )
    assert line == (
        "semgraph index: the graph of shop (592,697 rows written before refusal) exceeds "
        "Neo4j db.memory.transaction.total.max = 716 MiB; raise SEMGRAPH_NEO4J_HEAP_MB (local "
        "stack: transactions get 70% of the heap, now 1024 MiB; then `semgraph services down` "
        "and `up`) or the server's db.memory.transaction.total.max"
    )
    assert "\n" not in line


def test_the_line_names_the_repository_rows_and_those_written_before_the_refusal() -> None:
    error = _writer_error(151405, "Neo4j db.memory.transaction.total.max = 716.0 MiB", total=592697)
    assert "(592697 rows; 151405 written before the server refused)" in error
    line = too_large_line(error, 1024)
    assert line is not None and line.startswith(
        "semgraph index: the graph of shop (592,697 rows; 151,405 written before refusal) "
        "exceeds Neo4j db.memory.transaction.total.max = 716 MiB; raise SEMGRAPH_NEO4J_HEAP_MB"
    )


@pytest.mark.parametrize(
    ("limit", "shown", "fix"),
    [
        (
            "Neo4j db.memory.transaction.max = 4.0 MiB",
            "db.memory.transaction.max = 4 MiB",
            "raise db.memory.transaction.max on the Neo4j server",
        ),
        (
            "Neo4j dbms.memory.transaction.total.max = 1.5 GiB",
            "dbms.memory.transaction.total.max = 1.5 GiB",
            "SEMGRAPH_NEO4J_HEAP_MB",
        ),
        (
            "Neo4j db.memory.transaction.total.max",
            "Neo4j db.memory.transaction.total.max;",
            "SEMGRAPH_NEO4J_HEAP_MB",
        ),
        (
            "the Neo4j server's JVM heap (-Xmx; SEMGRAPH_NEO4J_HEAP_MB on the local stack)",
            "the Neo4j server's JVM heap",
            "-Xmx",
        ),
        (
            "Memgraph --memory-limit (and any per-query memory limit)",
            "Memgraph --memory-limit",
            "raise Memgraph's --memory-limit",
        ),
    ],
)
def test_each_limit_gets_its_own_advice(limit: str, shown: str, fix: str) -> None:
    line = too_large_line(_writer_error(12, limit, repo="org/app"))
    assert line is not None and line.startswith(
        "semgraph index: the graph of org/app (12 rows written before refusal) exceeds "
    )
    assert shown in line and fix in line
    assert "now " not in line  # no local heap known


def test_an_unrecognised_form_still_gives_one_line_with_the_message() -> None:
    vague = _writer_error(7, "Neo4j db.memory.transaction.max / db.memory.transaction.total.max")
    assert too_large_line(vague) == "semgraph index: " + vague.removeprefix("GraphTooLarge: ")
    assert too_large_line("GraphTooLarge: something  else\nsecond") == (
        "semgraph index: something else second"
    )


@pytest.mark.parametrize(
    "error",
    ["", "JobError: boom", "CheckoutError: GraphTooLarge: nope", "graphtoolarge: x"],
)
def test_other_errors_are_not_refusals(error: str) -> None:
    assert too_large_line(error) is None
