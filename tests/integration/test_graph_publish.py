"""The code graph against the real Bolt server: one-transaction publish, replacement of
exactly one repository's subgraph, rollback on failure, readers never seeing a mix."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import GraphInputError, GraphTooLarge
from semgraph.faults import Faults
from semgraph.graph.publish_stats import PublishStats
from semgraph.graph.writer import GraphWriter, RepoInfo
from semgraph.model import FileFacts, SkippedFile
from semgraph.resolve.resolution import Resolution
from semgraph.resolve.resolver import resolve
from tests.graph_repos import other_repo, shop_repo

pytestmark = pytest.mark.integration

SHOP = RepoInfo("shop", "https://git.example/shop.git", "main", "c1")
OTHER = RepoInfo("other", "https://git.example/other.git", "main", "o1")


class Boom(RuntimeError):
    pass


def publish(
    graph: Any,
    settings: Any,
    tmp_path: Path,
    repo: RepoInfo,
    files: list[FileFacts | SkippedFile],
    run_id: str,
    **kw: Any,
) -> PublishStats:
    faults = kw.pop("faults", Faults())
    with resolve(lambda: iter(files), repo.key, tmp_path / run_id) as res:
        return GraphWriter(graph, settings, faults=faults).publish(
            repo,
            res,
            run_id=run_id,
            fingerprint=f"fp-{run_id}",
            now=1000.0,
            **kw,
        )


def snapshot(graph: Any, repo: str) -> tuple[list[Any], list[Any]]:
    """Every node (label set + properties) and edge of one repository, sorted."""
    nodes = graph.query(
        "nodes",
        "MATCH (n) WHERE n.repo = $repo OR n.key = $repo "
        "RETURN labels(n) AS labels, properties(n) AS props",
        repo=repo,
    )
    edges = graph.query(
        "edges",
        "MATCH (a)-[e]->(b) WHERE (a.repo = $repo OR a.key = $repo) AND NOT a:IndexRun "
        "RETURN a.key AS a, type(e) AS t, properties(e) AS p, b.key AS b",
        repo=repo,
    )
    return (
        sorted((sorted(n["labels"]), sorted(n["props"].items())) for n in nodes),
        sorted((e["a"], e["t"], sorted(e["p"].items()), e["b"]) for e in edges),
    )


def count_edges(graph: Any, repo: str) -> dict[str, int]:
    rows = graph.query(
        "edge counts",
        "MATCH (a)-[e]->(b) WHERE a.repo = $repo OR a.key = $repo "
        "RETURN type(e) AS t, count(*) AS n",
        repo=repo,
    )
    return {r["t"]: r["n"] for r in rows}


def test_publish_writes_the_schema_and_records_the_run(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    stats = publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1", batch_size=7)
    assert stats.nodes == {"File": 15, "Symbol": 40, "ExternalModule": 5}
    assert stats.dropped_rows == 0
    assert count_edges(graph, "shop") == {
        "CONTAINS": 15 + 16 + 1,  # repo->files, module->top-level symbols, nested function
        "DEFINES": 40,
        "HAS_METHOD": 10,
        "INHERITS": 1,
        "IMPORTS": 11,
        "CALLS": 21,
        "CALLS_EXTERNAL": 5,  # external call sites (issue 30)
    }
    assert stats.edges == count_edges(graph, "shop")
    assert stats.edges["CALLS"] == 21 and stats.edges["IMPORTS"] == 11
    [repo] = graph.query("repo", "MATCH (r:Repository {key: 'shop'}) RETURN properties(r) AS p")
    p = repo["p"]
    assert (p["run_id"], p["fingerprint"], p["commit"], p["indexed_at"]) == (
        "r1",
        "fp-r1",
        "c1",
        1000.0,
    )
    assert (p["url"], p["default_branch"], p["calls_total"], p["calls_unresolved"]) == (
        "https://git.example/shop.git",
        "main",
        30,
        3,
    )
    labels = graph.query(
        "labels",
        "MATCH (s:Symbol {key: 'shop|shop/models.py|shop.models.Order'}) RETURN labels(s) AS l",
    )
    assert sorted(labels[0]["l"]) == ["Class", "Symbol"]
    call = graph.query(
        "tier",
        "MATCH (:Symbol {name: 'total'})-[e:CALLS]->(t:Symbol {name: 'save'}) "
        "RETURN e.tier AS tier, e.line AS line, t.qualified_name AS qn",
    )
    assert call == [{"tier": "receiver", "line": 20, "qn": "shop.models.Base.save"}]


def test_batch_size_does_not_change_the_graph(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1", batch_size=1)
    small = snapshot(graph, "shop")
    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1", batch_size=10_000)
    assert snapshot(graph, "shop") == small


def test_reindex_replaces_exactly_one_repository(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1")
    publish(graph, settings, tmp_path, OTHER, other_repo(), "o1")
    other_before = snapshot(graph, "other")
    stats = publish(
        graph, settings, tmp_path, SHOP, shop_repo(extra_order_method=True), "r2", delta=False
    )
    assert stats.mode == "full"
    assert stats.deleted_nodes == 0  # every node is still in the model: replaced in place
    assert stats.deleted_edges == 15 + 16 + 1 + 40 + 10 + 1 + 11 + 21 + 5  # all re-created
    assert snapshot(graph, "other") == other_before
    rows = graph.query(
        "refund",
        "MATCH (c:Class {key: 'shop|shop/models.py|shop.models.Order'})-[:HAS_METHOD]->(m) "
        "RETURN m.name AS name ORDER BY name",
    )
    assert [r["name"] for r in rows] == ["refund", "total", "validate"]
    assert graph.query("n", "MATCH (s:Symbol {repo: 'shop'}) RETURN count(s) AS n") == [{"n": 41}]
    assert graph.query("run", "MATCH (r:Repository {key: 'shop'}) RETURN r.run_id AS r") == [
        {"r": "r2"}
    ]


def changed_shop() -> list[FileFacts | SkippedFile]:
    """``shop`` after a commit that deletes web/http.ts, turns the Go function ``run`` into a
    struct, drops web/api.ts's ``axios`` import (and its external module) and fixes the parse
    error that shop/__init__.py had before (see :func:`broken_shop`)."""
    out: list[FileFacts | SkippedFile] = []
    for item in shop_repo(extra_order_method=True):
        if isinstance(item, FileFacts) and item.path == "web/http.ts":
            continue
        if isinstance(item, FileFacts) and item.path == "cmd/run.go":
            item = dataclasses.replace(
                item, symbols=[dataclasses.replace(item.symbols[0], kind="struct")]
            )
        if isinstance(item, FileFacts) and item.path == "web/api.ts":
            item = dataclasses.replace(
                item,
                imports=item.imports[:1],
                calls=[c for c in item.calls if c.receiver != "axios"],
            )
        out.append(item)
    return out


def broken_shop() -> list[FileFacts | SkippedFile]:
    return [
        dataclasses.replace(f, parse_status="partial", parse_error="boom")
        if isinstance(f, FileFacts) and f.path == "shop/__init__.py"
        else f
        for f in shop_repo()
    ]


def test_replacing_in_place_equals_a_fresh_publish(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """Removed files, symbols and external modules are deleted, a changed kind changes the
    label, stale properties go: the graph equals the new model published into an empty
    database, property for property and edge for edge."""
    publish(graph, settings, tmp_path, SHOP, broken_shop(), "r1")
    publish(graph, settings, tmp_path, OTHER, other_repo(), "o1")
    other_before = snapshot(graph, "other")
    stats = publish(
        graph, settings, tmp_path, SHOP, changed_shop(), "r2", batch_size=4, delta=False
    )
    assert stats.mode == "full"
    in_place = snapshot(graph, "shop")
    assert stats.deleted_nodes == 4  # web/http.ts, its module and fetchJson, module axios
    assert stats.dropped_rows == 0
    assert snapshot(graph, "other") == other_before
    labels = graph.query(
        "labels", "MATCH (s:Symbol {qualified_name: 'cmd.run.run'}) RETURN labels(s) AS l"
    )
    assert [sorted(r["l"]) for r in labels] == [["Struct", "Symbol"]]
    init = graph.query(
        "init", "MATCH (f:File {key: 'shop|shop/__init__.py'}) RETURN properties(f) AS p"
    )
    assert "parse_error" not in init[0]["p"] and init[0]["p"]["parse_status"] == "ok"
    graph.query("wipe", "MATCH (n) WHERE n.repo = 'shop' OR n.key = 'shop' DETACH DELETE n")
    fresh = publish(graph, settings, tmp_path, SHOP, changed_shop(), "r2")
    assert fresh.first_publish and not stats.first_publish  # CREATE forms against upserts
    assert fresh.deleted_nodes == 0 and fresh.deleted_edges == 0
    assert snapshot(graph, "shop") == in_place
    assert (fresh.nodes, fresh.edges) == (stats.nodes, stats.edges)


def test_a_repository_without_nodes_is_published_with_creates(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """The CREATE forms are taken exactly when the repository has no node in the graph, also
    when its :Repository node survives (every file removed, say); they build the same graph as
    the upserts, and the upserts (which would duplicate nothing) follow a publish."""
    first = publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1", batch_size=5)
    assert first.first_publish and first.dropped_rows == 0
    created = snapshot(graph, "shop")
    again = publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1", batch_size=5, delta=False)
    assert not again.first_publish
    assert (again.nodes, again.edges) == (first.nodes, first.edges)
    assert snapshot(graph, "shop") == created
    graph.query("remove nodes", "MATCH (n) WHERE n.repo = 'shop' DETACH DELETE n")
    assert graph.query("repo", "MATCH (r:Repository {key: 'shop'}) RETURN count(r) AS n") == [
        {"n": 1}
    ]
    third = publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1")
    assert third.first_publish
    assert snapshot(graph, "shop") == created


@pytest.mark.parametrize("where", ["midway", "before_commit"])
def test_failure_leaves_previous_graph_intact(
    graph: Graph, settings: Settings, tmp_path: Path, where: str
) -> None:
    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1")
    publish(graph, settings, tmp_path, OTHER, other_repo(), "o1")
    before = snapshot(graph, "shop"), snapshot(graph, "other")
    seen: list[int] = []

    def on_batch(n: int) -> None:
        seen.append(n)
        if where == "midway" and n == 5:
            raise Boom("injected")

    def before_commit(**_: object) -> None:
        if where == "before_commit":
            raise Boom("injected")

    faults = Faults()
    faults.arm("publish.batch", on_batch)
    faults.arm("publish.before_commit", before_commit)

    with pytest.raises(Boom):
        publish(
            graph,
            settings,
            tmp_path,
            SHOP,
            shop_repo(extra_order_method=True),
            "r2",
            batch_size=3,
            faults=faults,
            delta=False,  # a full publish: many batches to fail between
        )
    assert len(seen) >= 5
    assert (snapshot(graph, "shop"), snapshot(graph, "other")) == before
    from semgraph.graph.reader import GraphReader

    answer = GraphReader(graph).callers("Base.save", repo="shop")
    assert [e["qualified_name"] for e in answer.edges] == ["shop.models.Order.total"]


def test_concurrent_readers_never_see_a_mix(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """Reader loops assert the per-run invariant (run r1: 40 symbols, no ``refund``; run r2:
    41 symbols with ``refund``) while r2 is published in small batches and held open.

    Every symbol scan must be exactly one run's graph — never a mix of r1 and r2. Which run a
    scan saw is not pinned to the run id read around it: the Neo4j test server is
    read-committed and applies a commit's node and index changes in steps, so a scan just
    after the run id turned r2 was once seen (in CI) still matching r1's complete graph
    through the index. That is an old-but-whole answer, not a mix, so it is allowed here;
    Memgraph, in production, gives each query a snapshot."""
    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1")
    expected = {"r1": (40, 0), "r2": (41, 1)}
    stop = threading.Event()
    reads_during: list[str] = []
    violations: list[Any] = []
    publishing = threading.Event()
    enough_reads = threading.Event()
    run_query = "MATCH (r:Repository {key: 'shop'}) RETURN r.run_id AS run"
    scan_query = (
        "MATCH (s:Symbol {repo: 'shop'}) "
        "RETURN count(s) AS n, sum(CASE WHEN s.name = 'refund' THEN 1 ELSE 0 END) AS refund"
    )

    def reader() -> None:
        while not stop.is_set():
            before = graph.query("run before", run_query)[0]["run"]
            scan = graph.query("invariant", scan_query)[0]
            after = graph.query("run after", run_query)[0]["run"]
            state = (scan["n"], scan["refund"])
            if state not in expected.values():
                violations.append((before, state, after))
            if publishing.is_set() and not stop.is_set():
                reads_during.append(before)
                if len(reads_during) >= 10:
                    enough_reads.set()

    def on_batch(n: int) -> None:
        publishing.set()
        if n == 10:  # hold the open transaction until readers have looked several times
            assert enough_reads.wait(timeout=60)

    faults = Faults()
    faults.arm("publish.batch", on_batch)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        publish(
            graph,
            settings,
            tmp_path,
            SHOP,
            shop_repo(extra_order_method=True),
            "r2",
            batch_size=4,
            faults=faults,
            delta=False,  # a full publish: the transaction spans many batches
        )
        final = graph.query("final", run_query)
        seen_after = graph.query("after", scan_query)[0]
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
    assert violations == []
    assert reads_during.count("r1") >= 10  # readers ran while the transaction was open
    assert final == [{"run": "r2"}]
    assert (seen_after["n"], seen_after["refund"]) == expected["r2"]


def test_server_memory_refusal_becomes_graph_too_large(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """A refusal in the middle of the stream (batch 3, injected as the driver error Neo4j
    sends) rolls back; the real server's refusal is met in test_graph_too_large.py."""
    import neo4j.exceptions

    def refuse(n: int) -> None:
        if n == 3:
            raise neo4j.exceptions.Neo4jError._hydrate_neo4j(
                code="Neo.TransientError.General.MemoryPoolOutOfMemoryError",
                message="The allocation of an extra 2.0 MiB would use more than the limit "
                "10.0 MiB. db.memory.transaction.total.max threshold reached",
            )

    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1")
    before = snapshot(graph, "shop")
    faults = Faults()
    faults.arm("publish.batch", refuse)
    with pytest.raises(GraphTooLarge, match=r"db\.memory\.transaction"):
        publish(graph, settings, tmp_path, SHOP, shop_repo(True), "r2", batch_size=3, faults=faults)
    assert snapshot(graph, "shop") == before


@pytest.fixture
def shop_resolution(tmp_path: Path) -> Iterator[Resolution]:
    files = shop_repo()
    with resolve(lambda: iter(files), "shop", tmp_path / "res") as res:
        yield res


def test_publish_rejects_a_bad_batch_size(
    graph: Graph, settings: Settings, shop_resolution: Resolution
) -> None:
    with pytest.raises(GraphInputError, match="batch_size"):
        GraphWriter(graph, settings).publish(
            SHOP,
            shop_resolution,
            run_id="x",
            fingerprint="f",
            now=1.0,
            batch_size=-1,
        )
    assert graph.query("n", "MATCH (r:Repository) RETURN count(r) AS n") == [{"n": 0}]
