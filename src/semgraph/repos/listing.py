"""What an operator sees of the repositories (``semgraph repos list|show``, ``GET
/repos/{key}``): every repository the graph knows, published (``:Repository``) or only
recorded at its first enqueue (``:RepoRecord``), with its state:

* ``live``: published and not being removed;
* ``removing``: a removal started (the ``:Repository`` node is marked first and deleted
  last): never presented as live;
* ``unpublished``: recorded at its first enqueue, never published yet.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.queue.models import JobStatus
from semgraph.queue.records import list_records, record_props, size_class
from semgraph.queue.staleness import RECENT_JOBS, stale_reason
from semgraph.queue.store import JobStore
from semgraph.repos import graph as gr
from semgraph.search.index import SearchIndex
from semgraph.search.vectors import semantic_states

MAX_KEY_CHARS = 512
UNPUBLISHED = "unpublished"


def check_key(key: str) -> str | None:
    """Why ``key`` cannot be a repository key (None when it can)."""
    if not key or not key.strip():
        return "a repository key must not be empty"
    if len(key) > MAX_KEY_CHARS:
        return f"a repository key is at most {MAX_KEY_CHARS} characters"
    if any(ord(c) < 32 or ord(c) == 127 for c in key):
        return "a repository key has no control characters"
    return None


def list_repositories(graph: Graph) -> list[dict[str, Any]]:
    """Every known repository in key order: published ones with their state, and records of
    repositories never published (``unpublished``)."""
    found: dict[str, dict[str, Any]] = {}
    for row in gr.list_repositories(graph):
        found[str(row["key"])] = {**row, "source": row.get("url")}
    for rec in list_records(graph):
        key = str(rec["key"])
        if key in found:
            found[key].update({k: v for k, v in rec.items() if v is not None and k != "key"})
            found[key]["source"] = rec.get("source") or found[key].get("url")
        else:
            found[key] = {**rec, "state": UNPUBLISHED}
    return [found[k] for k in sorted(found)]


def _path_of(source: str) -> str:
    """``org/name`` of a clone URL (``https://host/org/name.git``, ``ssh://git@host/...``)."""
    path = urlsplit(source).path if "://" in source else source.split(":", 1)[-1]
    return path.strip("/").lower().removesuffix(".git")


def keys_named(graph: Graph, full_name: str) -> list[str]:
    """The keys of the known repositories whose source's path is ``full_name`` (a host's
    ``org/name``, compared case-insensitively), for events that name a repository but no
    URL (GitLab's ``project_destroy``)."""
    wanted = full_name.strip("/").lower().removesuffix(".git")
    return [
        str(repo["key"])
        for repo in list_repositories(graph)
        if isinstance(repo.get("source"), str) and _path_of(repo["source"]) == wanted
    ]


def show_repository(
    settings: Settings, graph: Graph, es: elasticsearch.Elasticsearch, key: str
) -> dict[str, Any] | None:
    """Everything about one repository, or None when the graph does not know it."""
    repo = gr.repository_props(graph, key)
    record = record_props(graph, key)
    if repo is None and record is None:
        return None
    state = UNPUBLISHED if repo is None else str(repo.get("state") or "live")
    index = SearchIndex(es, settings)
    store = JobStore(graph, settings)
    jobs = [
        {"id": j.id, "kind": j.kind, "status": j.status.value, "commit": j.commit}
        for status in (JobStatus.RUNNING, JobStatus.PENDING)
        for j in store.list(status=status.value, repo=key, limit=10)
    ]
    recent = store.list(repo=key, limit=RECENT_JOBS)  # newest first, ended ones too
    live = index.live_index(key)
    return {
        "key": key,
        "state": state,
        "repository": repo,
        "record": record,
        "counts": gr.GraphRemoval(graph, key).counts(),
        "size_class": size_class(graph, settings, key),
        "alias": index.alias_name(key),
        "live_index": live,
        "indexes": index.repository_indexes(key),
        "jobs": jobs,
        # progressive publish: its vectors complete, or pending (semgraph.search.vectors)
        "semantic": repo_semantic(es, live, key),
        # why it is not at its newest commit (None: nothing explains a gap)
        "stale_reason": stale_reason(recent),
    }


def repo_semantic(
    es: elasticsearch.Elasticsearch, live: str | None, key: str
) -> dict[str, Any] | None:
    """How complete the vectors of ``key``'s live index are (None: no live index)."""
    semantic = semantic_states(es, [live], [key]).get(key) if live else None
    return semantic.to_dict() if semantic is not None else None
