"""``semgraph doctor``: what the servers are, whether they are healthy, and what is unsafe
(Memgraph settings; what ``semgraph serve`` exposes: :func:`check_exposure`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from semgraph.config import Settings, is_loopback_host
from semgraph.db import Graph, connect_graph, connect_search, search_errors
from semgraph.dialect import ServerKind
from semgraph.errors import ConfigError, GraphQueryError, StoreError


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    warnings: list[str] = field(default_factory=list)


#: what the product needs from Memgraph (docs/memgraph.md says why, setting by setting)
MEMGRAPH_STORAGE_MODE = "IN_MEMORY_TRANSACTIONAL"
MEMGRAPH_ISOLATION = "SNAPSHOT_ISOLATION"
MEMGRAPH_ANALYTICAL = "IN_MEMORY_ANALYTICAL"  # the worker and serve refuse to start on it


def _as_map(rows: list[dict[str, Any]], key: str, value: str) -> dict[str, str]:
    return {str(r[key]): str(r[value]) for r in rows if r.get(value) is not None}


def _first(values: dict[str, str], *names: str) -> str | None:
    return next((values[n] for n in names if values.get(n) not in (None, "")), None)


def memgraph_warnings(
    rows_storage: list[dict[str, Any]], rows_config: list[dict[str, Any]], settings: Settings
) -> list[str]:
    """Every unsafe Memgraph setting, from its ``SHOW STORAGE INFO`` and ``SHOW CONFIG``
    answers. The field names of 2.x-3.10 (``storage_mode``, ``global_isolation_level``) and of
    3.11+ are both read; on 3.11+ the per-database answer (``storage_mode``,
    ``storage_isolation_level``) wins over the instance-wide one (``global_storage_mode``,
    ``global_isolation_level``: the start-up flags, not a later runtime change)."""
    storage = _as_map(rows_storage, "storage info", "value")
    config = _as_map(rows_config, "name", "current_value")
    warnings: list[str] = []
    mode = _first(storage, "storage_mode", "global_storage_mode") or _first(config, "storage_mode")
    if mode != MEMGRAPH_STORAGE_MODE:
        warnings.append(
            f"Memgraph storage mode is {mode or 'unknown'}: jobs need {MEMGRAPH_STORAGE_MODE} "
            "(transactions and durability); start it with --storage-mode=IN_MEMORY_TRANSACTIONAL"
        )
    isolation = _first(storage, "storage_isolation_level", "global_isolation_level") or _first(
        config, "isolation_level"
    )
    if isolation != MEMGRAPH_ISOLATION:
        warnings.append(
            f"Memgraph isolation level is {isolation or 'unknown'}: the queue's claims and "
            f"fenced writes and the atomic publish are built for {MEMGRAPH_ISOLATION}; start "
            "it with --isolation-level=SNAPSHOT_ISOLATION"
        )
    warnings += _timeout_warnings(config, settings)
    flush = config.get("storage_wal_file_flush_every_n_tx", "unknown")
    if flush != "1":
        warnings.append(
            f"Memgraph flushes the WAL every {flush} transactions: a crash can lose enqueued "
            "jobs; start it with --storage-wal-file-flush-every-n-tx=1"
        )
    if config.get("storage_wal_enabled", "true").lower() != "true":
        warnings.append("Memgraph WAL is disabled: committed jobs are lost on restart")
    recover = _first(config, "data_recovery_on_startup", "storage_recover_on_startup")
    if recover is not None and recover.lower() != "true":
        warnings.append(
            "Memgraph does not recover its data on startup: a restart loses the queue and the "
            "graph; start it with --data-recovery-on-startup=true"
        )
    if config.get("storage_properties_on_edges", "true").lower() != "true":
        warnings.append(
            "Memgraph stores no edge properties: the publish writes line numbers and "
            "resolution tiers on edges; start it with --storage-properties-on-edges=true"
        )
    return warnings


def _timeout_warnings(config: dict[str, str], settings: Settings) -> list[str]:
    """Memgraph times a whole explicit transaction from BEGIN against
    ``--query-execution-timeout-sec``; a publish is one transaction and may take as long as
    the job, so anything shorter than the job's own limit can abort a publish."""
    raw = config.get("query_execution_timeout_sec")
    try:
        timeout_s = float(raw) if raw is not None else None
    except ValueError:
        timeout_s = None
    if timeout_s is None:
        return [
            f"Memgraph reports no usable query_execution_timeout_sec ({raw!r}); it aborts any "
            "transaction past it (default 600 s); set --query-execution-timeout-sec to at "
            f"least SEMGRAPH_JOB_TIMEOUT_S ({settings.job_timeout_s:g}) or 0"
        ]
    if 0 < timeout_s < settings.job_timeout_s:
        return [
            f"Memgraph aborts any transaction after {timeout_s:g} s "
            "(--query-execution-timeout-sec, timed from BEGIN): a publish is one transaction "
            f"and a job may run for SEMGRAPH_JOB_TIMEOUT_S = {settings.job_timeout_s:g} s; "
            "raise it to at least that, or 0 (no limit); at runtime: "
            "SET DATABASE SETTING 'query.timeout' TO '<s>'"
        ]
    return []


