"""Whether two resolutions are the same: every result table and every count
(:func:`differences`). The proof that a faster or incremental resolve equals a full one.

Tables are compared as multisets of rows (the order rows were inserted in is not part of the
result: the writer and the parity check read them sorted or grouped); the counts, by value.
Where a reader does depend on the order (a file's import bindings: the first re-export that
matches wins; a class's resolved bases: the first base that has a member wins), the rows of
each group are also compared in insertion order, and the inputs a later (incremental)
resolution reads (every column of ``files`` and ``symbols``, ``skipped``, the suffix tables)
are compared too (merged from the incremental resolver's comparison, branch ``incremental``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from semgraph.resolve.resolution import Resolution

# every table :func:`semgraph.resolve.resolver.resolve` writes or reads back for the model,
# with the columns that are its result (``files``: the bundle digest of each file)
TABLES: dict[str, str] = {
    "call_edges": "src_key, dst_key, line, tier, candidates",
    "import_edges": "src_path, dst_kind, dst, line",
    "import_unresolved": "src_path, module, line",
    "bindings": "path, local, kind, target, scope_key",
    "inherits": "child_key, parent_key",
    "sym_stats": "key, unresolved, external, ambiguous, possible",
    "ambiguous_unlinked": "name, family, mode",
    "files": "path, bundle",
    "symbols": "key, path, qn, name, kind, parent_key, start_line, end_line",
    "go_reach": "iface, dir, type",
    "external_sites": "path, src_key, line, module, local, rest",
    "site_tokens": "path, token",
    "file_exports": "path, entry",
}
COUNTS = (
    "repo_key",
    "call_counts",
    "tier_counts",
    "reason_counts",
    "ambiguous_counts",
    "import_counts",
    "inherits_counts",
    "files_by_language",
    "files_by_status",
    "skipped",
    "symbols",
    "ambiguous_cap",
)
EXAMPLES = 5  # rows named per table and side
# the inputs a later resolution reads, every column
INPUTS: dict[str, str] = {
    "files": "path, key, module, language, family, dir, code, blob_sha, loc, size_bytes, "
    "parse_status, parse_error, bundle",
    "symbols": "key, path, qn, name, kind, parent_key, family, start_line, end_line, toplevel, "
    "signature",
    "skipped": "path, reason",
    "modsuffix": "suffix, path, family",
    "dirsuffix": "suffix, dir, family",
}
# (group, row...) where a reader takes the first match: compared in insertion order
ORDERED: dict[str, str] = {
    "bindings": "path, local, kind, target, scope_key",
    "inherits": "child_key, parent_key",
}


def differences(a: Resolution, b: Resolution) -> list[str]:
    """Every way ``a`` and ``b`` differ, one line each (empty when they are equal): a count
    that differs, or the rows of a table found on one side only (a few named, all counted)."""
    out = [
        f"{name}: {getattr(a, name)!r} != {getattr(b, name)!r}"
        for name in COUNTS
        if getattr(a, name) != getattr(b, name)
    ]
    for table, columns in [*TABLES.items(), *INPUTS.items()]:
        rows_a = _rows(a, table, columns)
        rows_b = _rows(b, table, columns)
        if rows_a == rows_b:
            continue
        only_a, only_b = rows_a - rows_b, rows_b - rows_a
        out.append(
            f"{table}: {sum(only_a.values())} row(s) only in the first, "
            f"{sum(only_b.values())} only in the second"
        )
        for side, rows in (("first", only_a), ("second", only_b)):
            out += [f"{table}: only in the {side}: {row!r}" for row in sorted(rows)[:EXAMPLES]]
    for table, columns in ORDERED.items():
        groups_a, groups_b = _groups(a, table, columns), _groups(b, table, columns)
        keys = sorted(
            k for k in set(groups_a) | set(groups_b) if groups_a.get(k) != groups_b.get(k)
        )
        out += [
            f"{table}[{key!r}] in order: {groups_a.get(key)!r} != {groups_b.get(key)!r}"
            for key in keys[:EXAMPLES]
        ]
    return out


def _groups(res: Resolution, table: str, columns: str) -> dict[Any, list[tuple[Any, ...]]]:
    out: dict[Any, list[tuple[Any, ...]]] = {}
    sql = f"SELECT {columns} FROM {table} ORDER BY rowid"
    for row in res.table.db.execute(sql):
        out.setdefault(row[0], []).append(tuple(row[1:]))
    return out


def _rows(res: Resolution, table: str, columns: str) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in res.table.db.execute(f"SELECT {columns} FROM {table}"))
