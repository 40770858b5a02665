"""The search index's maintenance pass: repair divergence (:mod:`semgraph.check`), then
delete orphaned staging indexes.
"""

from __future__ import annotations

import time

import elasticsearch

from semgraph.check import check_repositories
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.reader import GraphReader
from semgraph.graph.runs import RunStore
from semgraph.metrics import removed
from semgraph.search.index import SearchIndex


def maintain_search(settings: Settings, graph: Graph, es: elasticsearch.Elasticsearch) -> None:
    """Worker maintenance: repair divergence, then delete orphaned staging indexes (those
    of no live alias, no repository's recorded run and no running run)."""
    check_repositories(settings, graph, es, repair=True)
    keep = {(str(r["key"]), str(r["run_id"])) for r in GraphReader(graph).repositories()}
    keep |= {
        (str(r["repo"]), str(r["id"])) for r in RunStore(graph).list(status="running", limit=10_000)
    }
    deleted = SearchIndex(es, settings).gc_orphans(
        keep, now=time.time(), min_age_s=settings.staging_gc_min_age_s
    )
    removed("staging_index", len(deleted))