def _storage_info(graph: Graph) -> list[dict[str, Any]]:
    """The first answer a storage-info query gets (the newest syntax first)."""
    *newer, oldest = graph.dialect.storage_info_queries
    for query in newer:
        try:
            return graph.query("doctor storage", query)
        except GraphQueryError:
            continue  # a Memgraph older than the syntax
    return graph.query("doctor storage", oldest)


def storage_mode(graph: Graph) -> str | None:
    """The storage mode of the Memgraph database in force (``SHOW STORAGE INFO``, else the
    ``--storage-mode`` flag of ``SHOW CONFIG``); None on Neo4j or when neither answers."""
    if graph.dialect.kind is not ServerKind.MEMGRAPH:
        return None
    storage = _as_map(_storage_info(graph), "storage info", "value")
    mode = _first(storage, "storage_mode", "global_storage_mode")
    if mode is None and graph.dialect.config_query:
        try:
            rows = graph.query("doctor config", graph.dialect.config_query)
        except GraphQueryError:  # SHOW CONFIG needs the CONFIG privilege
            return None
        mode = _first(_as_map(rows, "name", "current_value"), "storage_mode")
    return mode


def refuse_unsafe_graph(graph: Graph) -> None:
    """Raise ConfigError when the graph server cannot run the queue safely: Memgraph in
    ``IN_MEMORY_ANALYTICAL`` keeps no deltas, so the queue's lock-by-write detects no
    conflict (two workers could claim one job) and nothing rolls back. The worker,
    ``semgraph index`` and ``semgraph serve`` call it before they write anything."""
    mode = storage_mode(graph)
    if mode is not None and mode.upper() == MEMGRAPH_ANALYTICAL:
        raise ConfigError(
            f"refusing to start: Memgraph runs in storage mode {MEMGRAPH_ANALYTICAL}, where "
            "the job queue's claims and fenced writes detect no conflict and nothing rolls "
            f"back; start Memgraph with --storage-mode={MEMGRAPH_STORAGE_MODE}, or switch it "
            f"at runtime with STORAGE MODE {MEMGRAPH_STORAGE_MODE}"
        )


def check_graph(
    settings: Settings, *, connect: Callable[[Settings], Graph] = connect_graph
) -> Check:
    try:
        with connect(settings) as graph:
            info = graph.server_info()
            dialect = graph.dialect
            version_rows = graph.query("doctor version", dialect.version_query)
            version = next(iter(version_rows[0].values()), "?") if version_rows else "?"
            warnings: list[str] = []
            if dialect.kind is ServerKind.MEMGRAPH:
                assert dialect.config_query
                warnings = memgraph_warnings(
                    _storage_info(graph),
                    graph.query("doctor config", dialect.config_query),
                    settings,
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


def _tokens_configured(settings: Settings) -> bool:
    return bool(settings.api_token) or settings.api_tokens_file is not None


def exposure_refusal(settings: Settings) -> str | None:
    """Why ``semgraph serve`` must not start with these settings (one line), or None: reads
    with no token configured are served on a loopback address only."""
    host = settings.web_host
    if _tokens_configured(settings) or settings.api_read_open or is_loopback_host(host):
        return None
    return (
        f"refusing to serve reads on {host}, which is not a loopback address, with no API "
        "token: configure one (SEMGRAPH_API_TOKEN or SEMGRAPH_API_TOKENS_FILE) or open reads "
        "explicitly (SEMGRAPH_API_READ_OPEN=true)"
    )


def check_exposure(settings: Settings) -> Check:
    """What ``semgraph serve`` with these settings exposes, and to whom."""
    main = f"{settings.web_host}:{settings.web_port}"
    refusal = exposure_refusal(settings)
    if refusal is not None:
        return Check("web", False, refusal)
    warnings: list[str] = []
    if settings.api_read_open:
        detail = f"reads on {main} are OPEN: anyone who reaches it reads indexed source code"
        warnings.append(
            "SEMGRAPH_API_READ_OPEN=true: search, graph, jobs and runs answer without a token"
        )
    elif _tokens_configured(settings):
        detail = f"reads on {main} need a bearer token with the read scope"
    else:
        detail = f"reads on {main} (loopback only) need no token; mutations are disabled"
    path = settings.api_tokens_file
    if path is not None:
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            return Check("web", False, f"SEMGRAPH_API_TOKENS_FILE {path}: {exc.strerror}")
        if mode & 0o007:
            warnings.append(
                f"the tokens file {path} is readable by every user (mode {mode & 0o777:o})"
            )
    if settings.webhook_port is not None:
        hooks = f"{settings.webhook_host or settings.web_host}:{settings.webhook_port}"
        detail += f"; webhook-only listener on {hooks}"
    if settings.webhook_rate_per_s <= 0:
        warnings.append("SEMGRAPH_WEBHOOK_RATE_PER_S=0: webhooks have no per-client rate limit")
    return Check("web", True, detail, warnings)


def run_doctor(settings: Settings) -> list[Check]:
    return [check_graph(settings), check_search(settings), check_exposure(settings)]
