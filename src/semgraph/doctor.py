"""``semgraph doctor``: what the servers are, whether they are healthy, and what is unsafe."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from semgraph.config import Settings
from semgraph.db import connect_graph, connect_search, search_errors
from semgraph.errors import StoreError
from semgraph.graph.dialect import ServerKind


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    warnings: list[str] = field(default_factory=list)


def _memgraph_warnings(
    rows_storage: list[dict[str, Any]], rows_config: list[dict[str, Any]]
) -> list[str]:
    warnings = []
    storage = {str(r.get("storage info")): r.get("value") for r in rows_storage}
    mode = str(storage.get("storage_mode", "unknown"))
    if mode != "IN_MEMORY_TRANSACTIONAL":
        warnings.append(
            f"Memgraph storage mode is {mode}: jobs need IN_MEMORY_TRANSACTIONAL "
            "(transactions and durability)"
        )
    config = {str(r.get("name")): str(r.get("current_value")) for r in rows_config}
    flush = config.get("storage_wal_file_flush_every_n_tx", "unknown")
    if flush != "1":
        warnings.append(
            f"Memgraph flushes the WAL every {flush} transactions: a crash can lose enqueued "
            "jobs; start it with --storage-wal-file-flush-every-n-tx=1"
        )
    if config.get("storage_wal_enabled", "true").lower() != "true":
        warnings.append("Memgraph WAL is disabled: committed jobs are lost on restart")
    return warnings


def check_graph(settings: Settings) -> Check:
    try:
        with connect_graph(settings) as graph:
            info = graph.server_info()
            dialect = graph.dialect
            version_rows = graph.query("doctor version", dialect.version_query)
            version = next(iter(version_rows[0].values()), "?") if version_rows else "?"
            warnings: list[str] = []
            if dialect.kind is ServerKind.MEMGRAPH:
                storage_q, config_q = dialect.storage_info_query, dialect.config_query
                assert storage_q and config_q
                warnings = _memgraph_warnings(
                    graph.query("doctor storage", storage_q), graph.query("doctor config", config_q)
                )
        detail = f"{dialect.kind.value} {version} at {settings.bolt_uri} (agent {info.agent!r})"
        return Check("graph", True, detail, warnings)
    except StoreError as exc:
        return Check("graph", False, f"{settings.bolt_uri}: {exc}")


def check_search(settings: Settings) -> Check:
    client = connect_search(settings)
    try:
        with search_errors("doctor info"):
            # GET / is not served by the integ-test distribution; ask the local node instead
            nodes = client.nodes.info(node_id="_local", metric="_none")
            health = client.cluster.health()
        version = next(iter(nodes["nodes"].values()))["version"]
        status = str(health["status"])
        detail = (
            f"Elasticsearch {version} at {settings.es_url}, "
            f"cluster {health['cluster_name']} status {status}"
        )
        return Check("search", status in {"green", "yellow"}, detail)
    except StoreError as exc:
        return Check("search", False, f"{settings.es_url}: {exc}")
    finally:
        client.close()


def run_doctor(settings: Settings) -> list[Check]:
    return [check_graph(settings), check_search(settings)]
