"""``semgraph probe-worker``: liveness from the worker's heartbeat in the real graph."""

from __future__ import annotations

import pytest

from semgraph.config import Settings
from semgraph.db import Graph, connect_graph
from semgraph.queue.store import JobStore
from semgraph.queue.workers import probe_worker

pytestmark = pytest.mark.integration


def test_probe_follows_the_heartbeat(graph: Graph, settings: Settings) -> None:
    store = JobStore(graph, settings)
    store.register_worker("w-1", {"name": "pod-a"}, now=1000.0)
    store.worker_heartbeat("w-1", now=1000.0)
    assert probe_worker(graph, "pod-a", now=1050.0, max_age_s=120).alive
    stale = probe_worker(graph, "pod-a", now=1200.0, max_age_s=120)
    assert not stale.alive and "200s" in stale.detail
    store.worker_heartbeat("w-1", now=1190.0)
    assert probe_worker(graph, "pod-a", now=1200.0, max_age_s=120).alive
    assert not probe_worker(graph, "pod-b", now=1200.0, max_age_s=120).alive
    store.stop_worker("w-1", now=1195.0)
    assert not probe_worker(graph, "pod-a", now=1200.0, max_age_s=120).alive


def test_a_restarted_worker_counts_by_its_newest_heartbeat(
    graph: Graph, settings: Settings
) -> None:
    store = JobStore(graph, settings)
    store.register_worker("old", {"name": "pod-a"}, now=0.0)
    store.worker_heartbeat("old", now=10.0)
    store.register_worker("new", {"name": "pod-a"}, now=500.0)
    store.worker_heartbeat("new", now=500.0)
    assert probe_worker(graph, "pod-a", now=550.0, max_age_s=120).alive


def test_graph_outage_is_not_the_workers_fault(settings: Settings) -> None:
    down = settings.model_copy(
        update={"bolt_uri": "bolt://127.0.0.1:9", "bolt_connect_timeout_s": 1.0}
    )
    with connect_graph(down) as dead:
        result = probe_worker(dead, "pod-a", now=0.0, max_age_s=120)
    assert result.alive and "unreachable" in result.detail
