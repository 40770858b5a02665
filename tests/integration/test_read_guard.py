"""Per-token limits and the read audit (issue 43, part 5) on the real application, graph
server and Elasticsearch: ``/search``, ``/localize`` and ``/mcp`` answer 429 with
``Retry-After`` past a token's rate, another token is not held up; every read by a token is in
the audit log with its tool, repository and size, and the text asked only when the operator
turns that on."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest
from semgraph.web.app import create_app
from semgraph.web.fixtures import serve_in_thread
from tests.mcp_client import call, http_session
from tests.repos import POLYGLOT, make_repo

pytestmark = pytest.mark.integration

ALICE, BOB = "read-guard-alice-0123456789", "read-guard-bob-0123456789"
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@contextmanager
def served(
    graph: Graph, es: Elasticsearch, settings: Settings, tmp_path: Path, **extra: Any
) -> Iterator[str]:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        f'[[tokens]]\nname = "alice"\ntoken = "{ALICE}"\nscopes = ["read", "metrics"]\n\n'
        f'[[tokens]]\nname = "bob"\ntoken = "{BOB}"\nscopes = ["read"]\n'
    )
    configured = settings.model_copy(update={"api_tokens_file": tokens, **extra})
    with serve_in_thread(create_app(configured, graph=graph, search=es)) as url:
        yield url


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _audited(caplog: pytest.LogCaptureFixture, action: str) -> list[dict[str, Any]]:
    return [vars(r) for r in caplog.records if getattr(r, "action", "") == action]


def test_a_token_past_its_rate_gets_429_with_retry_after_and_another_token_does_not(
    graph: Graph, es: Elasticsearch, settings: Settings, tmp_path: Path
) -> None:
    limits = {"read_rate_per_s": 0.01, "read_rate_burst": 2}
    with served(graph, es, settings, tmp_path, **limits) as base:
        # the bucket is the token's, over every costly route: search, localize, then MCP
        first = httpx.get(f"{base}/search", params={"q": "checksum"}, headers=_auth(ALICE))
        second = httpx.post(
            f"{base}/localize", json={"q": "a bug", "repo": "nope"}, headers=_auth(ALICE)
        )
        assert first.status_code != 429 and second.status_code != 429
        third = httpx.post(f"{base}/mcp", json=PING, headers={**MCP_HEADERS, **_auth(ALICE)})
        assert third.status_code == 429, third.text
        assert int(third.headers["Retry-After"]) >= 1
        assert "requests a second" in third.json()["detail"]
        fourth = httpx.get(f"{base}/search", params={"q": "checksum"}, headers=_auth(ALICE))
        assert fourth.status_code == 429
        # bob's bucket is his own; a read without a token is refused before any limit
        other = httpx.get(f"{base}/search", params={"q": "checksum"}, headers=_auth(BOB))
        assert other.status_code != 429
        assert httpx.get(f"{base}/search", params={"q": "checksum"}).status_code == 401
        # the cheap reads are not limited
        assert httpx.get(f"{base}/repos", headers=_auth(ALICE)).status_code == 200
        metrics = httpx.get(f"{base}/metrics", headers=_auth(ALICE)).text
        assert 'semgraph_reads_limited_total{limit="rate"}' in metrics


def test_reads_are_audited_with_tool_repository_and_size_never_the_text_by_default(
    graph: Graph,
    es: Elasticsearch,
    settings: Settings,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "the secret words of an issue nobody may log"
    with caplog.at_level(logging.INFO), served(graph, es, settings, tmp_path) as base:
        httpx.get(
            f"{base}/search",
            params={"q": secret, "repo": "svc-a", "mode": "bm25"},
            headers=_auth(ALICE),
        )
        listed = httpx.get(f"{base}/repos", params={"q": secret}, headers=_auth(BOB))
        assert listed.status_code == 200

        async def mcp() -> None:
            async with http_session(f"{base}/mcp", ALICE) as client:
                await call(client, "index_status", repo="svc-c")

        anyio.run(mcp)
    ours = [r for r in caplog.records if r.name.startswith("semgraph")]
    assert ours and all(secret not in r.getMessage() + repr(vars(r)) for r in ours)
    tools = {(x["who"], x["tool"], x["repo"]) for x in _audited(caplog, "read_audit")}
    assert ("alice", "index_status", "svc-c") in tools
    reads = _audited(caplog, "api_read")
    alice = [x for x in reads if x["who"] == "alice"]
    assert any(x["route"] == "/search" and x["repo"] == "svc-a" for x in alice), alice
    assert any(x["route"] == "/repos" and x["who"] == "bob" and x["status"] == 200 for x in reads)
    assert all(isinstance(x["bytes"], int) and x["bytes"] > 0 for x in reads)


def test_the_operator_may_audit_the_text_asked(
    graph: Graph,
    es: Elasticsearch,
    settings: Settings,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    quick = settings.model_copy(update={"embed_inline_max_chunks": 0})
    repo = make_repo(tmp_path / "poly", POLYGLOT)
    key = Reindex(quick, graph, es, ReindexRequest(source=str(repo))).run().repo_key
    with (
        caplog.at_level(logging.INFO),
        served(graph, es, quick, tmp_path, audit_query_text=True) as base,
    ):
        found = httpx.get(
            f"{base}/search",
            params={"q": "checksum", "repo": key, "mode": "bm25"},
            headers=_auth(ALICE),
        )
        assert found.status_code == 200 and found.json()["hits"]

        async def mcp() -> None:
            async with http_session(f"{base}/mcp", BOB) as client:
                await call(client, "search_code", text="parse the config " + "x" * 2000)

        anyio.run(mcp)
    lines = _audited(caplog, "read_audit")
    [search] = [x for x in lines if x["tool"] == "search"]
    assert (search["who"], search["repo"], search["text"]) == ("alice", key, "checksum")
    assert search["rows"] == len(found.json()["hits"]) and search["bytes"] > 0
    [line] = [x for x in lines if x["tool"] == "search_code"]
    assert line["who"] == "bob" and line["text"].startswith("parse the config ")
    assert len(line["text"]) == 500
