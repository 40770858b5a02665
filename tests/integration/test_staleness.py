"""Why a repository is stale, on every surface, against the real Bolt server and
Elasticsearch (issue 43, part 6): ``semgraph repos show``, ``GET /repos/KEY`` and the console's
repository page, and the MCP freshness block say it in a word and the job's error."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import httpx
import pytest
from elasticsearch import Elasticsearch
from typer.testing import CliRunner

from semgraph.cli import app
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.indexer.sources import repo_key_for
from semgraph.jobs import register_job_kinds
from semgraph.mcp.backend import Backend
from semgraph.mcp.tokens import TokenCounter
from semgraph.mcp.tools import Tools
from semgraph.queue.store import JobStore
from semgraph.queue.worker import Worker
from semgraph.repos.listing import show_repository
from semgraph.web.app import create_app
from semgraph.web.fixtures import serve_in_thread
from tests.repos import POLYGLOT, commit, make_repo
from tests.shared_kinds import KINDS

pytestmark = pytest.mark.integration


def test_a_source_gone_after_its_first_index_is_an_unreachable_source_everywhere(
    tmp_path: Path, graph: Graph, es: Elasticsearch, settings: Settings
) -> None:
    repo = make_repo(tmp_path / "poly", POLYGLOT)
    quick = settings.model_copy(
        update={
            "poll_interval_s": 0.01,
            "backoff_base_s": 0,
            "claim_affinity_s": 0,
            "embed_inline_max_chunks": 0,
        }
    )
    register_job_kinds(KINDS)
    store = JobStore(graph, quick)
    key = repo_key_for(str(repo))
    args, url = {"source": str(repo)}, f"file://{repo}"
    store.enqueue(key, now=time.time(), args=args, source=url)
    worker = Worker(quick, graph, store=store)
    assert worker.run(once=True) == 0  # published (its vectors job waits: no commit of its own)
    shown = show_repository(quick, graph, es, key)
    assert shown is not None and shown["stale_reason"] is None

    newer = commit(repo, {"app/extra.py": "def stale_extra():\n    return 1\n"})
    shutil.move(repo, tmp_path / "moved-away")
    store.enqueue(key, now=time.time(), args=args, source=url, commit=newer)
    assert worker.run(once=True) == 0  # the attempt fails and waits for a retry
    shown = show_repository(quick, graph, es, key)
    assert shown is not None
    why = shown["stale_reason"]
    assert why["reason"] == "unreachable source" and why["status"] == "pending"
    assert why["commit"] == newer and why["error"].startswith("CheckoutError: ")

    printed = CliRunner().invoke(app, ["repos", "show", key], catch_exceptions=False)
    assert printed.exit_code == 0, printed.output
    assert "stale:       unreachable source: CheckoutError: " in printed.output

    tools = Tools(Backend(quick, graph, es, store, TokenCounter(quick)))
    status = tools.call("index_status", None, {"repo": key})
    fresh = status["rows"][0]
    assert fresh["stale"] is True and fresh["stale_reason"]["reason"] == "unreachable source"

    with serve_in_thread(create_app(quick, graph=graph, search=es)) as base:
        page = httpx.get(f"{base}/console/repos/{key}", timeout=60)
        assert page.status_code == 200
        assert "<dt>Why stale</dt><dd>unreachable source: CheckoutError: " in page.text
        listing = httpx.get(f"{base}/console/repos", timeout=60)
        assert "(unreachable source: CheckoutError: " in listing.text
