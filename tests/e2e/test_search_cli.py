"""``semgraph search`` as a process: its errors are one clear line on stderr, exit 1, and
never a traceback (a repository nobody indexed, Elasticsearch unreachable)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from elasticsearch import Elasticsearch

pytestmark = pytest.mark.e2e


def test_cli_errors_are_one_clear_line(es_session: Elasticsearch) -> None:
    env = {**os.environ}
    cmd = [sys.executable, "-m", "semgraph", "search", "x", "--mode", "bm25", "--repo", "ghost"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert (
        "error: repository 'ghost' is not indexed" in proc.stderr and "Traceback" not in proc.stderr
    )
    down = [sys.executable, "-m", "semgraph", "--es-url", "http://127.0.0.1:9", "search", "x"]
    proc = subprocess.run(
        [*down, "--mode", "bm25"], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 1
    assert "Elasticsearch unreachable" in proc.stderr and "Traceback" not in proc.stderr
