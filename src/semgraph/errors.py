"""semgraph's exception tree. Every error we raise derives from :class:`SemgraphError`.

::

    SemgraphError
    ├── ConfigError
    ├── ServiceError              local service stack (services up/down)
    ├── PayloadError              a request body (webhook, API) is malformed or incomplete
    ├── ShuttingDown              the web server is stopping and takes no new work (503)
    ├── QueueError                the job queue refused an operation
    │   ├── JobNotFound           no job has that id
    │   ├── InvalidTransition     the job's status does not allow that operation
    │   └── QueueInputError       a job field or queue parameter is invalid (length, range)
    ├── JobCancelled              raised at a job checkpoint: abandoned, shutdown, timeout, lost
    ├── GraphInputError           a code-graph query's input is invalid (name, depth, limit)
    ├── SchemaError               a graph index or constraint specification is invalid
    ├── StoreError                a data store failed
    │   ├── GraphError
    │   │   ├── GraphUnavailable  cannot reach the Bolt server
    │   │   ├── GraphConflict     transient: conflict, memory pool full (retry)
    │   │   ├── GraphTimeout      the server aborted a transaction at its execution timeout
    │   │   ├── GraphQueryError   the server rejected a query
    │   │   └── RunStateError     no such index run, or its status forbids the change
    │   │       └── RunNotFound   no index run has that id
    │   └── SearchError
    │       ├── SearchUnavailable cannot reach Elasticsearch
    │       ├── SearchRequestError Elasticsearch rejected a request
    │       │   └── SearchBulkError   documents rejected inside a bulk request (a job error)
    │       ├── SearchNotIndexed  nothing to search: no index, or none for that repository
    │       └── SearchQueryError  the query itself is invalid (empty, too long, bad k)
    └── JobError                  a job failed (message is recorded on the job)
        ├── EmbeddingError        the embedding model could not be loaded or failed
        ├── CheckoutError         git could not fetch or materialise the commit
        ├── GraphTooLarge         the repository's graph exceeds the server's transaction memory
        └── SpillError            the on-disk spill could not be written (disk full ...)
            └── SpillCorrupt      the spill is truncated, corrupt or of another version

Each class's docstring is its default message. Outcome states (job status, run status) are
enums elsewhere, not exceptions.
"""

from __future__ import annotations

import enum


class SemgraphError(Exception):
    """semgraph failed."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or (self.__doc__ or "").strip() or type(self).__name__)

    @property
    def message(self) -> str:
        return str(self.args[0])


class ConfigError(SemgraphError):
    """The configuration is invalid."""


class ServiceError(SemgraphError):
    """A local service could not be managed."""


class PayloadError(SemgraphError):
    """The request payload is malformed or incomplete."""


class ShuttingDown(SemgraphError):
    """The server is shutting down and takes no new work; retry."""


class QueueError(SemgraphError):
    """The job queue refused the operation."""


class JobNotFound(QueueError):
    """No job has that id."""


class InvalidTransition(QueueError):
    """The job's status does not allow that operation."""


class QueueInputError(QueueError):
    """A job field or queue parameter is invalid."""


class SourceConflict(QueueInputError):
    """An enqueue names another source than the one the repository is recorded with."""


class CancelReason(enum.StrEnum):
    """Why the worker asked a running job to stop at its next checkpoint."""

    CANCELLED = "cancelled"
    SHUTDOWN = "shutdown"  # the worker is stopping (SIGTERM / SIGINT)
    TIMEOUT = "timeout"  # over job_timeout_s
    LOST = "lost"  # the job's claim is no longer this worker's (another recovered it)
    ABANDONED = "abandoned"  # an operator abandoned the job


class JobCancelled(SemgraphError):
    """The job was cancelled at a checkpoint."""

    def __init__(
        self, message: str | None = None, reason: CancelReason = CancelReason.CANCELLED
    ) -> None:
        super().__init__(message)
        self.reason = reason


class GraphInputError(SemgraphError):
    """A code-graph query's input is invalid."""


class StoreError(SemgraphError):
    """A data store failed."""


class GraphError(StoreError):
    """The graph server failed."""


class GraphUnavailable(GraphError):
    """The graph server is unreachable."""


class GraphConflict(GraphError):
    """The graph server reported a transient error (a lock conflict, a deadlock, its memory
    pool full for now); the operation may be retried."""


class GraphTimeout(GraphError):
    """The graph server aborted the transaction because it ran past the server's execution
    timeout; it is not retried (it would time out again): raise the timeout
    (Memgraph --query-execution-timeout-sec, Neo4j db.transaction.timeout)."""


class GraphQueryError(GraphError):
    """The graph server rejected a query."""


class GraphConstraintViolation(GraphQueryError):
    """The server refused a write on a uniqueness constraint (a lost race between two
    writers that each saw no node; the loser may run again)."""


class RunStateError(GraphError):
    """The index run does not exist, or its status does not allow that change."""


class RunNotFound(RunStateError):
    """No index run has that id."""


class SearchError(StoreError):
    """Elasticsearch failed."""


class SearchUnavailable(SearchError):
    """Elasticsearch is unreachable."""


class SearchRequestError(SearchError):
    """Elasticsearch rejected a request."""


class SearchBulkError(SearchRequestError):
    """Elasticsearch rejected documents in a bulk request."""


class SearchNotIndexed(SearchError):
    """Nothing is indexed for this search; run `semgraph index PATH` first."""


class SearchQueryError(SearchError):
    """The search query is invalid."""


class JobError(SemgraphError):
    """The job failed."""


class EmbeddingError(JobError):
    """The embedding model could not be loaded or failed to embed."""


class GraphTooLarge(JobError):
    """The repository's graph does not fit in one transaction on the graph server's memory
    settings; raise the server's transaction memory limit (it is never split silently)."""


class CheckoutError(JobError):
    """The repository could not be checked out."""


class SpillError(JobError):
    """The parse spill could not be written."""


class SpillCorrupt(SpillError):
    """The parse spill is truncated or corrupt."""


class SchemaError(SemgraphError):
    """A graph index or constraint specification is invalid."""


def cause_chain(exc: BaseException) -> list[str]:
    """Messages of ``exc`` and its causes, outermost first (for one-line CLI errors)."""
    out: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        text = str(current).strip().splitlines()[0] if str(current).strip() else ""
        out.append(f"{type(current).__name__}: {text}" if text else type(current).__name__)
        current = current.__cause__ or current.__context__
    return out
