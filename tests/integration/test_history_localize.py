"""Commit history through the real reindex job: a full index, then a push whose commit's
message becomes evidence for its file in ``localize`` and in the hybrid search's hits; a
commit after the indexed one is never read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest, ReindexResult
from semgraph.localize.locate import LocalizeOptions, localize
from semgraph.search.index import SearchIndex
from semgraph.search.query import search_answer
from tests.repos import commit, make_repo
from tests.shared_kinds import shared_embedder, shared_search

pytestmark = pytest.mark.integration

FILES = {
    "shop/__init__.py": "",
    "shop/clock.py": "def parse_when(text):\n    return text.split('T')\n",
    "shop/cart.py": "def total(items):\n    return sum(i.price for i in items)\n",
    "shop/mail.py": "def send(to, body):\n    return (to, body)\n",
}


def run(settings: Settings, graph: Graph, repo: Path, ref: str | None = None) -> ReindexResult:
    request = ReindexRequest(source=str(repo), ref=ref)
    embedder = shared_embedder(settings)
    return Reindex(settings, graph, shared_search(settings), request, embedder=embedder).run()


def evidence(answer: dict[str, Any], path: str) -> list[str]:
    for f in answer["files"]:
        if f["path"] == path:
            return [e["detail"] for e in f["evidence"] if e["part"] == "history"]
    return []


def test_a_push_adds_its_commit_as_evidence_and_nothing_after_it(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "shop", FILES)
    fixed = commit(
        repo,
        {"shop/clock.py": "def parse_when(text):\n    return text.partition('T')\n"},
        "Fix timezone parsing of ISO dates\n\nOffsets like +02:00 were dropped.",
    )
    first = run(settings, graph, repo)
    assert first.stats["history"]["mode"] == "full"
    rounded = commit(
        repo,
        {"shop/cart.py": "def total(items):\n    return round(sum(i.price for i in items), 2)\n"},
        "Round the basket sum to whole cents",
    )
    later = commit(
        repo,
        {"shop/mail.py": "def send(to, body):\n    return (to, body.strip())\n"},
        "Strip the newsletter signature whitespace",
    )
    pushed = run(settings, graph, repo, ref=rounded)
    assert pushed.commit == rounded
    assert pushed.stats["history"]["mode"] == "append"
    assert pushed.stats["history"]["commits"] == 1  # only old..new was read
    key = pushed.repo_key
    embedder = shared_embedder(settings)
    opts = LocalizeOptions(history=1.0)

    def ask(text: str) -> dict[str, Any]:
        got = localize(es, graph, settings, embedder, text, repo=key, options=opts)
        return got.to_dict()

    got = ask("the basket sum is not rounded to whole cents")
    assert f"commit {rounded[:7]}: Round the basket sum to whole cents" in evidence(
        got, "shop/cart.py"
    )
    got = ask("ISO dates lose their timezone offsets")
    assert f"commit {fixed[:7]}: Fix timezone parsing of ISO dates" in evidence(
        got, "shop/clock.py"
    )
    got = ask("newsletter signature whitespace")
    assert all(later[:7] not in line for f in got["files"] for line in evidence(got, f["path"]))
    alias = SearchIndex(es, settings).alias_name(key)
    assert es.count(index=alias, query={"term": {"history_sha": later}})["count"] == 0
    default = localize(es, graph, settings, embedder, "basket sum cents", repo=key).to_dict()
    assert evidence(default, "shop/cart.py")  # on by default
    off_opts = LocalizeOptions(history=0)
    off = localize(es, graph, settings, embedder, "basket sum cents", repo=key, options=off_opts)
    assert not any(evidence(off.to_dict(), f["path"]) for f in off.to_dict()["files"])

    answer = search_answer(
        es, settings, embedder, "basket sum rounded to cents", repo=key, history_weight=1.0
    )
    lifted = [h for h in answer.hits if h.path == "shop/cart.py"]
    assert lifted and lifted[0].history == [
        f"commit {rounded[:7]}: Round the basket sum to whole cents"
    ]
    assert "history" in lifted[0].to_dict()
    plain = search_answer(es, settings, embedder, "basket sum", repo=key, history_weight=0.0)
    assert all(h.history is None and "history" not in h.to_dict() for h in plain.hits)


def test_history_evidence_on_every_surface(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    """HTTP, the CLI and the MCP tool each show the commit line for its file."""
    import httpx
    from typer.testing import CliRunner

    from semgraph.cli import app
    from semgraph.mcp.backend import Backend
    from semgraph.mcp.tokens import TokenCounter
    from semgraph.mcp.tools import Tools
    from semgraph.queue.store import JobStore
    from semgraph.web.app import create_app
    from semgraph.web.fixtures import serve_in_thread

    repo = make_repo(tmp_path / "shop", FILES)
    sha = commit(
        repo,
        {"shop/cart.py": "def total(items):\n    return sum(i.cost for i in items)\n"},
        "Use the cost of each basket line, not its list price",
    )
    key = run(settings, graph, repo).repo_key
    text = "basket lines use the list price instead of the cost"
    line = f"commit {sha[:7]}: Use the cost of each basket line, not its list price"
    configured = settings.model_copy(update={"api_token": "t0ken-for-tests"})
    with serve_in_thread(create_app(configured, graph=graph, search=es)) as url:
        got = httpx.post(
            f"{url}/localize",
            json={"q": text, "repo": key, "options": "history=1"},
            headers={"Authorization": "Bearer t0ken-for-tests"},
            timeout=120,
        )
    assert got.status_code == 200, got.text[:500]
    assert line in evidence(got.json(), "shop/cart.py")
    cli = CliRunner().invoke(app, ["localize", "--repo", key, "--options", "history=1"], input=text)
    assert cli.exit_code == 0, cli.output[-2000:]
    assert line in cli.output
    tools = Tools(Backend(settings, graph, es, JobStore(graph, settings), TokenCounter(settings)))
    mcp = tools.call("localize", None, {"text": text, "repo": key, "options": "history=1"})
    cart = next(r for r in mcp["rows"] if r["path"] == "shop/cart.py")
    assert line in [e["detail"] for e in cart["evidence"]]
