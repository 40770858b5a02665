"""The delta publish against the real Bolt server: it writes what changed and nothing else,
and whenever the published state on disk cannot be trusted (missing, corrupt, another run's,
not saved, or the graph changed behind its back) the publish is a full one, never a wrong
delta."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.faults import Faults
from semgraph.graph import pubstate
from semgraph.graph.pubstate import state_path
from semgraph.model import FileFacts, SkippedFile
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


@pytest.mark.parametrize(
    "damage",
    ["garbage", "empty", "truncated", "other_run", "other_version", "missing"],
)
def test_an_untrustworthy_state_means_a_full_publish(
    graph: Graph, settings: Settings, tmp_path: Path, damage: str
) -> None:
    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1")
    path = state_path(settings, "shop")
    if damage == "garbage":
        path.write_bytes(b"\x00not sqlite\xff" * 1000)
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:2048])
    elif damage == "missing":
        path.unlink()
    else:
        import sqlite3

        db = sqlite3.connect(path)
        key = "run_id" if damage == "other_run" else "rows_version"
        db.execute("UPDATE meta SET value = 'x' WHERE key = ?", (key,))
        db.commit()
        db.close()
    stats = publish(graph, settings, tmp_path, SHOP, with_util_helper(), "r2")
    assert stats.mode == "full" and stats.dropped_rows == 0
    expected = fresh_snapshot(graph, settings, tmp_path, with_util_helper(), "r2")
    assert snapshot(graph, "shop") == expected
    # the full publish left a good state: the next one is a delta again
    graph.query("wipe", "MATCH (n) WHERE n.repo = 'shop' OR n.key = 'shop' DETACH DELETE n")
    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r3")
    assert publish(graph, settings, tmp_path, SHOP, with_util_helper(), "r4").mode == "delta"


def test_a_state_not_saved_after_the_commit_means_a_full_publish_next(
    graph: Graph, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish(graph, settings, tmp_path, SHOP, shop_repo(), "r1")

    def disk_full(self: Any, run_id: str) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(pubstate.PublishedState, "commit", disk_full)
        stats = publish(graph, settings, tmp_path, SHOP, with_util_helper(), "r2")
    assert stats.mode == "delta"  # the graph committed: the publish succeeded
    [repo] = graph.query("run", "MATCH (r:Repository {key: 'shop'}) RETURN r.run_id AS r")
    assert repo["r"] == "r2"
    nxt = publish(graph, settings, tmp_path, SHOP, shop_repo(), "r3")
    assert nxt.mode == "full"  # the state still describes r1, not the graph's r2
    assert snapshot(graph, "shop") == fresh_snapshot(graph, settings, tmp_path, shop_repo(), "r3")


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
