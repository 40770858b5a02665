"""Long questions and file roles against the real stores (issue 28): a repository indexed by
the real reindex job (graph + Elasticsearch + model) answers a 30 kB issue text with a
traceback, a 1 MB text (cut, with a notice), hostile text and a query of thousands of
distinct words (within the clause limit); the role recorded per file filters the search
(the function, the CLI, the MCP tool), and the MCP answer keeps its shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
from semgraph.search.index import SearchIndex
from semgraph.search.query import search_answer
from semgraph.search.vectors import VectorsFill
from tests.repos import make_repo
from tests.shared_kinds import shared_embedder, shared_search

pytestmark = pytest.mark.integration

FILES = {
    "src/shop/__init__.py": "",
    "src/shop/config.py": (
        "def read_config_file(path):\n"
        '    """Read the YAML configuration file at path and return its settings."""\n'
        "    with open(path) as handle:\n"
        "        return parse_yaml(handle.read())\n"
        "\n\n"
        "def parse_yaml(text):\n"
        "    return dict(line.split(': ', 1) for line in text.splitlines() if line)\n"
    ),
    "src/shop/cart.py": (
        "def cart_total(items, discount):\n"
        "    subtotal = sum(item.price * item.quantity for item in items)\n"
        "    return subtotal - discount\n"
    ),
    "tests/test_config.py": (
        "from shop.config import read_config_file\n\n\n"
        "def test_read_config_file_reads_yaml_configuration(tmp_path):\n"
        "    path = tmp_path / 'config.yaml'\n"
        "    path.write_text('name: shop')\n"
        "    assert read_config_file(path) == {'name': 'shop'}\n"
    ),
    "docs/configuration.md": (
        "# Configuration\n\nThe configuration file is YAML; read_config_file reads it.\n"
    ),
    "CHANGES.rst": "Version 1.1\n-----------\n\n- read_config_file reads YAML configuration.\n",
}

TRACEBACK = """\
read_config_file crashes on a configuration file with an empty line

Reading my YAML configuration fails when the file has a blank line in the middle.

Traceback (most recent call last):
  File "/app/src/shop/config.py", line 4, in read_config_file
    return parse_yaml(handle.read())
  File "/app/src/shop/config.py", line 8, in parse_yaml
    return dict(line.split(': ', 1) for line in text.splitlines() if line)
