"""A repository too large for one transaction is refused by the REAL server, never split.

Neo4j community has no ``dbms.setConfigValue``, so the limit cannot be lowered on the shared
test server at run time: this module starts a dedicated Bolt server (the same launcher as
the test stack, ``ops/neo4j-server``) with ``db.memory.transaction.max`` set small, and
stops it at the end. The refusal, its error code and text, come from that server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from semgraph.config import Settings
from semgraph.errors import GraphTooLarge
from semgraph.graph.writer import GraphWriter, RepoInfo
from semgraph.model import FileFacts, SkippedFile
from semgraph.resolve.resolver import resolve
from tests.bolt_servers import bolt_server
from tests.graph_repos import call, facts, shop_repo, sym
from tests.integration.test_graph_publish import snapshot

pytestmark = pytest.mark.integration

TX_LIMIT = "4m"
TX_LIMIT_TEXT = "4.0 MiB"  # as the server reports it
SHOP = RepoInfo("shop", "https://git.example/shop.git", "main", "c1")


@pytest.fixture(scope="module")
def small_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """A dedicated Bolt server whose transactions may use at most ``TX_LIMIT`` of memory."""
    with bolt_server(
        tmp_path_factory.mktemp("small-bolt"), f"db.memory.transaction.max={TX_LIMIT}", "small"
    ) as settings:
        yield settings


def big_repo(n_files: int) -> list[FileFacts | SkippedFile]:
    """``n_files`` Python files of 40 functions, each calling five functions of the file."""
    out: list[FileFacts | SkippedFile] = []
    for i in range(n_files):
        mod = f"big.m{i}"
        fns = [f"f{j}" for j in range(40)]
        symbols = [
            sym("function", f"{mod}.{fn}", 1 + 10 * j, 9 + 10 * j) for j, fn in enumerate(fns)
        ]
        calls = [
            call(f"{mod}.{fn}", fns[(j + k) % len(fns)], 2 + 10 * j + k)
            for j, fn in enumerate(fns)
            for k in range(1, 6)
        ]
        out.append(facts(f"big/m{i}.py", "python", 400, symbols, calls=calls))
    return out


def _publish(graph: Any, settings: Settings, tmp: Path, files: list[Any], run_id: str) -> Any:
    with resolve(lambda: iter(files), SHOP.key, tmp / run_id) as res:
        return GraphWriter(graph, settings).publish(
            SHOP, res, run_id=run_id, fingerprint="fp", now=1000.0
        )


def test_server_refusal_is_graph_too_large_and_keeps_the_previous_graph(
    small_server: Settings, tmp_path: Path
) -> None:
    from semgraph.db import connect_graph
    from semgraph.graph.schema import SCHEMA

    with connect_graph(small_server) as graph:
        graph.ensure_schema(SCHEMA)
        graph.query("reset", "MATCH (n) DETACH DELETE n")
        first = _publish(graph, small_server, tmp_path, shop_repo(), "r1")
        assert first.dropped_rows == 0
        before = snapshot(graph, "shop")
        with pytest.raises(GraphTooLarge) as info:
            _publish(graph, small_server, tmp_path, big_repo(80), "r2")
        message = str(info.value)
        assert f"db.memory.transaction.max = {TX_LIMIT_TEXT}" in message, message
        assert "never split" in message and "shop" in message
        cause = str(info.value.__cause__)
        assert "Neo.TransientError.General.MemoryPoolOutOfMemoryError" in cause, cause
        assert snapshot(graph, "shop") == before
        [repo] = graph.query("run", "MATCH (r:Repository {key: 'shop'}) RETURN r.run_id AS r")
        assert repo["r"] == "r1"
        # the server is fine afterwards: a graph within the limit still publishes
        again = _publish(graph, small_server, tmp_path, shop_repo(True), "r3")
        assert again.mode == "delta" and again.dropped_rows == 0  # against r1's state
        assert again.nodes["Symbol"] == 1  # the new method: the refused r2 left no trace
        assert graph.query("n", "MATCH (s:Symbol {repo: 'shop'}) RETURN count(s) AS n") == [
            {"n": 41}
        ]
