"""``semgraph doctor`` on Memgraph: its decisions from recorded ``SHOW STORAGE INFO`` /
``SHOW CONFIG`` answers (Memgraph cannot run here; the rows have the shape and field names of
Memgraph's own e2e tests: 2.x and 3.x, whose instance-wide answer renamed ``storage_mode``
to ``global_storage_mode``)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from semgraph import doctor
from semgraph.config import load_settings
from semgraph.db import Graph
from semgraph.dialect import Dialect, ServerKind
from semgraph.doctor import memgraph_warnings
from semgraph.errors import GraphQueryError

SETTINGS = load_settings(job_timeout_s=3600)


def storage_rows(**values: Any) -> list[dict[str, Any]]:
    return [{"storage info": k, "value": v} for k, v in values.items()]


# SHOW STORAGE INFO of Memgraph 2.21 (the image ops/ pinned before)
STORAGE_2 = storage_rows(
    name="memgraph",
    vertex_count=1204,
    edge_count=3310,
    average_degree=5.5,
    memory_res="43.16MiB",
    peak_memory_res="100MiB",
    unreleased_delta_objects=0,
    disk_usage="10MiB",
    memory_tracked="8.52MiB",
    allocation_limit="58.55GiB",
    global_isolation_level="SNAPSHOT_ISOLATION",
    session_isolation_level="",
    next_session_isolation_level="",
    storage_mode="IN_MEMORY_TRANSACTIONAL",
)
# SHOW STORAGE INFO of Memgraph 3.11+ (instance-wide answer: the start-up flags)
STORAGE_3_INSTANCE = storage_rows(
    vm_max_map_count=262144,
    memory_res="1.31GiB",
    peak_memory_res="2.71GiB",
    disk_usage="456.60MiB",
    memory_tracked="1.31GiB",
    memory_limit="15.60GiB",
    license_memory_limit="unlimited",
    **{"query+graph_memory_tracked": "1.31GiB"},
    vector_index_memory_tracked="0B",
    global_isolation_level="SNAPSHOT_ISOLATION",
    session_isolation_level="",
    next_session_isolation_level="",
    global_storage_mode="IN_MEMORY_TRANSACTIONAL",
)
# SHOW STORAGE INFO ON CURRENT DATABASE of Memgraph 3.11+ (the values in force)
STORAGE_3 = storage_rows(
    name="memgraph",
    database_uuid="4bd8c0d6-8a4b-4f9e-9a55-2b2e6c1f0e11",
    state="HOT",
    storage_mode="IN_MEMORY_TRANSACTIONAL",
    vertex_count=1204,
    edge_count=3310,
    average_degree=5.5,
    unreleased_delta_objects=0,
    disk_usage="456.60MiB",
    graph_memory_tracked="1.10GiB",
    query_memory_tracked="0B",
    vector_index_memory_tracked="0B",
    tenant_memory_tracked="1.10GiB",
    tenant_peak_memory_tracked="1.20GiB",
    tenant_memory_limit="unlimited",
    storage_isolation_level="SNAPSHOT_ISOLATION",
    health="ready",
)

SAFE_FLAGS = {
    "isolation_level": "SNAPSHOT_ISOLATION",
    "storage_mode": "IN_MEMORY_TRANSACTIONAL",
    "query_execution_timeout_sec": "3600",
    "storage_wal_enabled": "true",
    "storage_wal_file_flush_every_n_tx": "1",
    "data_recovery_on_startup": "true",
    "storage_properties_on_edges": "true",
    "storage_snapshot_interval_sec": "300",
    "memory_limit": "0",
    "log_level": "WARNING",
}
# Memgraph's defaults where they differ (its e2e SHOW CONFIG test, default_value column)
DEFAULT_FLAGS = {
    **SAFE_FLAGS,
    "query_execution_timeout_sec": "600",
    "storage_wal_enabled": "false",
    "storage_wal_file_flush_every_n_tx": "100000",
    "data_recovery_on_startup": "false",
    "storage_properties_on_edges": "false",
}


def config_rows(flags: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {"name": k, "default_value": DEFAULT_FLAGS.get(k, v), "current_value": v, "description": ""}
        for k, v in flags.items()
    ]


@pytest.mark.parametrize(
    "storage", [STORAGE_2, STORAGE_3, STORAGE_3_INSTANCE], ids=["2.x", "3.x", "3.x-instance"]
)
def test_the_settings_of_ops_give_no_warning(storage: list[dict[str, Any]]) -> None:
    assert memgraph_warnings(storage, config_rows(SAFE_FLAGS), SETTINGS) == []


def test_memgraph_defaults_warn_about_every_unsafe_setting() -> None:
    warnings = memgraph_warnings(STORAGE_3, config_rows(DEFAULT_FLAGS), SETTINGS)
    text = "\n".join(warnings)
    assert len(warnings) == 5, warnings
    for flag in (
        "--query-execution-timeout-sec",
        "--storage-wal-file-flush-every-n-tx=1",
        "WAL is disabled",
        "--data-recovery-on-startup=true",
        "--storage-properties-on-edges=true",
    ):
        assert flag in text


def with_value(rows: list[dict[str, Any]], field: str, value: str) -> list[dict[str, Any]]:
    assert any(r["storage info"] == field for r in rows)
    return [{**r, "value": value} if r["storage info"] == field else r for r in rows]


@pytest.mark.parametrize("level", ["READ_COMMITTED", "READ_UNCOMMITTED"])
@pytest.mark.parametrize(
    ("storage", "field"),
    [
        (STORAGE_2, "global_isolation_level"),
        (STORAGE_3, "storage_isolation_level"),
        (STORAGE_3_INSTANCE, "global_isolation_level"),
    ],
)
def test_an_isolation_level_other_than_snapshot_isolation_warns(
    level: str, storage: list[dict[str, Any]], field: str
) -> None:
    rows = with_value(storage, field, level)
    (warning,) = memgraph_warnings(rows, config_rows(SAFE_FLAGS), SETTINGS)
    assert level in warning and "--isolation-level=SNAPSHOT_ISOLATION" in warning


def test_the_database_level_in_force_wins_over_the_start_up_flag() -> None:
    """SET GLOBAL TRANSACTION ISOLATION LEVEL at runtime changes the database's level; 3.11+
    shows it only in the per-database answer (the flag still says SNAPSHOT_ISOLATION)."""
    changed = with_value(STORAGE_3, "storage_isolation_level", "READ_COMMITTED")
    rows = changed + [r for r in STORAGE_3_INSTANCE if r["storage info"].startswith("global")]
    (warning,) = memgraph_warnings(rows, config_rows(SAFE_FLAGS), SETTINGS)
    assert "READ_COMMITTED" in warning


def test_isolation_level_falls_back_to_the_flag_when_storage_info_lacks_it() -> None:
    storage = [r for r in STORAGE_2 if "isolation" not in r["storage info"]]
    flags = {**SAFE_FLAGS, "isolation_level": "READ_COMMITTED"}
    (warning,) = memgraph_warnings(storage, config_rows(flags), SETTINGS)
    assert "READ_COMMITTED" in warning


@pytest.mark.parametrize(
    ("storage", "field"),
    [
        (STORAGE_2, "storage_mode"),
        (STORAGE_3, "storage_mode"),
        (STORAGE_3_INSTANCE, "global_storage_mode"),
    ],
)
def test_the_analytical_storage_mode_warns(storage: list[dict[str, Any]], field: str) -> None:
    analytical = with_value(storage, field, "IN_MEMORY_ANALYTICAL")
    (warning,) = memgraph_warnings(analytical, config_rows(SAFE_FLAGS), SETTINGS)
    assert "IN_MEMORY_ANALYTICAL" in warning and "IN_MEMORY_TRANSACTIONAL" in warning


@pytest.mark.parametrize(
    ("timeout", "warns"),
    [("0", False), ("3600", False), ("7200", False), ("600", True), ("3599", True)],
)
def test_the_execution_timeout_must_outlast_a_job(timeout: str, warns: bool) -> None:
    flags = {**SAFE_FLAGS, "query_execution_timeout_sec": timeout}
    warnings = memgraph_warnings(STORAGE_3, config_rows(flags), SETTINGS)
    assert bool(warnings) is warns
    if warns:
        assert f"after {timeout} s" in warnings[0] and "SEMGRAPH_JOB_TIMEOUT_S" in warnings[0]


def test_a_missing_timeout_flag_warns() -> None:
    flags = {k: v for k, v in SAFE_FLAGS.items() if k != "query_execution_timeout_sec"}
    (warning,) = memgraph_warnings(STORAGE_3, config_rows(flags), SETTINGS)
    assert "--query-execution-timeout-sec" in warning


class FakeGraph:
    """What check_graph reads from a Memgraph server, answered from the recordings; a
    Memgraph before 3.11 rejects ``SHOW STORAGE INFO ON CURRENT DATABASE``."""

    def __init__(self, version: str, storage_mode: str = "IN_MEMORY_TRANSACTIONAL") -> None:
        self.dialect = Dialect(ServerKind.MEMGRAPH)
        self.version = version
        self.storage_mode = storage_mode  # what every storage answer says is in force
        self.asked: list[str] = []

    def __enter__(self) -> FakeGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def server_info(self) -> Any:
        class Info:
            agent = "Neo4j/v5.11.0 compatible graph database server - Memgraph"

        return Info()

    def query(self, what: str, cypher: str, **params: Any) -> list[dict[str, Any]]:
        self.asked.append(cypher)
        old = self.version.startswith("2.")
        if cypher == "SHOW STORAGE INFO ON CURRENT DATABASE" and old:
            raise GraphQueryError(f"{what}: Memgraph.ClientError.MemgraphError: no viable input")
        mode = self.storage_mode
        answers = {
            "SHOW VERSION": [{"version": self.version}],
            "SHOW STORAGE INFO ON CURRENT DATABASE": with_value(STORAGE_3, "storage_mode", mode),
            "SHOW STORAGE INFO": (
                with_value(STORAGE_2, "storage_mode", mode)
                if old
                else with_value(STORAGE_3_INSTANCE, "global_storage_mode", mode)
            ),
            "SHOW CONFIG": config_rows({**DEFAULT_FLAGS, "storage_mode": mode}),
        }
        return answers[cypher]


@pytest.mark.parametrize(
    ("version", "asked"),
    [
        ("3.12.0", ["SHOW STORAGE INFO ON CURRENT DATABASE"]),
        ("2.21.0", ["SHOW STORAGE INFO ON CURRENT DATABASE", "SHOW STORAGE INFO"]),
    ],
)
def test_check_graph_asks_memgraph_and_reports_its_warnings(version: str, asked: list[str]) -> None:
    fake = FakeGraph(version)
    # the fake answers the part of Graph that check_graph uses
    check = doctor.check_graph(SETTINGS, connect=lambda settings: cast(Graph, fake))
    assert check.ok and f"memgraph {version}" in check.detail
    assert fake.asked == ["SHOW VERSION", *asked, "SHOW CONFIG"]
    assert len(check.warnings) == 5
