"""Issue 18 against real ``semgraph serve`` processes, talking only to loopback addresses:
closed reads by default, the refusal to serve reads without a token off loopback, scoped
tokens (a repository-A token never sees repository B), the webhook-only port, token
rotation without a restart, the webhook rate limit and the audit log."""

from __future__ import annotations

import functools
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings, is_loopback_host, load_settings
from semgraph.db import Graph
from semgraph.graph.runs import RunStore
from semgraph.graph.writer import GraphWriter, RepoInfo
from semgraph.model import Chunk, FileFacts, content_hash
from semgraph.resolve.resolver import resolve
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex
from semgraph.web.fixtures import push_payload, signed_delivery
from tests.graph_repos import other_repo, shop_repo

pytestmark = pytest.mark.e2e

READER, SCOPED, CI, OPS, SCRAPER = (
    f"{n}-token-0123456789abcdef" for n in ("reader", "scoped", "ci", "ops", "scraper")
)
SECRET = "hook-secret"
READS = ("/search?q=render&mode=bm25", "/graph/def?name=render", "/jobs", "/runs", "/repos")


CODE = (
    "def parse_http_response(raw_bytes):\n    status, body = split(raw_bytes)\n    return status",
    "def render(template, values):\n    return template.format(**values)",
)


def corpus() -> list[FileFacts]:
    chunks = [
        Chunk(1 + 4 * n, 3 + 4 * n, text, content_hash(text), f"web.{name}", "function")
        for n, (text, name) in enumerate(zip(CODE, ("parse_http_response", "render"), strict=True))
    ]
    return [FileFacts("web.py", "python", "0" * 40, 200, 8, "ok", chunks=chunks)]


def tokens_file(path: Path, rotating: str) -> None:
    entries = [
        ("reader", READER, '["read"]', ""),
        ("scoped", SCOPED, '["read"]', 'repos = ["other"]'),
        ("ci", CI, '["enqueue"]', ""),
        ("ops", OPS, '["read", "enqueue", "admin"]', ""),
        ("scraper", SCRAPER, '["metrics"]', ""),
        ("rotating", rotating, '["read"]', ""),
    ]
    text = "".join(
        f'[[tokens]]\nname = "{n}"\ntoken = "{t}"\nscopes = {s}\n{extra}\n\n'
        for n, t, s, extra in entries
    )
    new = path.with_suffix(".new")
    new.write_text(text)
    os.replace(new, path)  # how a secret volume or an operator swaps it: atomically


