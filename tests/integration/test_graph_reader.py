"""Graph queries against the real Bolt server on the published ``shop`` repository: exact
definitions, callers and callees with tiers, ambiguity, externals, ``self.`` calls, depth,
limits, imports, and the unresolved counts in scope."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import GraphInputError
from semgraph.graph.reader import GraphReader
from semgraph.graph.writer import GraphWriter, RepoInfo
from semgraph.mcp.queries import FILE_AT_RUN
from semgraph.resolve.resolver import resolve
from semgraph.resolve.symtab import file_key
from tests.graph_repos import other_repo, shop_repo

pytestmark = pytest.mark.integration


@pytest.fixture
def reader(graph: Graph, settings: Settings, tmp_path: Path) -> GraphReader:
    for repo, files in (("shop", shop_repo()), ("other", other_repo())):
        with resolve(functools.partial(iter, files), repo, tmp_path / repo) as res:
            GraphWriter(graph, settings).publish(
                RepoInfo(repo, f"https://git.example/{repo}.git", "main", f"{repo}-c1"),
                res,
                run_id=f"{repo}-r1",
                fingerprint="fp",
                now=50.0,
            )
    return GraphReader(graph)


def edges(answer: Any) -> set[tuple[str, str, int, int]]:
    return {(e["qualified_name"], e["tier"], e["line"], e["depth"]) for e in answer.edges}


def test_definitions_short_qualified_and_partial(reader: GraphReader) -> None:
    render = reader.definitions("render")
    assert [(m["repo"], m["qualified_name"], m["kind"]) for m in render.matches] == [
        ("other", "lib.core.render", "function"),
        ("shop", "shop.cli.render", "module"),  # shop/cli/render.py itself
        ("shop", "shop.cli.render.render", "function"),
        ("shop", "shop.web.render", "module"),
        ("shop", "shop.web.render.render", "function"),
    ]
    assert render.ambiguous
    only_shop = reader.definitions("render", repo="shop")
    assert len(only_shop.matches) == 4
    assert reader.definitions("web.render.render").matches[0]["kind"] == "function"
    callers = reader.callers("render", repo="shop")  # modules do not count as candidates
    assert callers.ambiguous
    assert [m["qualified_name"] for m in callers.matches] == [
        "shop.cli.render.render",
        "shop.web.render.render",
    ]
    [total] = reader.definitions("Order.total").matches
    assert total["qualified_name"] == "shop.models.Order.total"
    assert (total["kind"], total["path"], total["start_line"], total["end_line"]) == (
        "method",
        "shop/models.py",
        15,
        25,
    )
    assert reader.definitions("shop.models.Order.total").matches == [total]
    assert reader.definitions("pkg::store::store::Open").matches[0]["kind"] == "function"
    assert reader.definitions("shop.models").matches[0]["kind"] == "module"
    assert reader.definitions("no_such_name").matches == []
    assert reader.definitions("render", limit=1).truncated


def test_callers_of_a_method_called_through_self(reader: GraphReader) -> None:
    answer = reader.callers("Base.save", repo="shop")
    assert not answer.ambiguous
    assert edges(answer) == {("shop.models.Order.total", "receiver", 20, 1)}
    assert answer.unresolved_in_scope == {
        "possible_callers_unlinked": 0,
        "repository_unresolved": 3,
        "repository_ambiguous": 3,  # render() and two name-only candidates (Python, Go)
    }


def test_callees_show_tiers_ambiguity_and_what_did_not_resolve(reader: GraphReader) -> None:
    answer = reader.callees("checkout")
    assert edges(answer) == {
        ("shop.models.Order", "import", 6, 1),
        ("shop.util.slugify", "import", 7, 1),
        ("shop.web.render.render", "ambiguous", 8, 1),
        ("shop.cli.render.render", "ambiguous", 8, 1),
        ("shop.service.process", "module", 9, 1),
        ("shop.models.Order.total", "ambiguous", 12, 1),  # order.total(): its name only
    }
    assert {e["candidates"] for e in answer.edges if e["tier"] == "ambiguous"} == {1, 2}
    # requests.get is external, mystery() unresolved, render() and order.total() ambiguous
    assert answer.unresolved_in_scope == {"unresolved": 1, "ambiguous": 2, "external": 1}


def test_callees_of_an_external_heavy_function(reader: GraphReader) -> None:
    answer = reader.callees("Client.request")
    assert edges(answer) == {("web.http.fetchJson", "import", 12, 1)}
    assert answer.unresolved_in_scope == {"unresolved": 0, "ambiguous": 0, "external": 2}


def test_ambiguous_name_lists_candidates_and_no_edges(reader: GraphReader) -> None:
    answer = reader.callers("validate", repo="shop")
    assert answer.ambiguous
    assert answer.edges == []
    assert {m["qualified_name"] for m in answer.matches} == {
        "shop.models.Base.validate",
        "shop.models.Order.validate",
    }


def test_callers_depth_is_bounded_and_walks_levels(reader: GraphReader) -> None:
    one = reader.callers("shop.util.slugify")
    assert edges(one) == {
        ("shop.models.Order.total", "import", 21, 1),
        ("shop.service.checkout", "import", 7, 1),
    }
    two = reader.callers("shop.util.slugify", depth=2)
    assert edges(two) == edges(one) | {
        ("shop.service.checkout", "ambiguous", 12, 2),  # checkout -> Order.total (candidate)
        ("shop.service", "module", 31, 2),  # module level -> checkout
    }
    limited = reader.callers("shop.util.slugify", depth=2, limit=3)
    assert len(limited.edges) == 3 and limited.truncated
    with pytest.raises(GraphInputError, match="depth"):
        reader.callers("slugify", depth=99)
    with pytest.raises(GraphInputError, match="limit"):
        reader.callers("slugify", limit=0)


def test_callees_across_languages(reader: GraphReader) -> None:
    go = reader.callees("cmd.main.main")
    assert edges(go) == {
        ("pkg.store.store.Open", "import", 9, 1),
        ("cmd.run.run", "module", 11, 1),
        ("pkg.store.store.Store.Get", "ambiguous", 12, 1),
    }
    java = reader.callees("App.main")
    assert {(e["name"], e["tier"]) for e in java.edges} == {
        ("join", "import"),
        ("helper", "scope"),
        ("App", "module"),
    }


def test_imports_and_imported_by(reader: GraphReader) -> None:
    answer = reader.imports("shop/service.py")
    assert {(e["direction"], e["kind"], e["target"]) for e in answer.edges} == {
        ("imports", "file", "shop/models.py"),
        ("imports", "file", "shop/util.py"),
        ("imports", "external", "requests"),
    }
    assert answer.unresolved_in_scope == {"imports_unresolved": 1}
    util = reader.imports("./shop/util.py", repo="shop")
    assert {(e["direction"], e["target"]) for e in util.edges} == {
        ("imported_by", "shop/models.py"),
        ("imported_by", "shop/service.py"),
    }
    assert reader.imports("nope.py").matches == []


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b", "x" * 5000, "..", "::"])
def test_hostile_names_are_refused_clearly(reader: GraphReader, bad: str) -> None:
    with pytest.raises(GraphInputError):
        reader.definitions(bad)


def test_cypher_in_a_name_is_only_data(reader: GraphReader) -> None:
    hostile = "x' }) MATCH (n) DETACH DELETE n //"
    assert reader.definitions(hostile).matches == []
    assert reader.callers(hostile).edges == []
    assert len(reader.definitions("render").matches) == 5


def test_repositories_for_the_divergence_check(reader: GraphReader) -> None:
    assert reader.repositories() == [
        {
            "key": "other",
            "url": "https://git.example/other.git",
            "default_branch": "main",
            "commit": "other-c1",
            "run_id": "other-r1",
            "fingerprint": "fp",
            "indexed_at": 50.0,
            "state": None,
        },
        {
            "key": "shop",
            "url": "https://git.example/shop.git",
            "default_branch": "main",
            "commit": "shop-c1",
            "run_id": "shop-r1",
            "fingerprint": "fp",
            "indexed_at": 50.0,
            "state": None,
        },
    ]


def test_one_repository_by_key(reader: GraphReader) -> None:
    everything = {r["key"]: r for r in reader.repositories()}
    assert reader.repository("shop") == everything["shop"]
    assert reader.repository("other") == everything["other"]
    assert reader.repository("nope") is None
    assert reader.repository("shop' }) MATCH (n) DETACH DELETE n //") is None
    assert reader.repository("other") is not None


def test_get_snippets_file_lookup_finds_a_published_file_by_its_key(
    reader: GraphReader, graph: Graph
) -> None:
    """FILE_AT_RUN (mcp get_snippet) looks the file up by the unique key the publish writes."""
    path = shop_repo()[0].path
    rows = graph.query("file at run", FILE_AT_RUN, key=file_key("shop", path))
    assert [r["path"] for r in rows] == [path]
    assert graph.query("file at run", FILE_AT_RUN, key=file_key("other", path)) == []
