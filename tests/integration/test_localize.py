"""Localisation against the real stores: a small repository indexed by the real job, issue
texts with a traceback, names and prose, each part switched on and off; the statements of
:mod:`semgraph.localize.queries` run against the real Bolt server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import SearchQueryError
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest
from semgraph.localize import queries as lq
from semgraph.localize.locate import LocalizeOptions, localize
from semgraph.resolve.symtab import file_key
from tests.repos import make_repo
from tests.shared_kinds import shared_embedder, shared_search

pytestmark = pytest.mark.integration

FILES = {
    "src/shop/__init__.py": "",
    "src/shop/config.py": (
        "from shop.parse import parse_yaml\n"
        "\n\n"
        "def read_config_file(path):\n"
        '    """Read the YAML configuration file at path and return its settings."""\n'
        "    with open(path) as handle:\n"
        "        return parse_yaml(handle.read())\n"
    ),
    "src/shop/parse.py": (
        "def parse_yaml(text):\n"
        "    return dict(line.split(': ', 1) for line in text.splitlines() if line)\n"
    ),
    "src/shop/cart.py": (
        "def cart_total(items, discount):\n"
        "    subtotal = sum(item.price * item.quantity for item in items)\n"
        "    return subtotal - discount\n"
        "\n\n"
        "def checkout(items):\n"
        "    return cart_total(items, 0)\n"
    ),
    "src/shop/app.py": (
        "from shop.config import read_config_file\n"
        "\n\n"
        "def start(path):\n"
        "    settings = read_config_file(path)\n"
        "    return settings\n"
    ),
    "tests/test_config.py": (
        "from shop.config import read_config_file\n\n\n"
        "def test_read_config_file_reads_yaml_configuration(tmp_path):\n"
        "    path = tmp_path / 'config.yaml'\n"
        "    path.write_text('name: shop')\n"
        "    assert read_config_file(path) == {'name': 'shop'}\n"
        "    assert read_config_file(path) != {}\n"
    ),
    "docs/configuration.md": (
        "# Configuration\n\nThe YAML configuration file: read_config_file reads it, parse_yaml\n"
        "parses it. A blank line in the configuration file is allowed.\n"
    ),
}

TRACEBACK = """\
Reading a configuration file with a blank line crashes

Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/shop/app.py", line 5, in start
    settings = read_config_file(path)
  File "/usr/lib/python3.11/site-packages/shop/config.py", line 7, in read_config_file
    return parse_yaml(handle.read())
  File "/usr/lib/python3.11/site-packages/shop/parse.py", line 2, in parse_yaml
    return dict(line.split(': ', 1) for line in text.splitlines() if line)
