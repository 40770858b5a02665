"""semgraph's exception tree. Every error we raise derives from :class:`SemgraphError`.

::

    SemgraphError
    ├── ConfigError
    ├── ServiceError              local service stack (services up/down)
    ├── StoreError                a data store failed
    │   ├── GraphError
    │   │   ├── GraphUnavailable  cannot reach the Bolt server
    │   │   ├── GraphConflict     transient conflict (retry may succeed)
    │   │   └── GraphQueryError   the server rejected a query
    │   └── SearchError
    │       ├── SearchUnavailable cannot reach Elasticsearch
    │       └── SearchRequestError Elasticsearch rejected a request
    └── JobError                  a job failed (message is recorded on the job)

Each class's docstring is its default message. Outcome states (job status, run status) are
enums elsewhere, not exceptions.
"""

from __future__ import annotations


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


class StoreError(SemgraphError):
    """A data store failed."""


class GraphError(StoreError):
    """The graph server failed."""


class GraphUnavailable(GraphError):
    """The graph server is unreachable."""


class GraphConflict(GraphError):
    """The graph server reported a transient conflict; the operation may be retried."""


class GraphQueryError(GraphError):
    """The graph server rejected a query."""


class SearchError(StoreError):
    """Elasticsearch failed."""


class SearchUnavailable(SearchError):
    """Elasticsearch is unreachable."""


class SearchRequestError(SearchError):
    """Elasticsearch rejected a request."""


class JobError(SemgraphError):
    """The job failed."""


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
