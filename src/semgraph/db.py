"""The one connection boundary: Bolt driver and Elasticsearch client factories.

Driver and client exceptions are translated into semgraph's own error types here, and only
here (:func:`graph_errors`, :func:`search_errors`), always ``raise ... from exc``. Managers
(queue store, graph writer/reader, search index) call this module; the CLI, worker and web
layer call managers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import neo4j
import neo4j.exceptions as neo_exc

from semgraph.config import Settings
from semgraph.dialect import Dialect, IndexSpec, detect_kind, is_unique_violation, timeout_setting
from semgraph.errors import (
    GraphConflict,
    GraphConstraintViolation,
    GraphError,
    GraphQueryError,
    GraphTimeout,
    GraphUnavailable,
    SearchError,
    SearchRequestError,
    SearchUnavailable,
)
from semgraph.logs import event

if TYPE_CHECKING:
    import elasticsearch

log = logging.getLogger(__name__)
T = TypeVar("T")
#: the transaction a statement runs in: :meth:`Graph.transaction`'s, or the managed one that
#: :meth:`Graph.execute_read` and :meth:`Graph.execute_write` hand their function
Tx = neo4j.Transaction | neo4j.ManagedTransaction


@contextmanager
def graph_errors(what: str) -> Iterator[None]:
    """Translate Bolt driver errors raised inside the block into semgraph errors."""
    try:
        yield
    except (neo_exc.ServiceUnavailable, neo_exc.SessionExpired, OSError) as exc:
        raise GraphUnavailable(f"{what}: graph server unreachable ({exc})") from exc
    except neo_exc.Neo4jError as exc:
        raise _server_error(what, exc) from exc
    except neo_exc.DriverError as exc:
        raise GraphError(f"{what}: {exc}") from exc


def _server_error(what: str, exc: neo_exc.Neo4jError) -> GraphError:
    """Our error for an answer of the server (a ``Neo4jError``, transient or not)."""
    setting = timeout_setting(exc.code, exc.message)
    if setting is not None:
        # Memgraph files its timeout abort as transient: it is never a conflict (the same
        # transaction would only time out again), so nothing retries it
        return GraphTimeout(
            f"{what}: the graph server aborted the transaction at its execution timeout "
            f"({exc.code}: {exc.message}); raise {setting}"
        )
    if isinstance(exc, neo_exc.TransientError):
        # a lock conflict, a deadlock, or the server's memory pool full for now (Neo4j files
        # MemoryPoolOutOfMemoryError as transient too): a retry may succeed either way
        return GraphConflict(
            f"{what}: transient server error, may be retried ({exc.code}: {exc.message})"
        )
    if is_unique_violation(exc.code, exc.message):
        return GraphConstraintViolation(f"{what}: {exc.code}: {exc.message}")
    return GraphQueryError(f"{what}: {exc.code}: {exc.message}")


@contextmanager
def search_errors(what: str) -> Iterator[None]:
    """Translate Elasticsearch client errors raised inside the block into semgraph errors."""
    # heavy (0.15 s): loaded on demand, so that a graph-only command never pays for it
    import elastic_transport
    import elasticsearch

    try:
        yield
    except (elastic_transport.ConnectionError, elastic_transport.ConnectionTimeout) as exc:
        raise SearchUnavailable(f"{what}: Elasticsearch unreachable ({exc})") from exc
    except elasticsearch.ApiError as exc:
        # bounded: a non-JSON error body comes back whole and may quote the request
        message = str(exc.message)[:300]
        raise SearchRequestError(f"{what}: HTTP {exc.meta.status}: {message}") from exc
    except elastic_transport.TransportError as exc:
        raise SearchError(f"{what}: {exc}") from exc


@dataclass
class ServerInfo:
    agent: str
    address: str
    protocol_version: str


class Graph:
    """A Bolt driver plus the dialect of the server behind it."""

    def __init__(self, driver: neo4j.Driver, database: str | None) -> None:
        self.driver = driver
        self.database = database
        self._dialect: Dialect | None = None
        self._info: ServerInfo | None = None

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> Graph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def server_info(self) -> ServerInfo:
        if self._info is None:
            with graph_errors("connect"):
                info = self.driver.get_server_info()
            self._info = ServerInfo(
                agent=str(info.agent),
                address=f"{info.address[0]}:{info.address[1]}",
                protocol_version=".".join(str(p) for p in info.protocol_version),
            )
        return self._info

    @property
    def dialect(self) -> Dialect:
        if self._dialect is None:
            self._dialect = Dialect(detect_kind(self.server_info().agent))
        return self._dialect

    def session(self) -> neo4j.Session:
        return self.driver.session(database=self.database)

    @contextmanager
    def transaction(self, what: str) -> Iterator[neo4j.Transaction]:
        """One explicit write transaction: committed when the block ends normally, rolled
        back when it raises; driver errors (COMMIT's included) come out as semgraph errors.
        The queue store and the graph publish both write through this."""
        with graph_errors(what), self.session() as session:
            tx = session.begin_transaction()
            try:
                yield tx
                tx.commit()
            finally:
                if not tx.closed():
                    tx.rollback()

    def execute_write(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn(tx, ...)`` in an explicit write transaction (driver retries transients)."""
        with graph_errors(what), self.session() as session:
            return session.execute_write(fn, *args, **kwargs)

    def execute_read(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        with graph_errors(what), self.session() as session:
            return session.execute_read(fn, *args, **kwargs)

    def query(self, what: str, cypher: str, **params: Any) -> list[dict[str, Any]]:
        """One auto-commit query; returns the records as dicts."""
        with graph_errors(what), self.session() as session:
            result = session.run(cypher, params)
            return [record.data() for record in result]

    def ensure_schema(self, specs: tuple[IndexSpec, ...]) -> list[str]:
        """Create every constraint/index (as many statements as the dialect needs for each);
        DDL in auto-commit, "already exists" is success. Returns the names of the specs whose
        statements ran."""
        created: list[str] = []
        for spec in specs:
            for ddl in self.dialect.create_ddl(spec):
                try:
                    with graph_errors(f"schema {spec.name}"), self.session() as session:
                        session.run(ddl).consume()
                    if spec.name not in created:
                        created.append(spec.name)
                except GraphQueryError as exc:
                    if not self.dialect.is_already_exists(str(exc)):
                        raise
            event(log, logging.DEBUG, "schema_ensure", spec=spec.name)
        return created


def connect_graph(settings: Settings) -> Graph:
    """A driver for ``settings.bolt_uri`` (auth off when no user is configured)."""
    auth = (settings.bolt_user, settings.bolt_password) if settings.bolt_user else None
    with graph_errors("create driver"):
        driver = neo4j.GraphDatabase.driver(
            settings.bolt_uri,
            auth=auth,
            connection_timeout=settings.bolt_connect_timeout_s,
            max_transaction_retry_time=15.0,
            notifications_min_severity="OFF",
        )
    return Graph(driver, settings.bolt_database)


def connect_search(settings: Settings) -> elasticsearch.Elasticsearch:
    """An Elasticsearch client for ``settings.es_url``."""
    import elasticsearch  # heavy: on demand (see search_errors)

    return elasticsearch.Elasticsearch(
        settings.es_url,
        request_timeout=settings.es_request_timeout_s,
        retry_on_timeout=False,
        max_retries=1,
    )