ValueError: dictionary update sequence element #3 has length 1; 2 is required
"""


def issue_text(chars: int) -> str:
    text = TRACEBACK + "\n```\n"
    filler = "name: shop\ncolour: blue\n\nsize: large\n"
    while len(text) < chars:
        text += filler
    return text[:chars]


class Shop(Tools):
    key = ""


@pytest.fixture
def shop(settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path) -> Shop:
    """The repository indexed by the real job; the MCP tools over it (``shop.key``)."""
    repo = make_repo(tmp_path / "shop", FILES)
    request = ReindexRequest(source=str(repo))
    embedder = shared_embedder(settings)
    run = Reindex(settings, graph, shared_search(settings), request, embedder=embedder).run()
    # then its vectors, as a worker's vectors job fills them (progressive publish)
    VectorsFill(SearchIndex(shared_search(settings), settings), embedder, run.repo_key).run()
    tools = Shop(Backend(settings, graph, es, JobStore(graph, settings), TokenCounter(settings)))
    tools.key = run.repo_key
    return tools


def answer(tools: Shop, text: str, **kw: Any) -> Any:
    backend = tools.backend
    embedder = shared_embedder(backend.settings)
    return search_answer(backend.search, backend.settings, embedder, text, repo=tools.key, **kw)


def test_a_30_kb_issue_text_finds_the_source(shop: Shop) -> None:
    text = issue_text(30_000)
    for mode in ("hybrid", "bm25", "knn"):
        got = answer(shop, text, k=10, mode=mode)
        assert not got.truncated and got.query_chars == len(text.strip()), mode
        assert got.hits, mode
    hybrid = answer(shop, text, k=10)
    assert "src/shop/config.py" in [h.path for h in hybrid.hits[:3]]
    roles = {h.path: h.role for h in hybrid.hits}
    assert roles.get("src/shop/config.py") == "source"
    assert roles.get("tests/test_config.py", "test") == "test"


def test_a_1_mb_text_is_cut_with_a_notice(shop: Shop, settings: Settings) -> None:
    text = issue_text(1_000_000)
    got = answer(shop, text, k=5)
    assert got.truncated and got.query_chars == len(text.strip())
    assert got.searched_chars <= settings.search_max_query_chars
    assert got.notice is not None and "name: shop" not in got.notice
    assert got.hits


@pytest.mark.parametrize(
    "text",
    [
        "read\x00config\x00file",
        "\ud800 configuration \udfff file",
        "конфигурация 設定ファイル read_config_file 🚀",
        '\'; DROP TABLE files; -- {"query": {"match_all": {}}} \\u0000',
        " ".join(f"token{i}y" for i in range(6000)),  # thousands of distinct words
        'a*b?c~d^2 (e OR f) "g',  # query-string syntax is not interpreted
    ],
)
def test_hostile_text_is_searched(shop: Shop, text: str) -> None:
    for mode in ("bm25", "hybrid"):
        got = answer(shop, text, k=5, mode=mode)
        assert isinstance(got.hits, list)


def test_the_role_filter(shop: Shop) -> None:
    for role, paths in (
        ("source", {"src/shop/config.py", "src/shop/cart.py"}),
        ("test", {"tests/test_config.py"}),
        ("docs", {"docs/configuration.md"}),
        ("changelog", {"CHANGES.rst"}),
    ):
        got = answer(shop, "read the yaml configuration file", k=20, role=role)
        assert got.hits and {h.path for h in got.hits} <= paths, role
        assert {h.role for h in got.hits} == {role}
    assert answer(shop, "configuration", k=5, role="i18n").hits == []


def test_the_cli_reads_a_long_query_from_stdin(shop: Shop) -> None:
    from semgraph.cli import app

    runner = CliRunner()
    args = ["search", "-", "--repo", shop.key, "--role", "source", "-k", "3", "--json"]
    result = runner.invoke(app, args, input=issue_text(40_000))
    assert result.exit_code == 0, result.output[-2000:]
    data = json.loads(result.output)
    assert data["truncated"] is True and "SEMGRAPH_SEARCH_MAX_QUERY_CHARS" in data["notice"]
    assert data["hits"] and {h["role"] for h in data["hits"]} == {"source"}
    args = ["search", "-", "--repo", shop.key, "-k", "2"]
    text = runner.invoke(app, args, input="x " * 20_000)
    assert text.exit_code == 0 and text.output.startswith("note: the query has 39999")
    bad = runner.invoke(app, ["search", "yaml", "--role", "tests"])
    assert bad.exit_code == 1 and "role must be one of" in str(bad.exception)


def test_the_mcp_tool_takes_long_text_and_a_role(shop: Shop) -> None:
    got = shop.call("search_code", None, {"text": issue_text(30_000), "repo": shop.key})
    assert got["status"] == "ok" and got["truncated"] is False and "notice" not in got
    assert len(got["text"]) <= 200  # the question is not echoed back whole
    assert got["freshness"] and got["completeness"]
    assert {"total", "has_more"} <= set(got) and got["rows"][0]["role"]
    cut = shop.call("search_code", None, {"text": issue_text(200_000), "role": "source"})
    assert cut["truncated"] is True and "32768" in cut["notice"]
    assert {row["role"] for row in cut["rows"]} == {"source"}
    assert len(json.dumps(cut)) < 200_000
    bad = shop.call("search_code", None, {"text": "x", "role": "tests" * 1000})
    assert bad["error"]["code"] == "invalid_argument" and len(bad["error"]["message"]) < 300
