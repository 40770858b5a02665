"""Liveness of one worker from its heartbeat in the graph (the Kubernetes exec probe).

``semgraph probe-worker`` exits 0 while the ``:Worker`` node named after this host (the pod
name; ``SEMGRAPH_WORKER_NAME`` when set) is running and heartbeat within ``--max-age-s``,
and 1 when it is missing, stopped or stale. A graph outage is not the worker's fault:
restarting the pod would not help, so the probe answers 0 then and says why.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass

import typer

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


def probe_worker_cmd(
    ctx: typer.Context,
    max_age_s: float = typer.Option(
        120.0, "--max-age-s", min=1, help="Oldest acceptable heartbeat, in seconds."
    ),
    name: str | None = typer.Option(
        None, help="Worker name (default: SEMGRAPH_WORKER_NAME, else this host's name)."
    ),
) -> None:
    """Exit 1 unless this host's worker heartbeat recently (Kubernetes liveness probe)."""
    from semgraph.cli import out, settings_from
    from semgraph.db import connect_graph

    settings = settings_from(ctx)
    worker = name or settings.worker_name or socket.gethostname()
    with connect_graph(settings) as graph:
        result = probe_worker(graph, worker, now=time.time(), max_age_s=max_age_s)
    out.print(result.detail, markup=False)
    if not result.alive:
        raise typer.Exit(1)
