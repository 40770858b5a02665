"""Worker records: the ``:Worker`` nodes, and the liveness of one worker from its heartbeat
(the Kubernetes exec probe, ``semgraph probe-worker``).

``semgraph probe-worker`` exits 0 while the ``:Worker`` node named after this host (the pod
name; ``SEMGRAPH_WORKER_NAME`` when set) is running and heartbeat within ``--max-age-s``,
and 1 when it is missing, stopped or stale. A graph outage is not the worker's fault:
restarting the pod would not help, so the probe answers 0 then and says why.
"""

from __future__ import annotations

from dataclasses import dataclass

from semgraph.db import Graph
from semgraph.errors import GraphUnavailable

WORKER_HEARTBEAT_AGE = """
MATCH (w:Worker {name: $name})
WHERE w.status = 'running'
RETURN max(w.heartbeat_at) AS heartbeat_at
"""


@dataclass(frozen=True)
class ProbeResult:
    alive: bool
    detail: str


def probe_worker(graph: Graph, name: str, *, now: float, max_age_s: float) -> ProbeResult:
    """Whether the running worker called ``name`` heartbeat within ``max_age_s``."""
    try:
        rows = graph.query("probe worker", WORKER_HEARTBEAT_AGE, name=name)
    except GraphUnavailable as exc:
        return ProbeResult(True, f"graph unreachable, not judging the worker: {exc.message}")
    beat = rows[0]["heartbeat_at"] if rows else None
    if beat is None:
        return ProbeResult(False, f"no running worker named {name!r}")
    age = now - float(beat)
    if age > max_age_s:
        return ProbeResult(False, f"worker {name!r} last heartbeat {age:.0f}s ago")
    return ProbeResult(True, f"worker {name!r} heartbeat {max(age, 0.0):.0f}s ago")
