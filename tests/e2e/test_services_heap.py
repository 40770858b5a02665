"""``semgraph services status`` shows the graph server's heap: the one it runs with, or the
one ``up`` would choose (sized from the machine unless SEMGRAPH_NEO4J_HEAP_MB is set)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from semgraph.config import Settings
from semgraph.services import Stack, procs
from semgraph.services.bolt import BoltService, running_heap
from semgraph.services.heap import auto_heap_mb, cgroup_limit_mb, mem_total_mb, tx_memory_mb

pytestmark = pytest.mark.e2e
REPO_ROOT = Path(__file__).resolve().parents[2]


def _status(env: dict[str, str]) -> tuple[int, dict[str, dict[str, object]], str]:
    proc = subprocess.run(
        [sys.executable, "-m", "semgraph.cli", "services", "status", "--json"],
        cwd=REPO_ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc.returncode, {s["name"]: s for s in json.loads(proc.stdout)}, proc.stderr


def test_status_shows_the_heap_the_server_runs_with(stack: Stack, settings: Settings) -> None:
    pid = BoltService(settings).pid()
    assert pid is not None
    expected = running_heap(procs.cmdline(pid))
    assert expected is not None
    rc, states, err = _status({})
    assert rc == 0, err
    neo4j = states["neo4j"]
    assert (neo4j["heap_mb"], neo4j["tx_memory_mb"]) == expected
    assert f"heap {expected[0]} MiB" in str(neo4j["detail"])
    assert f"transactions capped at {expected[1]} MiB" in str(neo4j["detail"])


def test_status_of_a_stopped_stack_shows_the_automatic_heap(tmp_path: Path) -> None:
    env = {
        "SEMGRAPH_STATE_DIR": str(tmp_path / "state"),
        "SEMGRAPH_BOLT_URI": "bolt://127.0.0.1:1",
        "SEMGRAPH_ES_URL": "http://127.0.0.1:1",
        "SEMGRAPH_NEO4J_HEAP_MB": "0",
        "SEMGRAPH_ES_HEAP_MB": "512",
    }
    rc, states, _ = _status(env)
    assert rc == 1  # nothing runs
    heap = auto_heap_mb(mem_total_mb(), cgroup_limit_mb(), 512)
    assert (states["neo4j"]["heap_mb"], states["neo4j"]["tx_memory_mb"]) == (
        heap,
        tx_memory_mb(heap),
    )
    assert "(auto: " in str(states["neo4j"]["detail"])

    rc, states, _ = _status({**env, "SEMGRAPH_NEO4J_HEAP_MB": "3072"})
    assert states["neo4j"]["heap_mb"] == 3072
    assert str(states["neo4j"]["detail"]).startswith("heap 3072 MiB (SEMGRAPH_NEO4J_HEAP_MB)")
