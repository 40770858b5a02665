"""``localize`` on every surface over the real stores: ``GET``/``POST /localize``, the CLI
(a file or standard input) and the MCP tool; long, hostile and bad input on each, and no
error that repeats the text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch
from typer.testing import CliRunner

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest
from semgraph.mcp.backend import Backend
from semgraph.mcp.tokens import TokenCounter
from semgraph.mcp.tools import Tools
from semgraph.queue.store import JobStore
from semgraph.web.app import create_app
from semgraph.web.fixtures import serve_in_thread
from tests.integration.test_localize import FILES, TRACEBACK
from tests.repos import make_repo
from tests.shared_kinds import shared_embedder, shared_search

pytestmark = pytest.mark.integration

TOKEN = "api-token-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MARKER = "ZQXJ-MARKER"


def long_issue(chars: int) -> str:
    text = TRACEBACK
    while len(text) < chars:
        text += f"The configuration is read when the shop starts. {MARKER} "
    return text[:chars]


@pytest.fixture
def served(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> Iterator[tuple[str, str]]:
    """(base URL, repository key): the shop indexed by the real job, the app serving it."""
    repo = make_repo(tmp_path / "shop", FILES)
    request = ReindexRequest(source=str(repo))
    embedder = shared_embedder(settings)
    run = Reindex(settings, graph, shared_search(settings), request, embedder=embedder).run()
    configured = settings.model_copy(update={"api_token": TOKEN})
    with serve_in_thread(create_app(configured, graph=graph, search=es)) as url:
        yield url, run.repo_key


def post(base: str, body: Any) -> httpx.Response:
    headers = {**AUTH, "content-type": "application/json"}
    return httpx.post(f"{base}/localize", content=json.dumps(body), headers=headers, timeout=120)


def test_http_get_post_long_and_bad_input(served: tuple[str, str], settings: Settings) -> None:
    base, key = served
    got = httpx.get(
        f"{base}/localize", params={"q": TRACEBACK, "repo": key}, headers=AUTH, timeout=120
    )
    assert got.status_code == 200, got.text[:500]
    body = got.json()
    assert body["files"][0]["path"] in ("src/shop/parse.py", "src/shop/config.py")
    assert body["files"][0]["symbols"] and body["files"][0]["evidence"]
    posted = post(base, {"q": long_issue(1_000_000), "repo": key, "k": 3, "options": "rerank=0"})
    assert posted.status_code == 200
    data = posted.json()
    assert data["truncated"] is True and MARKER not in data["notice"]
    assert len(data["files"]) <= 3
    cases = [
        post(base, {"q": long_issue(40_000), "repo": key, "options": f"x{MARKER}=1"}),
        post(base, {"q": long_issue(40_000), "repo": key, "k": 51}),
        post(base, {"q": long_issue(40_000), "repo": key, "mode": MARKER}),
        post(base, {"q": long_issue(40_000)}),
        post(base, {"q": long_issue(40_000), "repo": key, "unknown": MARKER}),
        post(base, ["not", "an", "object"]),
    ]
    for case in cases:
        assert case.status_code in (400, 422), case.text[:300]
        assert MARKER not in case.text and len(case.text) < 2000
    over = settings.search_max_body_bytes + 1
    big = post(base, {"q": MARKER * (over // len(MARKER)), "repo": key})
    assert big.status_code == 413 and MARKER not in big.text
    unknown = post(base, {"q": "parse_yaml", "repo": "nope"})
    assert unknown.status_code == 404
    no_token = httpx.post(f"{base}/localize", json={"q": "x", "repo": key})
    assert no_token.status_code == 401


def test_the_cli_reads_a_file_or_stdin(served: tuple[str, str], tmp_path: Path) -> None:
    from semgraph.cli import app

    _, key = served
    runner = CliRunner()
    issue = tmp_path / "issue.md"
    issue.write_text(TRACEBACK)
    result = runner.invoke(app, ["localize", str(issue), "--repo", key, "--json", "-k", "2"])
    assert result.exit_code == 0, result.output[-2000:]
    data = json.loads(result.output)
    assert len(data["files"]) == 2 and data["mentions"]["frames"]
    text = runner.invoke(app, ["localize", "--repo", key], input=long_issue(40_000))
    assert text.exit_code == 0 and text.output.startswith("note: the query has")
    assert "src/shop/" in text.output
    missing = runner.invoke(app, ["localize", str(tmp_path / "none.md"), "--repo", key])
    assert missing.exit_code == 2
    bad = runner.invoke(app, ["localize", str(issue), "--repo", key, "--options", "zz=1"])
    assert bad.exit_code == 1 and "options" in str(bad.exception)


def test_the_mcp_tool(
    served: tuple[str, str], settings: Settings, graph: Graph, es: Elasticsearch
) -> None:
    _, key = served
    tools = Tools(Backend(settings, graph, es, JobStore(graph, settings), TokenCounter(settings)))
    got = tools.call("localize", None, {"text": long_issue(30_000), "repo": key, "limit": 2})
    assert got["status"] == "ok" and got["repo"] == key and len(got["text"]) <= 200
    assert got["freshness"] and got["completeness"]["status"] in ("exact", "lower_bound")
    assert got["returned"] <= 2 and got["rows"][0]["symbols"]
    if got["has_more"]:
        more = tools.call(
            "localize",
            None,
            {"text": long_issue(30_000), "repo": key, "limit": 2, "cursor": got["next_cursor"]},
        )
        assert more["offset"] == 2
        assert {r["path"] for r in more["rows"]}.isdisjoint(r["path"] for r in got["rows"])
    alone = tools.call("localize", None, {"text": TRACEBACK})  # one repository: no repo needed
    assert alone["status"] == "ok" and alone["repo"] == key
    cut = tools.call("localize", None, {"text": long_issue(200_000), "repo": key})
    assert cut["truncated"] is True and "32768" in cut["notice"]
    bad = tools.call("localize", None, {"text": "x", "repo": key, "limit": 10**9})
    assert bad["error"]["code"] == "invalid_argument"
    unknown = tools.call("localize", None, {"text": "x", "repo": "nope"})
    assert unknown["error"]["code"] == "unknown_repository"


def test_the_mcp_tool_takes_the_parts_weights_and_the_mode(
    served: tuple[str, str], settings: Settings, graph: Graph, es: Elasticsearch
) -> None:
    """The graph hops, off by default, on through ``options``; ``mode``; bad ones refused
    with a field-free message that does not repeat the text."""
    _, key = served
    tools = Tools(Backend(settings, graph, es, JobStore(graph, settings), TokenCounter(settings)))
    text = "`read_config_file` should accept a pathlib.Path"
    plain = tools.call("localize", None, {"text": text, "repo": key})
    assert "options" not in plain
    callers = "chunks=0,frames=0,callees=0,callers=1"
    got = tools.call("localize", None, {"text": text, "repo": key, "options": callers})
    assert got["status"] == "ok" and got["options"]["callers"] == 1.0
    app = next(r for r in got["rows"] if r["path"] == "src/shop/app.py")
    assert app["evidence"][0]["part"] == "callers"
    bm25 = tools.call("localize", None, {"text": text, "repo": key, "mode": "bm25"})
    assert bm25["status"] == "ok" and bm25["mode"] == "bm25"
    for bad in ({"options": "zz=1"}, {"options": "callers=1e9"}, {"mode": "fuzzy"}):
        refused = tools.call("localize", None, {"text": MARKER, "repo": key, **bad})
        assert refused["error"]["code"] == "invalid_argument", bad
        assert MARKER not in json.dumps(refused)
    long_options = tools.call(
        "localize", None, {"text": text, "repo": key, "options": "callers=1," * 500}
    )
    assert long_options["error"]["code"] == "invalid_argument"
