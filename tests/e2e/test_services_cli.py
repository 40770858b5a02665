"""The local stack and the CLI as a user runs them, in subprocesses."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from semgraph.services import Stack, procs

pytestmark = pytest.mark.e2e


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def semgraph(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semgraph.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )


def test_doctor_ok_against_running_stack(stack: Stack) -> None:
    proc = semgraph("doctor", "--json")
    assert proc.returncode == 0, proc.stderr
    checks = {c["name"]: c for c in json.loads(proc.stdout)}
    assert checks["graph"]["ok"] and "neo4j 5.26" in checks["graph"]["detail"]
    assert checks["search"]["ok"] and "Elasticsearch 8.19" in checks["search"]["detail"]


@pytest.mark.parametrize("which", ["graph", "search"])
def test_doctor_fails_with_one_line_reason_when_a_server_is_down(stack: Stack, which: str) -> None:
    port = _free_port()
    env = (
        {"SEMGRAPH_BOLT_URI": f"bolt://127.0.0.1:{port}", "SEMGRAPH_BOLT_CONNECT_TIMEOUT_S": "2"}
        if which == "graph"
        else {"SEMGRAPH_ES_URL": f"http://127.0.0.1:{port}"}
    )
    proc = semgraph("doctor", env=env)
    assert proc.returncode == 1
    fail_lines = [line for line in proc.stdout.splitlines() if "FAIL" in line]
    assert len(fail_lines) == 1 and fail_lines[0].startswith(which)
    assert "unreachable" in fail_lines[0]


def test_init_twice_via_cli(stack: Stack) -> None:
    for _ in range(2):
        proc = semgraph("init")
        assert proc.returncode == 0, proc.stderr
        assert "schema ready on neo4j" in proc.stdout


@pytest.mark.parametrize(
    ("args", "env", "needle"),
    [
        (["doctor"], {"SEMGRAPH_BOLT_URI": "mysql://x"}, "SEMGRAPH_BOLT_URI"),
        (["--bolt-uri", "bolt://", "doctor"], {}, "no host"),
        (["services", "explode"], {}, "No such command"),
        (["doctor", "--no-such-flag"], {}, "No such option"),
    ],
)
def test_bad_cli_input_is_a_clear_error(args: list[str], env: dict[str, str], needle: str) -> None:
    proc = semgraph(*args, env=env, timeout=60)
    assert proc.returncode != 0
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr


def test_services_up_twice_is_a_noop_and_down_leaves_nothing(tmp_path: Path) -> None:
    # a second, private stack: its own state directory and ports
    state = Path(f"/var/tmp/semgraph-svc-test-{os.getpid()}")
    env = {
        "SEMGRAPH_STATE_DIR": str(state),
        "SEMGRAPH_BOLT_URI": f"bolt://127.0.0.1:{_free_port()}",
        "SEMGRAPH_ES_URL": f"http://127.0.0.1:{_free_port()}",
        "SEMGRAPH_ES_HEAP_MB": "256",
        "SEMGRAPH_NEO4J_HEAP_MB": "512",
    }
    # reuse the downloaded distribution instead of resolving it again
    shared_dist = Path(os.environ["SEMGRAPH_STATE_DIR"]) / "dist"
    if shared_dist.is_dir():
        state.mkdir(parents=True, exist_ok=True)
        (state / "dist").symlink_to(shared_dist)
    try:
        first = semgraph("services", "up", "--json", env=env)
        assert first.returncode == 0, first.stderr
        pids = {s["name"]: s["pid"] for s in json.loads(first.stdout)}
        assert all(pids.values())
        second = semgraph("services", "up", "--json", env=env)
        assert second.returncode == 0, second.stderr
        assert {s["name"]: s["pid"] for s in json.loads(second.stdout)} == pids
        assert semgraph("services", "status", env=env).returncode == 0

        down = semgraph("services", "down", env=env)
        assert down.returncode == 0, down.stderr
        assert procs.processes_with(str(state)) == []
        assert semgraph("services", "status", env=env).returncode == 1
        # down again: nothing to stop, still fine
        assert "nothing was running" in semgraph("services", "down", env=env).stdout
    finally:
        semgraph("services", "down", env=env)
        subprocess.run(["rm", "-rf", str(state)], check=False)


def test_services_model_prepares_the_embedding_model_and_says_so() -> None:
    """``semgraph services model`` (run by ``./dev quickstart`` while the stack starts):
    loads the model, exporting it first when the backend needs that, and names it."""
    proc = semgraph("services", "model", timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert "embedding model ready:" in proc.stdout
    again = semgraph("services", "model", timeout=300)  # the export is cached: no new one
    assert again.returncode == 0 and "embedding_export_started" not in again.stderr


def test_services_model_fails_with_one_line_on_a_missing_model(tmp_path: Path) -> None:
    proc = semgraph("services", "model", env={"SEMGRAPH_EMBEDDING_MODEL": str(tmp_path / "none")})
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
