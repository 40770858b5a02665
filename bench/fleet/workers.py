"""Real ``semgraph worker`` processes for the fleet benchmarks (``bench_lanes``,
``bench_backlog``): one per lane, each logging to its own file, stopped as a supervisor
stops them (SIGTERM, then SIGKILL after 60 s)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def start_workers(
    lanes: list[str],
    log_dir: Path,
    *,
    name: str,
    poll_s: float,
    env: Mapping[str, str] | None = None,
) -> list[subprocess.Popen[bytes]]:
    """One worker per entry of ``lanes`` (``--lane``), named ``{name}-{lane}-{i}``, affinity
    off (the benchmarks measure lanes alone), logging at WARNING to ``log_dir``."""
    procs = []
    for i, lane in enumerate(lanes):
        worker_env = {
            **os.environ,
            **(env or {}),
            "SEMGRAPH_WORKER_NAME": f"{name}-{lane}-{i}",
            "SEMGRAPH_CLAIM_AFFINITY_S": "0",
            "SEMGRAPH_POLL_INTERVAL_S": str(poll_s),
            "SEMGRAPH_LOG_LEVEL": "WARNING",
        }
        log = (log_dir / f"worker-{lane}-{i}.log").open("wb")
        cmd = [sys.executable, "-m", "semgraph", "worker", "--lane", lane]
        procs.append(subprocess.Popen(cmd, env=worker_env, stdout=log, stderr=subprocess.STDOUT))
    return procs


def stop_workers(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
