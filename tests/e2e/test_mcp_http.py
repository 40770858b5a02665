"""``/mcp`` on a real ``semgraph serve``: stateless streamable HTTP behind the read rule,
a real MCP client with a bearer token, the freshness block after a webhook announced a newer
commit, and a token scoped to another repository that sees nothing of this one."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path

import anyio
import httpx
import pytest
from elasticsearch import Elasticsearch

from semgraph.db import Graph
from semgraph.web.fixtures import push_payload, signed_delivery
from tests.e2e.test_mcp_stdio import bad_input, index
from tests.e2e.test_web_serve import start_serve
from tests.mcp_client import TOOLS, call, http_session
from tests.repos import POLYGLOT, commit, git, make_repo

pytestmark = pytest.mark.e2e
FULL = "mcp-full-token-0123456789"
SCOPED = "mcp-scoped-token-0123456789"
SECRET = "mcp-webhook-secret"


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_mcp_over_http(graph: Graph, es: Elasticsearch, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "polyglot", POLYGLOT)
    git(repo, "checkout", "-q", "-b", "feature")
    newer = commit(repo, {"app/later.py": "def later():\n    return 2\n"}, "not indexed yet")
    git(repo, "checkout", "-q", "main")
    first = index(repo)  # the mirror fetched every branch: it has `newer` too
    key = first["run"]["repo"]
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        f'[[tokens]]\nname = "agent"\ntoken = "{FULL}"\nscopes = ["read"]\n\n'
        f'[[tokens]]\nname = "other"\ntoken = "{SCOPED}"\nscopes = ["read"]\n'
        'repos = ["someone-else-*"]\n'
    )
    port = _port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "SEMGRAPH_API_TOKENS_FILE": str(tokens),
        "SEMGRAPH_WEBHOOK_SECRET": SECRET,
        "SEMGRAPH_WEBHOOK_ALLOW_LOCAL_SOURCES": "true",
    }
    proc = start_serve(port, env)
    try:
        anonymous = httpx.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert anonymous.status_code == 401, anonymous.text
        payload = push_payload("github", "o/polyglot", f"file://{repo}", after=newer)
        headers, body = signed_delivery("github", payload, SECRET)
        hook = httpx.post(f"{base}/webhooks/github", headers=headers, content=body, timeout=30)
        assert hook.status_code == 202, hook.text
        assert hook.json()["repo"] == key
        anyio.run(scenario, f"{base}/mcp", key, first["run"]["commit"], newer)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            proc.kill()
        with proc:
            pass


async def scenario(url: str, key: str, indexed: str, newer: str) -> None:
    async with http_session(url, FULL) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        status = await call(client, "index_status", repo=key)
        fresh = status["rows"][0]
        assert fresh["indexed_commit"] == indexed
        assert fresh["latest_known_commit"] == newer and fresh["stale"] is True
        assert fresh["commits_behind"] == 1  # counted in the mirror
        assert fresh["pending_job"]["commit"] == newer and fresh["jobs"]["pending"] == 1
        defs = await call(client, "find_definition", name="Repository.save")
        assert defs["rows"][0]["path"] == "app/models.py"
        assert defs["freshness"][0]["latest_known_commit"] == newer
        callers = await call(client, "callers", name="compute_checksum", repo=key)
        assert callers["total"] == 2 and callers["completeness"]["status"] in (
            "exact",
            "lower_bound",
        )
        callees = await call(client, "callees", name="handleRequest", repo=key)
        assert "parseQuery" in {e["qualified_name"].rsplit(".", 1)[-1] for e in callees["rows"]}
        impact = await call(client, "impact", name="compute_checksum", summary=True)
        assert impact["affected"]["files"] == 2
        snippet = await call(client, "get_snippet", repo=key, path="web/server.js", end_line=3)
        assert snippet["text"].startswith("// A tiny HTTP handler.")
        found = await call(client, "search_code", text="read the configuration file", repo=key)
        assert found["rows"][0]["path"] == "cmd/main.go"
        await bad_input(client, key)  # the same refusals over HTTP as over stdio
    async with http_session(url, SCOPED) as other:
        nothing = await call(other, "index_status")
        assert nothing["rows"] == [] and nothing["empty_reason"] == "repository not indexed"
        hidden = await call(other, "find_definition", name="compute_checksum", repo=key)
        assert hidden["error"]["code"] == "unknown_repository"
        everywhere = await call(other, "find_definition", name="compute_checksum")
        assert everywhere["rows"] == []