def free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Served:
    proc: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def until(check: Callable[[], bool], what: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def start(args: list[str], env: dict[str, str], log: Path, url: str) -> Served:
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "semgraph", "serve", *args],
            env={**os.environ, "SEMGRAPH_LOG_LEVEL": "INFO", **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    served = Served(proc, log)
    deadline = time.monotonic() + 60
    while not healthy(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(served)
            raise AssertionError(f"semgraph serve did not start: {served.output()}")
        time.sleep(0.1)
    return served


def stop(served: Served) -> None:
    if served.proc.poll() is None:
        served.proc.send_signal(signal.SIGTERM)
        try:
            served.proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            served.proc.kill()
            served.proc.wait()


@dataclass
class Server:
    api: str
    hooks: str
    tokens: Path
    served: Served


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One ``semgraph serve`` with a tokens file: the API on the loopback alias 127.0.0.2,
    the webhook-only port on 127.0.0.1, a small webhook bucket (5, refilled 2 a second)."""
    tmp = tmp_path_factory.mktemp("security")
    tokens = tmp / "tokens.toml"
    tokens_file(tokens, "rotating-token-0000000000")
    api_port, hook_port = free_port("127.0.0.2"), free_port("127.0.0.1")
    env = {
        "SEMGRAPH_API_TOKENS_FILE": str(tokens),
        "SEMGRAPH_WEBHOOK_SECRET": SECRET,
        "SEMGRAPH_WEBHOOK_RATE_PER_S": "2",
        "SEMGRAPH_WEBHOOK_RATE_BURST": "5",
    }
    args = ["--host", "127.0.0.2", "--port", str(api_port)]
    args += ["--webhook-host", "127.0.0.1", "--webhook-port", str(hook_port)]
    api, hooks = f"http://127.0.0.2:{api_port}", f"http://127.0.0.1:{hook_port}"
    served = start(args, env, tmp / "serve.log", api)
    try:
        yield Server(api, hooks, tokens, served)
    finally:
        stop(served)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def two_repos(graph: Graph, es: Elasticsearch, settings: Settings, tmp_path: Path) -> None:
    """Repositories ``shop`` and ``other`` published in the graph (both define ``render``)
    and in the search index, with a run and a job each."""
    for repo, files in (("shop", shop_repo()), ("other", other_repo())):
        with resolve(functools.partial(iter, files), repo, tmp_path / repo) as res:
            GraphWriter(graph, settings).publish(
                RepoInfo(repo, f"https://git.example/{repo}.git", "main", f"{repo}-c1"),
                res,
                run_id=f"{repo}-r1",
                fingerprint="fp",
                now=50.0,
            )
    for repo in ("shop", "other"):
        RunStore(graph).start(f"{repo}-r1", repo, f"{repo}-c1", None, None, now=50.0)
    manager = SearchIndex(es, settings)
    embedder = Embedder(load_settings())
    for repo in ("shop", "other"):
        staging = manager.create_staging(repo, "r1", embedder.dims, now=50.0)
        manager.index_files(staging, repo, "r1", corpus(), embedder)
        manager.refresh(staging)
        manager.flip_alias(repo, staging)


def test_reads_need_a_token_on_every_loopback_address(server: Server, tmp_path: Path) -> None:
    for path in READS:
        resp = httpx.get(f"{server.api}{path}", timeout=30)
        assert resp.status_code == 401, (path, resp.text)
        assert resp.headers["WWW-Authenticate"] == "Bearer"
    assert httpx.get(f"{server.api}/jobs", headers=bearer(CI), timeout=30).status_code == 403
    assert httpx.get(f"{server.api}/jobs", headers=bearer(READER), timeout=30).status_code == 200
    # the same on 127.0.0.1, with only the compatibility token SEMGRAPH_API_TOKEN set
    port = free_port("127.0.0.1")
    url = f"http://127.0.0.1:{port}"
    legacy = "legacy-token-0123456789"
    other = start(
        ["--host", "127.0.0.1", "--port", str(port)],
        {"SEMGRAPH_API_TOKEN": legacy},
        tmp_path / "legacy.log",
        url,
    )
    try:
        for path in READS:
            assert httpx.get(f"{url}{path}", timeout=30).status_code == 401, path
        assert httpx.get(f"{url}/jobs", headers=bearer(legacy), timeout=30).status_code == 200
    finally:
        stop(other)


@pytest.mark.usefixtures("two_repos")
def test_a_token_for_repository_a_never_sees_repository_b(server: Server) -> None:
    def get(path: str, token: str, **params: Any) -> httpx.Response:
        return httpx.get(f"{server.api}{path}", params=params, headers=bearer(token), timeout=60)

    everyone = get("/search", READER, q="parse http response", mode="bm25", k=50).json()["hits"]
    assert {hit["repo"] for hit in everyone} == {"shop", "other"}
    scoped = get("/search", SCOPED, q="parse http response", mode="bm25", k=50)
    assert scoped.status_code == 200 and scoped.json()["hits"]
    assert {hit["repo"] for hit in scoped.json()["hits"]} == {"other"}
    defs = get("/graph/def", SCOPED, name="render").json()
    assert {m["repo"] for m in defs["matches"]} == {"other"}
    assert {r["key"] for r in get("/repos", SCOPED).json()} == {"other"}
    assert {r["repo"] for r in get("/runs", SCOPED).json()} == {"other"}
    assert get("/runs/shop-r1", SCOPED).status_code == 404
    assert get("/runs/other-r1", SCOPED).status_code == 200
    # asking for B by name is 403, the same whether B exists or not (no hint)
    for repo in ("shop", "no-such-repo"):
        for path in ("/search", "/graph/def", "/runs", "/jobs"):
            resp = get(path, SCOPED, q="render", name="render", mode="bm25", repo=repo)
            assert resp.status_code == 403, (path, repo, resp.text)
            assert resp.json() == {"detail": "this token may not read that repository"}
    assert "shop" not in get("/search", SCOPED, q="render", mode="bm25", k=50).text


def test_closed_by_default_with_tokens_configured(server: Server) -> None:
    """With tokens configured (issue 43), wherever the API listens: the API description,
    the interactive docs and the metrics give an anonymous caller no 200; the docs are not
    served at all (their assets would come from a CDN), the description is a read, the
    metrics have a scope of their own."""

    def status(path: str, token: str | None = None) -> int:
        headers = bearer(token) if token else {}
        return httpx.get(f"{server.api}{path}", headers=headers, timeout=30).status_code

    for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
        assert status(path) == 404 and status(path, OPS) == 404, path
    assert status("/openapi.json") == 401 and status("/metrics") == 401
    assert status("/openapi.json", READER) == 200 and status("/openapi.json", SCRAPER) == 403
    assert status("/metrics", READER) == 403 and status("/metrics", CI) == 403
    assert status("/metrics", SCRAPER) == 200 and status("/metrics", OPS) == 200  # admin too
    assert status("/healthz") == 200


def test_the_webhook_port_serves_only_webhooks_and_health(server: Server) -> None:
    for path in (*READS, "/metrics", "/openapi.json", "/docs"):
        resp = httpx.get(f"{server.hooks}{path}", headers=bearer(OPS), timeout=30)
        assert resp.status_code == 404, path
    resp = httpx.post(
        f"{server.hooks}/jobs",
        json={"source": "https://h/o/r.git"},
        headers=bearer(OPS),
        timeout=30,
    )
    assert resp.status_code == 404
    assert httpx.get(f"{server.hooks}/healthz", timeout=30).status_code == 200
    assert httpx.get(f"{server.hooks}/readyz", timeout=30).status_code == 200


def test_rotating_a_token_needs_no_restart(server: Server) -> None:
    old, new = "rotating-token-0000000000", "rotating-token-1111111111"
    pid = server.served.proc.pid

    def answers(token: str) -> int:
        return httpx.get(f"{server.api}/repos", headers=bearer(token), timeout=30).status_code

    assert answers(old) == 200
    tokens_file(server.tokens, new)  # picked up when the file changes ...
    until(lambda: answers(new) == 200, "the rotated token was never accepted")
    assert answers(old) == 401
    server.tokens.write_text("[[tokens]\nbroken")  # a broken file keeps the tokens we had
    os.kill(pid, signal.SIGHUP)  # ... or at once on SIGHUP
    until(lambda: "api_tokens_reload_failed" in server.served.output(), "no reload logged")
    assert answers(new) == 200 and answers(READER) == 200
    tokens_file(server.tokens, old)
    os.kill(pid, signal.SIGHUP)
    until(lambda: answers(old) == 200, "the token was not restored")
    assert server.served.proc.poll() is None and server.served.proc.pid == pid


def test_the_webhook_rate_limit_answers_429_then_recovers(server: Server) -> None:
    url = f"{server.hooks}/webhooks/github"
    unsigned = {"X-GitHub-Event": "push", "Content-Type": "application/json"}
    answers = [httpx.post(url, content=b"{}", headers=unsigned, timeout=30) for _ in range(12)]
    statuses = [a.status_code for a in answers]
    assert 429 in statuses and statuses[0] == 401, statuses  # unsigned: refused, then limited
    limited = next(a for a in answers if a.status_code == 429)
    retry_after = int(limited.headers["Retry-After"])
    assert 1 <= retry_after <= 60 and limited.json()["status"] == "rate_limited"
    time.sleep(retry_after)  # the answer's own instruction; the bucket refills meanwhile
    payload = push_payload(
        "github", "o/limited", "https://git.example/o/limited.git", after="a" * 40
    )
    headers, body = signed_delivery("github", payload, SECRET)
    assert httpx.post(url, content=body, headers=headers, timeout=30).status_code == 202
    metrics = httpx.get(f"{server.api}/metrics", headers=bearer(SCRAPER), timeout=30).text
    assert 'semgraph_webhook_limited_total{reason="rate"}' in metrics


def test_every_mutating_call_is_audited_by_token_name(server: Server) -> None:
    body = {"source": "https://git.example/o/audited.git"}
    assert httpx.post(f"{server.api}/jobs", json=body, timeout=30).status_code == 401
    ok = httpx.post(f"{server.api}/jobs", json=body, headers=bearer(CI), timeout=30)
    assert ok.status_code == 202, ok.text
    job_id = ok.json()["job_id"]
    denied = httpx.post(
        f"{server.api}/jobs/{job_id}/abandon", json={"reason": "x"}, headers=bearer(CI), timeout=30
    )
    assert denied.status_code == 403  # enqueue is not admin
    done = httpx.post(
        f"{server.api}/jobs/{job_id}/abandon",
        json={"reason": "audit test"},
        headers=bearer(OPS),
        timeout=30,
    )
    assert done.status_code == 200 and done.json()["status"] == "abandoned"

    def audited() -> list[str]:
        return [line for line in server.served.output().splitlines() if "api_audit" in line]

    until(lambda: len(audited()) >= 4, "the audit lines were not written")
    lines = audited()
    assert any("who=ci" in line and "POST /jobs -> 202" in line for line in lines), lines
    assert any("who=unauthenticated" in line and "-> 401" in line for line in lines), lines
    assert any("who=ops" in line and f"/jobs/{job_id}/abandon -> 200" in line for line in lines)
    assert not any(token in server.served.output() for token in (READER, SCOPED, CI, OPS))


def non_loopback_addresses() -> list[str]:
    """0.0.0.0 and this machine's own addresses that are not loopback (from the kernel)."""
    found = {"0.0.0.0"}
    try:
        names = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
        found |= {str(info[4][0]) for info in names}
    except OSError:
        pass
    return sorted(a for a in found if not is_loopback_host(a))


def test_without_a_token_reads_stay_on_loopback(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEMGRAPH_API_")}
    for address in non_loopback_addresses():
        with socket.socket() as taken:  # the port is held: a bind would fail differently
            taken.bind(("127.0.0.1", 0))
            port = taken.getsockname()[1]
            proc = subprocess.run(
                [sys.executable, "-m", "semgraph", "serve", "--host", address, "--port", str(port)],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
        assert proc.returncode == 1, (address, proc.stdout, proc.stderr)
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, proc.stderr
        assert address in lines[0] and "SEMGRAPH_API_TOKEN" in lines[0]
        assert "SEMGRAPH_API_READ_OPEN=true" in lines[0]
        assert "web_start" not in proc.stdout + proc.stderr
    port = free_port("127.0.0.1")
    url = f"http://127.0.0.1:{port}"
    local = start(["--host", "127.0.0.1", "--port", str(port)], {}, tmp_path / "l.log", url)
    try:
        assert httpx.get(f"{url}/jobs", timeout=30).status_code == 200
        for path in ("/metrics", "/openapi.json"):  # no token configured, on loopback
            assert httpx.get(f"{url}{path}", timeout=30).status_code == 200, path
        post = httpx.post(f"{url}/jobs", json={"source": "https://h/o/r.git"}, timeout=30)
        assert post.status_code == 403  # mutations stay disabled without a token
    finally:
        stop(local)


def test_opened_reads_warn_at_start_and_show_in_metrics(tmp_path: Path) -> None:
    port = free_port("127.0.0.1")
    url = f"http://127.0.0.1:{port}"
    env = {"SEMGRAPH_API_TOKEN": "legacy-token-0123456789", "SEMGRAPH_API_READ_OPEN": "true"}
    opened = start(["--host", "127.0.0.1", "--port", str(port)], env, tmp_path / "o.log", url)
    try:
        assert httpx.get(f"{url}/jobs", timeout=30).status_code == 200
        legacy = {"Authorization": "Bearer legacy-token-0123456789"}
        assert httpx.get(f"{url}/metrics", timeout=30).status_code == 401  # reads only
        metrics = httpx.get(f"{url}/metrics", headers=legacy, timeout=30).text
        assert "semgraph_api_reads_open 1.0" in metrics
        until(lambda: "api_reads_open" in opened.output(), "no warning logged")
        assert any(
            "WARNING" in line and "SEMGRAPH_API_READ_OPEN" in line
            for line in opened.output().splitlines()
        )
    finally:
        stop(opened)
