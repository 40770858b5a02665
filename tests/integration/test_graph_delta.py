"""The delta publish against the real Bolt server: it writes what changed and nothing else,
from any host (the published state lives in the graph), and whenever that state cannot be
trusted (missing, corrupt, a digest that does not match, another semgraph version's, written
under another repository key, or the graph changed behind its back) the publish is a full
one, with a log line, never a wrong delta."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import pytest

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.faults import Faults
from semgraph.model import FileFacts, SkippedFile
from semgraph.repos.graph import GraphRemoval
from tests.graph_repos import call, shop_repo, sym
from tests.integration.test_graph_publish import SHOP, Boom, publish, snapshot

pytestmark = pytest.mark.integration


def fresh_snapshot(graph: Any, settings: Any, tmp: Path, files: list[Any], run: str) -> Any:
    """The graph a first publish of ``files`` as run ``run`` writes (the repository wiped)."""
    graph.query("wipe", "MATCH (n) WHERE n.repo = 'shop' OR n.key = 'shop' DETACH DELETE n")
    stats = publish(graph, settings, tmp / "fresh", SHOP, files, run, delta=False)
    assert stats.mode == "first"
    return snapshot(graph, "shop")


def calling_helper(defined: bool = True) -> list[FileFacts | SkippedFile]:
    """``shop`` whose service.py calls ``u.helper()`` (``u`` is shop.util); with ``defined``
    shop/util.py defines ``helper``, so the call resolves: adding the definition to one file
    changes an edge of another file that did not change."""
    out: list[FileFacts | SkippedFile] = []
    for item in shop_repo():
        if defined and isinstance(item, FileFacts) and item.path == "shop/util.py":
            item = dataclasses.replace(
                item, symbols=[*item.symbols, sym("function", "shop.util.helper", 13, 14)]
            )
        if isinstance(item, FileFacts) and item.path == "shop/service.py":
            item = dataclasses.replace(
                item, calls=[*item.calls, call("shop.service.process", "helper", 25, "u")]
            )
        out.append(item)
    return out


with_util_helper = calling_helper


def test_a_delta_writes_only_the_change(graph: Graph, settings: Settings, tmp_path: Path) -> None:
    first = publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1")
    assert first.mode == "first" and first.files_changed == 15
    same = publish(graph, settings, tmp_path, SHOP, shop_repo(), "r2")
    assert (same.mode, same.files_changed, same.rows_written) == ("delta", 0, 0)
    stats = publish(graph, settings, tmp_path, SHOP, shop_repo(extra_order_method=True), "r3")
    assert stats.mode == "delta" and stats.dropped_rows == 0
    assert stats.files_changed == 1  # shop/models.py: no other file's rows depend on refund
    # the new method with its DEFINES edge, Order's HAS_METHOD group (2 unlinked, 3 made),
    # refund's one call
    assert stats.nodes == {"Symbol": 1}
    assert stats.edges == {"DEFINES": 1, "HAS_METHOD": 3, "CALLS": 1}
    assert (stats.deleted_edges, stats.deleted_nodes) == (2, 0)
    # models.py's file node and its 8 other symbols, and the 5 external modules
    assert stats.rows_written == 8 and stats.unchanged_nodes == 14
    after = snapshot(graph, "shop")
    assert after == fresh_snapshot(graph, settings, tmp_path, shop_repo(True), "r3")


def test_a_new_definition_changes_edges_of_an_unchanged_file(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    publish(graph, settings, tmp_path, SHOP, calling_helper(defined=False), "r1")
    stats = publish(graph, settings, tmp_path, SHOP, calling_helper(), "r2")
    # util.py (a new symbol) and service.py, whose facts did not change: its call resolves now
    assert stats.mode == "delta" and stats.files_changed == 2
    rows = graph.query(
        "calls",
        "MATCH (:Symbol {qualified_name: 'shop.service.process'})-[e:CALLS]->(t) "
        "RETURN t.qualified_name AS qn, e.tier AS tier",
    )
    assert {"qn": "shop.util.helper", "tier": "import"} in rows
    after = snapshot(graph, "shop")
    assert after == fresh_snapshot(graph, settings, tmp_path, with_util_helper(), "r2")
    # and back: the definition and the edge to it go again
    graph.query("wipe", "MATCH (n) WHERE n.repo = 'shop' OR n.key = 'shop' DETACH DELETE n")
    publish(graph, settings, tmp_path, SHOP, with_util_helper(), "r3")
    back = publish(graph, settings, tmp_path, SHOP, shop_repo(), "r4")
    assert back.mode == "delta" and back.deleted_nodes == 1
    assert snapshot(graph, "shop") == fresh_snapshot(graph, settings, tmp_path, shop_repo(), "r4")


def test_a_failed_publish_leaves_the_state_of_the_last_commit(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1")
    before = snapshot(graph, "shop")

    def fail(**_: object) -> None:
        raise Boom("before commit")

    faults = Faults()
    faults.arm("publish.before_commit", fail)
    with pytest.raises(Boom):
        publish(graph, settings, tmp_path, SHOP, with_util_helper(), "r2", faults=faults)
    assert snapshot(graph, "shop") == before
    again = publish(graph, settings, tmp_path, SHOP, with_util_helper(), "r3")
    assert again.mode == "delta" and not again.delta_fallback  # r1's state was kept
    expected = fresh_snapshot(graph, settings, tmp_path, with_util_helper(), "r3")
    assert snapshot(graph, "shop") == expected


def test_any_host_publishes_the_change_as_a_delta(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """The published state lives in the graph: a worker with another, empty state directory
    (another host, or a restarted pod) writes only the change."""
    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1")
    other_host = settings.model_copy(update={"state_dir": tmp_path / "host-b"})
    stats = publish(graph, other_host, tmp_path, SHOP, shop_repo(extra_order_method=True), "r2")
    assert (stats.mode, stats.files_changed, stats.rows_written) == ("delta", 1, 8)
    assert not (tmp_path / "host-b").exists()  # nothing of the publish is on the host's disk
    assert stats.state_rows == 1  # models.py's state; the externals did not change
    after = snapshot(graph, "shop")
    assert after == fresh_snapshot(graph, settings, tmp_path, shop_repo(True), "r2")


def _tamper(graph: Graph, damage: str) -> None:
    """Damage the published state of shop/util.py (the file the next publish changes), or of
    the repository."""
    util = "MATCH (f:File {key: 'shop|shop/util.py'}) "
    repo = "MATCH (r:Repository {key: 'shop'}) "
    cypher = {
        "rows_garbage": util + "SET f.delta_rows = ['garbage']",
        "rows_not_a_list": util + "SET f.delta_rows = 'garbage'",
        "rows_missing": util + "REMOVE f.delta_rows",
        "row_dropped": util + "SET f.delta_rows = f.delta_rows[0..size(f.delta_rows) - 1]",
        "row_digest": util + "SET f.delta_rows = [f.delta_rows[0]] + "
        "['AAAAAAAAAAAAAAAAAAAAAA' + substring(f.delta_rows[1], 22)] + f.delta_rows[2..]",
        "bundle_digest": util + "SET f.delta_bundle = 'AAAAAAAAAAAAAAAAAAAAAA'",
        "bundle_missing": "MATCH (f:File {key: 'shop|shop/models.py'}) REMOVE f.delta_bundle",
        "externals": repo + "SET r.delta_externals = r.delta_externals[1..]",
        "older_version": repo + "SET r.delta_version = '0/3/' + split(r.delta_version, '/')[2]",
        "newer_version": repo + "SET r.delta_version = '2/' + substring(r.delta_version, 2)",
        "no_version": repo + "REMOVE r.delta_version",
    }[damage]
    graph.query("tamper", cypher)


@pytest.mark.parametrize(
    "damage",
    [
        "rows_garbage",
        "rows_not_a_list",
        "rows_missing",
        "row_dropped",
        "row_digest",
        "bundle_digest",
        "bundle_missing",
        "externals",
        "older_version",
        "newer_version",
        "no_version",
    ],
)
def test_an_untrustworthy_state_means_a_full_publish(
    graph: Graph,
    settings: Settings,
    tmp_path: Path,
    damage: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1")
    _tamper(graph, damage)
    with caplog.at_level(logging.WARNING, logger="semgraph.graph.writer"):
        stats = publish(graph, settings, tmp_path, SHOP, with_util_helper(), "r2")
    assert stats.mode == "full" and stats.dropped_rows == 0 and stats.delta_fallback
    assert any("publishing in full" in r.getMessage() for r in caplog.records)
    expected = fresh_snapshot(graph, settings, tmp_path, with_util_helper(), "r2")
    assert snapshot(graph, "shop") == expected  # the state included: the full one rewrote it
    # the full publish left a good state: the next one is a delta again
    nxt = publish(graph, settings, tmp_path, SHOP, shop_repo(), "r3")
    assert (nxt.mode, nxt.files_changed, nxt.delta_fallback) == ("delta", 2, "")


def test_a_repository_renamed_in_the_graph_is_published_in_full(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """A repository whose graph was re-keyed (renamed, say, by another host's migration)
    carries a state written under the old key: it is not compared against."""
    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1")
    graph.query(
        "rename",
        "MATCH (n) WHERE n.repo = 'shop' "
        "SET n.repo = 'store', n.key = 'store' + substring(n.key, size('shop'))",
    )
    graph.query("rename repo", "MATCH (r:Repository {key: 'shop'}) SET r.key = 'store'")
    store = dataclasses.replace(SHOP, key="store")
    stats = publish(graph, settings, tmp_path, store, with_util_helper(), "r2")
    assert stats.mode == "full" and "another repository key" in stats.delta_fallback
    renamed = snapshot(graph, "store")
    graph.query("wipe", "MATCH (n) WHERE n.repo = 'store' OR n.key = 'store' DETACH DELETE n")
    assert publish(graph, settings, tmp_path / "fresh", store, with_util_helper(), "r2").mode == (
        "first"
    )
    assert renamed == snapshot(graph, "store")


def test_a_publish_after_a_removal_stopped_part_way_is_a_full_one(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """A removal deletes the graph slice by slice; the files it has not reached yet still
    carry their state, which describes symbols already gone: a reindex must not trust it."""
    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1")
    removal = GraphRemoval(graph, "shop", limit=10)
    assert removal.mark_removing("job-1", 1000.0)

    class Stop(Exception):
        pass

    def stop(what: str, deleted: int) -> None:
        if what == "symbols":
            raise Stop(what)

    with pytest.raises(Stop):
        removal.delete_slices(after_slice=stop)
    stats = publish(graph, settings, tmp_path, SHOP, with_util_helper(), "r2")
    assert stats.mode == "full" and "no published state" in stats.delta_fallback
    expected = fresh_snapshot(graph, settings, tmp_path, with_util_helper(), "r2")
    assert snapshot(graph, "shop") == expected


def test_a_delta_leaves_the_state_a_full_publish_leaves(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """The state a delta writes is the one a full publish of the same commit writes, byte for
    byte (so a chain of deltas never drifts)."""
    publish(graph, settings, tmp_path, SHOP, calling_helper(defined=False), "r1")
    publish(graph, settings, tmp_path, SHOP, calling_helper(), "r2")
    state = (
        "MATCH (f:File {repo: 'shop'}) RETURN f.key AS k, f.delta_bundle AS b, f.delta_rows AS r"
    )
    ext = "MATCH (r:Repository {key: 'shop'}) RETURN r.delta_externals AS e, r.delta_version AS v"
    after_delta = sorted(graph.query("state", state), key=str), graph.query("ext", ext)
    fresh_snapshot(graph, settings, tmp_path, calling_helper(), "r2")
    assert (sorted(graph.query("state", state), key=str), graph.query("ext", ext)) == after_delta
    assert all(row["b"] and len(row["r"]) >= 2 for row in after_delta[0])


def test_a_graph_changed_behind_the_state_falls_back_to_a_full_publish(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1")
    graph.query(  # someone deletes a node the next delta must update
        "tamper", "MATCH (s:Symbol {qualified_name: 'shop.util.slugify'}) DETACH DELETE s"
    )
    stats = publish(graph, settings, tmp_path, SHOP, with_util_helper(), "r2")
    assert stats.mode == "full" and "published state promised" in stats.delta_fallback
    expected = fresh_snapshot(graph, settings, tmp_path, with_util_helper(), "r2")
    assert snapshot(graph, "shop") == expected


def test_the_model_row_count_is_what_a_first_publish_writes(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    from semgraph.graph.writer import GraphWriter
    from semgraph.resolve.resolver import resolve

    files = calling_helper()
    with resolve(lambda: iter(files), "shop", tmp_path / "res") as res:
        stats = GraphWriter(graph, settings).publish(
            SHOP, res, run_id="r1", fingerprint="fp", now=1.0
        )
        assert (
            stats.mode == "first" and res.model_rows() == stats.rows_written == 179
        )  # 61 nodes, 118 edges
