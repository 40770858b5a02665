"""The fault suite's own server stack and worker-process helpers.

Chaos tests stop, restart and cut the servers, so they never use the session's shared test
stack: a session fixture starts a private Elasticsearch + Bolt server under
``/var/tmp/semgraph-chaos-<uid>`` on free ports of its own, and every worker subprocess is
pointed at it through ``SEMGRAPH_*`` variables. The stack is stopped when the session ends.
"""

from __future__ import annotations

import os
import random
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from semgraph.config import Settings, load_settings
from semgraph.db import Graph, connect_graph, connect_search
from semgraph.graph.schema import SCHEMA
from semgraph.services import Stack

REPO_ROOT = Path(__file__).resolve().parents[2]
STATE_DIR = Path(f"/var/tmp/semgraph-chaos-{os.getuid()}")

# fast queue timings for worker subprocesses; tests add or override per scenario
FAST_ENV = {
    "SEMGRAPH_JOB_MODULES": "tests.chaos.kinds",
    "SEMGRAPH_HEARTBEAT_S": "0.2",
    "SEMGRAPH_LEASE_S": "30",
    "SEMGRAPH_POLL_INTERVAL_S": "0.1",
    "SEMGRAPH_SWEEP_INTERVAL_S": "1",
    "SEMGRAPH_BACKOFF_BASE_S": "0",
    "SEMGRAPH_STAGING_GC_MIN_AGE_S": "0",
    "SEMGRAPH_POOL_SIZE": "1",
    "SEMGRAPH_PARSE_WINDOW_FILES": "2",
    "SEMGRAPH_EMBEDDING_DEVICE": "cpu",
    "SEMGRAPH_JOB_CANCEL_GRACE_S": "60",
    "SEMGRAPH_JOB_MAX_ATTEMPTS": "5",
    "SEMGRAPH_JOB_MAX_CRASHES": "3",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}

DEADLINE_S = 120.0


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_ports() -> tuple[int, int]:
    """A Bolt port and an Elasticsearch HTTP port whose transport port (+100) is free too."""
    rng = random.Random()
    for _ in range(500):
        bolt, es = rng.randrange(21000, 29000), rng.randrange(31000, 39000)
        if _free(bolt) and _free(es) and _free(es + 100):
            return bolt, es
    raise RuntimeError("no free ports for the chaos stack")


def stack_env(settings: Settings) -> dict[str, str]:
    return {
        "SEMGRAPH_STATE_DIR": str(settings.state_dir),
        "SEMGRAPH_BOLT_URI": settings.bolt_uri,
        "SEMGRAPH_ES_URL": settings.es_url,
        "SEMGRAPH_ES_HEAP_MB": str(settings.es_heap_mb),
        "SEMGRAPH_NEO4J_HEAP_MB": str(settings.neo4j_heap_mb),
    }