ValueError: dictionary update sequence element #3 has length 1; 2 is required
"""

OFF = LocalizeOptions(chunks=1.0, names=0, frames=0, callees=0, callers=0, demote=1.0)


@pytest.fixture
def shop(settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path) -> str:
    """The repository indexed by the real job (the stores are emptied for each test)."""
    repo = make_repo(tmp_path / "shop", FILES)
    request = ReindexRequest(source=str(repo))
    embedder = shared_embedder(settings)
    run = Reindex(settings, graph, shared_search(settings), request, embedder=embedder).run()
    return run.repo_key


def ask(
    settings: Settings, graph: Graph, es: Elasticsearch, key: str, text: str, **kw: Any
) -> dict[str, Any]:
    embedder = shared_embedder(settings)
    return localize(es, graph, settings, embedder, text, repo=key, **kw).to_dict()


def paths(answer: dict[str, Any]) -> list[str]:
    return [f["path"] for f in answer["files"]]


def test_frames_find_files_and_the_symbols_on_their_lines(
    settings: Settings, graph: Graph, es: Elasticsearch, shop: str
) -> None:
    only = LocalizeOptions(chunks=0, names=0, callees=0, callers=0)
    got = ask(settings, graph, es, shop, TRACEBACK, options=only)
    assert set(paths(got)) == {"src/shop/app.py", "src/shop/config.py", "src/shop/parse.py"}
    by_path = {f["path"]: f for f in got["files"]}
    parse = by_path["src/shop/parse.py"]
    assert parse["symbols"][0]["symbol"].endswith("parse_yaml")
    kinds = {e["part"] for e in parse["evidence"]}
    assert kinds == {"frames"}
    assert any("parse.py:2" in e["detail"] for e in parse["evidence"])


def test_names_find_symbols_exactly(
    settings: Settings, graph: Graph, es: Elasticsearch, shop: str
) -> None:
    only = LocalizeOptions(chunks=0, frames=0, callees=0, callers=0)
    text = "The total is wrong: `cart_total` ignores the discount when checkout passes 0"
    got = ask(settings, graph, es, shop, text, options=only)
    assert paths(got)[0] == "src/shop/cart.py"
    top = got["files"][0]["symbols"][0]
    assert top["symbol"].endswith("cart_total")
    assert top["evidence"][0]["part"] == "names"


def test_roles_are_demoted_unless_asked(
    settings: Settings, graph: Graph, es: Elasticsearch, shop: str
) -> None:
    text = "read_config_file reads the YAML configuration file; a blank line breaks it"
    plain = ask(settings, graph, es, shop, text, options=OFF)
    demoted = ask(
        settings, graph, es, shop, text, options=LocalizeOptions(**{**_off(), "demote": 0.3})
    )
    assert {f["path"]: f["demoted"] for f in demoted["files"]}.get("tests/test_config.py", True)
    assert not any(f["demoted"] for f in plain["files"])
    source_rank = paths(demoted).index("src/shop/config.py")
    assert source_rank <= paths(plain).index("src/shop/config.py")
    for f in demoted["files"][:source_rank]:
        assert f["role"] == "source"
    asked = ask(settings, graph, es, shop, text + " and the test fails", options=OFF)
    assert not any(f["demoted"] for f in asked["files"])


def _off() -> dict[str, Any]:
    return OFF.to_dict()


def test_graph_hops_reach_callees_and_callers(
    settings: Settings, graph: Graph, es: Elasticsearch, shop: str
) -> None:
    names = LocalizeOptions(chunks=0, frames=0, callees=0, callers=0)
    text = "`checkout` computes the wrong amount"
    without = ask(settings, graph, es, shop, text, options=names)
    assert paths(without) == ["src/shop/cart.py"]
    hops = LocalizeOptions(chunks=0, frames=0, callees=1.0, callers=0)
    got = ask(settings, graph, es, shop, text, options=hops)
    symbols = [s["symbol"] for s in got["files"][0]["symbols"]]
    assert any(s.endswith("cart_total") for s in symbols), symbols
    parts = {e["part"] for s in got["files"][0]["symbols"] for e in s["evidence"]}
    assert "callees" in parts
    text2 = "`read_config_file` should accept a pathlib.Path"
    callers = LocalizeOptions(chunks=0, frames=0, callees=0, callers=1.0)
    got2 = ask(settings, graph, es, shop, text2, options=callers)
    assert "src/shop/app.py" in paths(got2)
    app = next(f for f in got2["files"] if f["path"] == "src/shop/app.py")
    assert app["evidence"][0]["part"] == "callers"


def test_all_parts_and_the_rerank_rank_the_fix_first(
    settings: Settings, graph: Graph, es: Elasticsearch, shop: str
) -> None:
    got = ask(settings, graph, es, shop, TRACEBACK, options=LocalizeOptions(rerank=0.5))
    assert paths(got)[0] in ("src/shop/parse.py", "src/shop/config.py")
    assert set(paths(got)[:3]) >= {"src/shop/parse.py", "src/shop/config.py"}
    assert got["run_id"]
    assert any(e["part"] == "rerank" for f in got["files"] for e in f["evidence"])
    assert set(got["timings_ms"]) >= {"search", "frames", "names", "graph_hops", "rerank"}


def test_long_hostile_and_bad_input(
    settings: Settings, graph: Graph, es: Elasticsearch, shop: str
) -> None:
    huge = TRACEBACK + ('\x00 `a_b` x.y.z File "q.py", line 9\n' + "é\ud800" * 50) * 8000
    got = ask(settings, graph, es, shop, huge, options=LocalizeOptions(rerank=0))
    assert got["truncated"] and got["notice"]
    assert len(got["mentions"]["frames"]) <= 24 and len(got["mentions"]["names"]) <= 48
    assert "src/shop/parse.py" in paths(got)
    with pytest.raises(SearchQueryError) as err:
        ask(settings, graph, es, shop, "  \n ")
    assert "empty" in str(err.value)
    with pytest.raises(SearchQueryError):
        ask(settings, graph, es, shop, "x", k=0)
    with pytest.raises(SearchQueryError):
        ask(settings, graph, es, shop, "x", k=51)
    cypher = "'; MATCH (n) DETACH DELETE n //"
    got = ask(settings, graph, es, shop, f'`{cypher}` File "{cypher}.py", line 1', k=3)
    assert len(got["files"]) <= 3
    assert graph.query("count", "MATCH (s:Symbol) RETURN count(s) AS n")[0]["n"] > 0


def test_localize_statements_on_the_real_server(graph: Graph, shop: str) -> None:
    rows = graph.query(
        "files",
        lq.LOCALIZE_FILES,
        keys=[file_key(shop, "src/shop/cart.py"), file_key(shop, "nope.py")],
    )
    assert [r["path"] for r in rows] == ["src/shop/cart.py"]
    spans = graph.query(
        "frame symbols",
        lq.LOCALIZE_FRAME_SYMBOLS,
        frames=[{"key": file_key(shop, "src/shop/cart.py"), "line": 6}],
        limit=10,
    )
    assert [r["name"] for r in spans] == ["checkout"]
    named = graph.query(
        "named", lq.LOCALIZE_NAMED, names=["cart_total", "missing_name"], repo=shop, per_name=1
    )
    assert [(r["mention"], r["total"]) for r in named] == [("cart_total", 1)]
    assert named[0]["found"][0]["path"] == "src/shop/cart.py"
    assert graph.query("named", lq.LOCALIZE_NAMED, names=[], repo=shop, per_name=1) == []
    modules = graph.query(
        "modules", lq.LOCALIZE_MODULES, names=["cart", "nothing"], repo=shop, limit=10
    )
    assert [r["path"] for r in modules] == ["src/shop/cart.py"]


def test_search_without_snippets_ranks_the_same(
    settings: Settings, graph: Graph, es: Elasticsearch, shop: str
) -> None:
    from semgraph.search.query import search_answer

    embedder = shared_embedder(settings)
    full = search_answer(es, settings, embedder, TRACEBACK, repo=shop, k=20)
    bare = search_answer(es, settings, embedder, TRACEBACK, repo=shop, k=20, snippets=False)
    assert [(h.path, h.start_line, h.score) for h in full.hits] == [
        (h.path, h.start_line, h.score) for h in bare.hits
    ]
    assert any(h.snippet for h in full.hits) and not any(h.snippet for h in bare.hits)
