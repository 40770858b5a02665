"""resolve/compare.py: two resolutions compared table by table and count by count."""

from __future__ import annotations

from pathlib import Path

from semgraph.resolve.compare import TABLES, differences
from semgraph.resolve.resolution import Resolution
from semgraph.resolve.resolver import resolve
from tests.graph_repos import shop_repo


def _resolve(tmp_path: Path, name: str, extra: bool = False) -> Resolution:
    files = shop_repo(extra_order_method=extra)
    return resolve(lambda: iter(files), "shop", tmp_path / name)


def test_the_same_input_resolves_to_no_difference(tmp_path: Path) -> None:
    with _resolve(tmp_path, "a") as a, _resolve(tmp_path, "b") as b:
        assert a.table.db.execute("SELECT count(*) FROM call_edges").fetchone()[0] > 10
        assert differences(a, b) == []


def test_a_changed_model_differs_in_its_tables(tmp_path: Path) -> None:
    with _resolve(tmp_path, "a") as a, _resolve(tmp_path, "b", extra=True) as b:
        found = differences(a, b)
    tables = {line.split(":", 1)[0] for line in found}
    assert {"symbols", "files"} <= tables  # a new method, and its file's bundle digest
    assert any(line.startswith("symbols: only in the second:") for line in found)


def test_one_changed_row_is_named_on_both_sides(tmp_path: Path) -> None:
    with _resolve(tmp_path, "a") as a, _resolve(tmp_path, "b") as b:
        src, dst, line = b.table.db.execute(
            "SELECT src_key, dst_key, line FROM call_edges WHERE tier = 'module' LIMIT 1"
        ).fetchone()
        b.table.db.execute(
            "UPDATE call_edges SET tier = 'unique' WHERE src_key = ? AND dst_key = ? AND line = ?",
            (src, dst, line),
        )
        found = differences(a, b)
    assert found[0] == "call_edges: 1 row(s) only in the first, 1 only in the second"
    assert found[1] == f"call_edges: only in the first: {(src, dst, line, 'module', 1)!r}"
    assert found[2] == f"call_edges: only in the second: {(src, dst, line, 'unique', 1)!r}"
    assert len(found) == 3


def test_a_duplicated_row_counts(tmp_path: Path) -> None:
    """Tables are multisets: an edge written twice is a difference."""
    with _resolve(tmp_path, "a") as a, _resolve(tmp_path, "b") as b:
        b.table.db.execute("INSERT INTO inherits SELECT * FROM inherits LIMIT 1")
        found = differences(a, b)
    assert found[0] == "inherits: 0 row(s) only in the first, 1 only in the second"


def test_counts_are_compared(tmp_path: Path) -> None:
    with _resolve(tmp_path, "a") as a, _resolve(tmp_path, "b") as b:
        b.tier_counts = {**b.tier_counts, "receiver": b.tier_counts.get("receiver", 0) + 1}
        b.reason_counts = {**b.reason_counts, "no_member": 99}
        found = differences(a, b)
    assert [line.split(":", 1)[0] for line in found] == ["tier_counts", "reason_counts"]


def test_every_result_table_is_compared(tmp_path: Path) -> None:
    """A table the resolver writes that the comparison ignores would hide a difference."""
    with _resolve(tmp_path, "a") as a:
        written = {
            name
            for (name,) in a.table.db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
    inputs = {
        "skipped",
        "bases",
        "modsuffix",
        "dirsuffix",
        "imports_raw",
        "calls_raw",
        "exports_raw",
    }
    inputs |= {"go_modules", "packaging", "typed_raw", "file_parts"}  # parts: in the bundles
    # the incremental resolver's bookkeeping (its cache's ledger, per-file counts summed into
    # the counts compared): read by the next incremental resolution, not the graph's result
    inputs |= {"inc_files", "inc_renamed", "inc_tokens", "inc_meta", "file_counts"}
    assert written - inputs == set(TABLES)
