"""Worker records: the ``:Worker`` nodes (registered, heartbeat, stopped, pruned), how many
workers are alive, and the liveness of one worker from its heartbeat (the Kubernetes exec
probe, ``semgraph probe-worker``).

A worker's record carries who it is (host, boot id, pid and its start time: what the sweep
judges an owner by, :mod:`semgraph.queue.sweep`) and a lease renewed by every heartbeat.
``semgraph probe-worker`` exits 0 while the ``:Worker`` node named after this host (the pod
name; ``SEMGRAPH_WORKER_NAME`` when set) is running and heartbeat within ``--max-age-s``,
and 1 when it is missing, stopped or stale. A graph outage is not the worker's fault:
restarting the pod would not help, so the probe answers 0 then and says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from semgraph.db import Graph
from semgraph.errors import GraphUnavailable
from semgraph.queue import queries as q


def register(
    graph: Graph, worker_id: str, props: dict[str, Any], *, now: float, lease_s: float
) -> None:
    """Create (or restart) the worker's record: running, heartbeat now, leased ``lease_s``."""
    full = {
        **props,
        "status": "running",
        "started_at": now,
        "heartbeat_at": now,
        "lease_expires_at": now + lease_s,
    }
    graph.query("register worker", q.REGISTER_WORKER, id=worker_id, props=full)


def heartbeat(graph: Graph, worker_id: str, *, now: float, lease_s: float) -> None:
    lease = now + lease_s
    graph.query(
        "worker heartbeat", q.WORKER_HEARTBEAT, id=worker_id, now=now, lease_expires_at=lease
    )


def stop(graph: Graph, worker_id: str, *, now: float) -> None:
    graph.query("stop worker", q.STOP_WORKER, id=worker_id, now=now)


def alive_count(graph: Graph, *, now: float) -> int:
    """Running workers whose lease has not expired at ``now``."""
    rows = graph.query("stats workers", q.WORKERS_ALIVE, now=now)
    return int(rows[0]["n"]) if rows else 0


def purge(graph: Graph, *, cutoff: float, batch: int) -> None:
    """Delete up to ``batch`` records that last heartbeat before ``cutoff`` and own no
    running job."""
    graph.query("purge workers", q.PURGE_WORKERS, cutoff=cutoff, batch=batch)


@dataclass(frozen=True)
class ProbeResult:
    alive: bool
    detail: str


def probe_worker(graph: Graph, name: str, *, now: float, max_age_s: float) -> ProbeResult:
    """Whether the running worker called ``name`` heartbeat within ``max_age_s``."""
    try:
        rows = graph.query("probe worker", q.WORKER_HEARTBEAT_AGE, name=name)
    except GraphUnavailable as exc:
        return ProbeResult(True, f"graph unreachable, not judging the worker: {exc.message}")
    beat = rows[0]["heartbeat_at"] if rows else None
    if beat is None:
        return ProbeResult(False, f"no running worker named {name!r}")
    age = now - float(beat)
    if age > max_age_s:
        return ProbeResult(False, f"worker {name!r} last heartbeat {age:.0f}s ago")
    return ProbeResult(True, f"worker {name!r} heartbeat {max(age, 0.0):.0f}s ago")
