"""The search index's maintenance pass: a staging index no alias, no repository's recorded
run and no running run points at is deleted once older than ``staging_gc_min_age_s``; the
live index and a running run's staging index stay. Real graph server and Elasticsearch."""

from __future__ import annotations

import time

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.runs import RunStore
from semgraph.maintenance.search import maintain_search
from semgraph.search.index import SearchIndex

pytestmark = pytest.mark.integration


def test_orphaned_staging_indexes_go_live_and_running_ones_stay(
    graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    now = time.time()
    old = now - 3600
    index = SearchIndex(es, settings)
    live = index.create_staging("demo", "r1", 4, now=old)
    index.flip_alias("demo", live)
    crashed = index.create_staging("demo", "r2", 4, now=old)
    running = index.create_staging("demo", "r3", 4, now=old)
    young = index.create_staging("demo", "r4", 4, now=now)
    RunStore(graph).start("r3", "demo", "c3", "job-3", "w", now)
    assert crashed in {i.name for i in index.list_indexes()}

    maintain_search(settings.model_copy(update={"staging_gc_min_age_s": 600.0}), graph, es)

    assert {i.name for i in index.list_indexes()} == {live, running, young}