@dataclass
class Chaos:
    """The private stack plus helpers to run real worker processes against it."""

    settings: Settings
    stack: Stack
    graph: Graph
    tmp: Path
    procs: list[subprocess.Popen[str]] = field(default_factory=list)

    @property
    def es_service(self) -> Any:
        return self.stack.services[0]

    @property
    def bolt_service(self) -> Any:
        return self.stack.services[1]

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {**os.environ, **stack_env(self.settings), **FAST_ENV, **(extra or {})}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
        return env

    def start_worker(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        log: str = "worker",
        max_file_bytes: int | None = None,
    ) -> subprocess.Popen[str]:
        """A real ``semgraph worker`` process; ``max_file_bytes`` sets RLIMIT_FSIZE on it
        (a write past it fails with EFBIG: Python ignores SIGXFSZ)."""

        def limit() -> None:
            if max_file_bytes is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

        out = (self.tmp / f"{log}.log").open("a")
        proc = subprocess.Popen(
            [sys.executable, "-m", "semgraph.cli", "worker", *args],
            cwd=REPO_ROOT,
            env=self.env(env),
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=limit if max_file_bytes is not None else None,
        )
        out.close()
        proc.log_path = self.tmp / f"{log}.log"  # type: ignore[attr-defined]
        self.procs.append(proc)
        return proc

    def finish(self, proc: subprocess.Popen[str], timeout: float = DEADLINE_S) -> tuple[int, str]:
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            proc.kill()
            proc.wait()
            raise AssertionError(
                f"worker still running after {timeout}s:\n{log_of(proc, 6000)}"
            ) from exc
        return code, log_of(proc)

    def cli(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "semgraph.cli", *args],
            cwd=REPO_ROOT,
            env=self.env(env),
            capture_output=True,
            text=True,
            timeout=DEADLINE_S,
            check=False,
        )

    def restart(self, service: Any) -> None:
        """Start a stopped service of the private stack and wait until it answers."""
        proc = service.start()
        service.wait_healthy(proc, self.settings.services_start_timeout_s)

    def wipe(self) -> None:
        self.graph.query("chaos reset", "MATCH (n) DETACH DELETE n")
        es = connect_search(self.settings)
        try:
            names = [n for n in es.indices.get(index="*", expand_wildcards="open,closed")]
            names = [n for n in names if not n.startswith(".")]
            if names:
                es.indices.delete(index=",".join(names), ignore_unavailable=True)
        finally:
            es.close()
        for child in (self.settings.state_dir / "jobs").glob("*"):
            subprocess.run(["rm", "-rf", str(child)], check=False)


def log_of(proc: subprocess.Popen[str], tail: int | None = None) -> str:
    """The worker's whole log (or its last ``tail`` characters, for failure messages)."""
    path: Path = proc.log_path  # type: ignore[attr-defined]
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return text[-tail:] if tail else text


def wait_for(
    what: str,
    predicate: Callable[[], bool],
    proc: subprocess.Popen[str] | None = None,
    timeout: float = DEADLINE_S,
) -> None:
    """Poll ``predicate`` until true, with a deadline; fail early if ``proc`` exits."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(
                f"worker exited ({proc.returncode}) before {what}:\n{log_of(proc, 6000)}"
            )
        if time.monotonic() > deadline:
            tail = log_of(proc, 6000) if proc is not None else ""
            if proc is not None:
                proc.kill()
            raise AssertionError(f"timed out after {timeout}s waiting for {what}\n{tail}")
        time.sleep(0.05)


@pytest.fixture(scope="session")
def chaos_stack() -> Iterator[tuple[Settings, Stack]]:
    bolt_port, es_port = _free_ports()
    settings = load_settings(
        state_dir=STATE_DIR,
        bolt_uri=f"bolt://127.0.0.1:{bolt_port}",
        es_url=f"http://127.0.0.1:{es_port}",
        es_heap_mb=384,
        neo4j_heap_mb=512,
        staging_gc_min_age_s=0,
        pool_size=1,
        embedding_device="cpu",
    )
    stack = Stack(settings)
    stack.down()  # a stack a crashed session left behind under our own state dir
    stack.up()
    try:
        yield settings, stack
    finally:
        stack.down()


@pytest.fixture
def chaos(chaos_stack: tuple[Settings, Stack], tmp_path: Path) -> Iterator[Chaos]:
    """The private stack, emptied (graph, indexes, job workdirs), with both servers up.
    A fresh driver per test: a server restarted by an earlier test leaves none stale."""
    settings, stack = chaos_stack
    for service in stack.services:  # a failed test may have left one stopped
        if service.pid() is None:
            service.wait_healthy(service.start(), settings.services_start_timeout_s)
    graph = connect_graph(settings)
    graph.ensure_schema(SCHEMA)
    env = Chaos(settings, stack, graph, tmp_path)
    env.wipe()
    try:
        yield env
    finally:
        for proc in env.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        graph.close()
