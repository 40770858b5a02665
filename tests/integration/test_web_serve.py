"""``semgraph serve`` as a real process: it binds, answers, enqueues, and stops on SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from semgraph.queue.store import JobStore
from semgraph.web.fixtures import push_payload, signed_delivery

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def test_serve_process_round_trip(graph, es, settings) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "SEMGRAPH_WEBHOOK_SECRET": "serve-secret", "SEMGRAPH_WEB_PORT": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "semgraph", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "semgraph serve did not start"
            time.sleep(0.1)
        payload = push_payload(
            "gitlab", "grp/svc", "https://gitlab.example/grp/svc.git", after="d" * 40
        )
        headers, body = signed_delivery("gitlab", payload, "serve-secret")
        resp = httpx.post(f"{base}/webhooks/gitlab", headers=headers, content=body, timeout=30)
        assert resp.status_code == 202, resp.text
        assert JobStore(graph, settings).get(resp.json()["job_id"]) is not None
        assert httpx.get(f"{base}/openapi.json").json()["info"]["title"] == "semgraph"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    # uvicorn shuts down gracefully (lifespan end: web_stop), then re-raises the signal so
    # supervisors see "terminated by SIGTERM" (exit 143 in a container)
    output = proc.stdout.read().decode() if proc.stdout else ""
    assert code == -signal.SIGTERM, output
    assert "web_start" in output and "web_stop" in output, output


def test_serve_refuses_bad_configuration() -> None:
    env = {**os.environ, "SEMGRAPH_WEBHOOK_SECRETS": '{"org/a": ""}'}
    proc = subprocess.run(
        [sys.executable, "-m", "semgraph", "serve", "--port", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "SEMGRAPH_WEBHOOK_SECRETS" in proc.stderr and "Traceback" not in proc.stderr
