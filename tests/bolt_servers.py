"""A dedicated Bolt server started for one test module, with one server setting changed (a
transaction memory cap, say), on a free port under its own state directory."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from semgraph.config import Settings, load_settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def bolt_server(state: Path, setting: str, what: str) -> Iterator[Settings]:
    """Run the local Bolt server with ``setting`` (``name=value``, applied last so it
    replaces the stack's own) until the block ends; yields settings that reach it."""
    from semgraph.services.bolt import BoltService

    settings = load_settings(
        state_dir=state, bolt_uri=f"bolt://127.0.0.1:{free_port()}", neo4j_heap_mb=512
    )
    service = BoltService(settings)
    service.prepare()
    argv, env, _ = service.launch_spec()
    argv.append(setting)
    log = (state / "server.log").open("w+")
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    ready = threading.Event()

    def watch() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("READY"):
                ready.set()

    threading.Thread(target=watch, daemon=True).start()
    try:
        deadline = time.monotonic() + 180
        while not ready.wait(0.5):
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                pytest.fail(f"the {what} Bolt server did not start: {log.read()[-2000:]}")
        yield settings
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:  # the watcher thread has read to EOF or never will
            proc.stdout.close()
        log.close()
