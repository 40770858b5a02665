"""Whether two resolutions of the same files are the same: every table the graph writer and
a later resolution read, every count, every bundle digest. What proves the incremental
resolution (:mod:`semgraph.resolve.incremental`) equal to a full one.

Rows are compared as sorted lists, except where a reader depends on their order: a file's
import bindings (the first re-export that matches wins) and a class's resolved bases (the
first base that has a member wins) are compared in their insertion order.
"""

from __future__ import annotations

from typing import Any

from semgraph.resolve.resolution import Resolution

_QUERIES = {
    "files": "SELECT path, key, module, language, family, dir, code, blob_sha, loc, "
    "size_bytes, parse_status, parse_error, bundle FROM files",
    "symbols": "SELECT key, path, qn, name, kind, parent_key, family, start_line, end_line, "
    "toplevel, signature FROM symbols",
    "call_edges": "SELECT src_key, dst_key, line, tier, candidates FROM call_edges",
    "import_edges": "SELECT src_path, dst_kind, dst, line FROM import_edges",
    "import_unresolved": "SELECT src_path, module, line FROM import_unresolved",
    "sym_stats": "SELECT key, sum(unresolved), sum(external), sum(ambiguous), sum(possible) "
    "FROM sym_stats GROUP BY key",
    "ambiguous_unlinked": "SELECT name, family, mode, path FROM ambiguous_unlinked",
    "skipped": "SELECT path, reason FROM skipped",
    "modsuffix": "SELECT suffix, path, family FROM modsuffix",
    "dirsuffix": "SELECT suffix, dir, family FROM dirsuffix",
}
_ORDERED = {  # (group, row) in the order a reader meets them
    "bindings": "SELECT path, local, kind, target, scope_key FROM bindings ORDER BY rowid",
    "inherits": "SELECT child_key, parent_key FROM inherits ORDER BY rowid",
}


def _rows(res: Resolution, sql: str) -> list[tuple[Any, ...]]:
    return sorted(res.table.db.execute(sql).fetchall(), key=repr)


def _grouped(res: Resolution, sql: str) -> dict[Any, list[tuple[Any, ...]]]:
    out: dict[Any, list[tuple[Any, ...]]] = {}
    for row in res.table.db.execute(sql):
        out.setdefault(row[0], []).append(tuple(row[1:]))
    return out


def differences(a: Resolution, b: Resolution, *, limit: int = 5) -> list[str]:
    """What differs between ``a`` and ``b`` (empty: equal), at most ``limit`` lines a table."""
    out: list[str] = []
    if a.counts != b.counts:
        out.append(f"counts: {a.counts} != {b.counts}")
    for name, sql in _QUERIES.items():
        ra, rb = _rows(a, sql), _rows(b, sql)
        if ra != rb:
            sa, sb = set(ra), set(rb)
            only_a = sorted(sa - sb, key=repr)[:limit]
            only_b = sorted(sb - sa, key=repr)[:limit]
            out.append(f"{name}: only in a {only_a}; only in b {only_b} ({len(ra)}/{len(rb)})")
    for name, sql in _ORDERED.items():
        ga, gb = _grouped(a, sql), _grouped(b, sql)
        keys = sorted(set(ga) | set(gb), key=repr)
        diff = [k for k in keys if ga.get(k) != gb.get(k)]
        for key in diff[:limit]:
            out.append(f"{name}[{key}]: {ga.get(key)} != {gb.get(key)}")
    return out
