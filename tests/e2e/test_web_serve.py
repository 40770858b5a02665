"""``semgraph serve`` as a real process: it binds, answers, enqueues, and on SIGTERM finishes
the request in flight and exits 0."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable

import httpx
import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.queue.store import JobStore
from semgraph.web.fixtures import push_payload, signed_delivery

pytestmark = pytest.mark.e2e


def test_serve_process_round_trip(graph: Graph, es: Elasticsearch, settings: Settings) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "SEMGRAPH_WEBHOOK_SECRET": "serve-secret", "SEMGRAPH_WEB_PORT": "1"}
    base = f"http://127.0.0.1:{port}"
    with start_serve(port, env) as proc:  # leaving it closes the output pipe
        try:
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
        # a graceful stop is a normal exit, not death by the signal (uvicorn alone re-raises it)
        output = proc.stdout.read().decode() if proc.stdout else ""
    assert code == 0, output
    assert "web_start" in output and "web_stopping" in output and "web_stop" in output, output


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


def start_serve(port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "semgraph", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    try:
        while True:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    return proc
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "semgraph serve did not start"
            time.sleep(0.1)
    except BaseException:
        with proc:  # closes the pipe and reaps the process
            proc.kill()
        raise


def until(check: Callable[[], bool], what: str, timeout_s: float = 30) -> None:
    """Poll ``check`` (an observable state, never a guessed delay) until it holds."""
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return True
    return False


def test_sigterm_finishes_the_request_in_flight_then_exits_0(
    graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "SEMGRAPH_WEBHOOK_SECRET": "serve-secret", "SEMGRAPH_LOG_LEVEL": "INFO"}
    proc = start_serve(port, env)
    try:
        payload = push_payload(
            "github", "o/inflight", "https://git.example/o/inflight.git", after="e" * 40
        )
        headers, body = signed_delivery("github", payload, "serve-secret")
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items() if k != "Content-Length")
        request = (
            f"POST /webhooks/github HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        client = socket.create_connection(("127.0.0.1", port), timeout=30)
        client.sendall(request + body[:100])  # the request is in flight: half its body sent

        def in_flight() -> bool:
            text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
            return "semgraph_webhooks_in_flight 1.0" in text

        until(in_flight, "the server never started reading the webhook")
        proc.send_signal(signal.SIGTERM)
        until(lambda: refused(port), "the server kept accepting connections after SIGTERM")
        assert proc.poll() is None  # still draining: our request has not finished
        client.sendall(body[100:])
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = client.recv(65536)
            if not chunk:
                break
            answer += chunk
        client.close()
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        with proc:  # reaps the process and closes its output pipe
            output = proc.stdout.read().decode() if proc.stdout else ""
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line == b"HTTP/1.1 202 Accepted", (answer, output)
    job_id = json.loads(rest.split(b"\r\n\r\n", 1)[1])["job_id"]
    job = JobStore(graph, settings).get(job_id)  # committed before the answer, before the exit
    assert job is not None and job.commit == "e" * 40
    assert code == 0, output
    marks = ("[action=web_stopping]", "[action=webhook_enqueued ", "[action=web_stop]")
    order = [output.find(mark) for mark in marks]
    assert -1 not in order and order == sorted(order), output  # enqueued while draining
