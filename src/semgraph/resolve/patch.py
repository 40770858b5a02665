"""The symbol table's rows of some files replaced, and their results deleted, for an
incremental resolution (:mod:`semgraph.resolve.incremental`); the counts summed again from
the per-file counts (:mod:`semgraph.resolve.ledger`).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from typing import Any

from semgraph.resolve import ledger
from semgraph.resolve.resolution import Resolution
from semgraph.resolve.symtab import SymbolTable

_RAW_TABLES = (
    *("files", "symbols", "bases", "modsuffix", "imports_raw", "calls_raw"),
    *("typed_raw", "packaging", "exports_raw"),
)
_PATH_RESULTS = (
    ("import_edges", "src_path"),
    ("import_unresolved", "src_path"),
    ("bindings", "path"),
    ("file_parts", "path"),
    ("ambiguous_unlinked", "path"),
    ("file_counts", "path"),
    ("external_sites", "path"),
    ("site_tokens", "path"),
    ("file_exports", "path"),
)
_KEY_RESULTS = (("call_edges", "src_key"), ("sym_stats", "key"), ("inherits", "child_key"))


def base_names(keys: set[str], db: sqlite3.Connection) -> set[str]:
    """The names the bases of the classes ``keys`` are written with."""
    out: set[str] = set()
    for key in keys:
        for (text,) in db.execute("SELECT text FROM bases WHERE child_key = ?", (key,)):
            out |= ledger.idents(text)
    return out


def resolved_bases(db: sqlite3.Connection, path: str) -> list[tuple[str, str]]:
    """The resolved bases (child, parent) of the classes of ``path``, in written order."""
    rows = db.execute(
        "SELECT i.child_key, i.parent_key FROM inherits i JOIN symbols s "
        "ON s.key = i.child_key WHERE s.path = ? ORDER BY i.rowid",
        (path,),
    ).fetchall()
    return [(str(child), str(parent)) for child, parent in rows]


def delete_results(db: sqlite3.Connection, paths: list[str]) -> list[tuple[str, str]]:
    """Everything the resolution produced for ``paths`` (keys read from their symbols);
    returns the resolved bases it deleted."""
    inherits: list[tuple[str, str]] = []
    for path in paths:
        inherits += resolved_bases(db, path)
        for table, column in _PATH_RESULTS:
            db.execute(f"DELETE FROM {table} WHERE {column} = ?", (path,))
        for table, column in _KEY_RESULTS:
            db.execute(
                f"DELETE FROM {table} WHERE {column} IN (SELECT key FROM symbols WHERE path = ?)",
                (path,),
            )
    return inherits


def inherits_changed(
    db: sqlite3.Connection, old: list[tuple[str, str]], paths: list[str]
) -> set[str]:
    """The classes (and their old and new bases) whose resolved bases differ from ``old``."""
    new = [pair for path in paths for pair in resolved_bases(db, path)]
    before: dict[str, list[str]] = {}
    after: dict[str, list[str]] = {}
    for child, parent in old:
        before.setdefault(child, []).append(parent)
    for child, parent in new:
        after.setdefault(child, []).append(parent)
    out: set[str] = set()
    for child in set(before) | set(after):
        if before.get(child) != after.get(child):
            out |= {child, *before.get(child, []), *after.get(child, [])}
    return out


def replace_raw(db: sqlite3.Connection, small: SymbolTable, touched: list[str]) -> None:
    """The touched files' rows of the symbol table replaced by the small table's."""
    small.db.commit()
    for path in touched:
        for table in _RAW_TABLES:
            db.execute(f"DELETE FROM {table} WHERE path = ?", (path,))
    db.commit()
    db.execute("ATTACH DATABASE ? AS c", (str(small.path),))
    try:
        for table in ("files", "symbols"):
            db.execute(f"INSERT OR IGNORE INTO {table} SELECT * FROM c.{table} ORDER BY rowid")
        for table in ("bases", "modsuffix", "typed_raw", "packaging", "exports_raw"):
            db.execute(f"INSERT INTO {table} SELECT * FROM c.{table} ORDER BY rowid")
        for table, cols in (
            ("imports_raw", "path, module, names, alias, line"),
            ("calls_raw", "path, enclosing, callee, receiver, line, args"),
        ):
            db.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM c.{table} ORDER BY id")
        db.commit()
    finally:
        db.execute("DETACH DATABASE c")


def sum_counts(db: sqlite3.Connection, res: Resolution) -> None:
    """The resolution's counts as the sums of the per-file counts."""
    targets: dict[str, Any] = {
        "imports": res.import_counts,
        "calls": res.call_counts,
        "tiers": res.tier_counts,
        "reasons": res.reason_counts,
        "ambiguous": res.ambiguous_counts,
        "inherits": res.inherits_counts,
    }
    for table in targets.values():
        table.clear()
    for (lang,) in db.execute("SELECT DISTINCT language FROM files WHERE code = 1"):
        res.import_counts[lang] = {}
        res.call_counts[lang] = {}
    totals: Counter[tuple[str, str, str]] = Counter()
    for what, lang, key, n in db.execute(
        "SELECT what, lang, key, sum(n) FROM file_counts GROUP BY what, lang, key"
    ):
        totals[(what, lang, key)] += n
    for (what, lang, key), n in sorted(totals.items()):
        if not n:
            continue
        table = targets[what]
        if what in ("imports", "calls"):
            table.setdefault(lang, {})[key] = n
        else:
            table[key] = n
