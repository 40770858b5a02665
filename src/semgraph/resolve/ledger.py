"""What a resolution keeps for the next one (:mod:`semgraph.resolve.incremental`): per-file
counts (so totals are sums), each file's facts digest and row digest, each file's *tokens*
(the identifiers its resolution can look up), the source roots and the renamed modules, and
a tag naming the resolver version and options. Written by every resolution, full or
incremental, into the same SQLite file as the result tables.

A file's tokens are every identifier of its call sites' callee and receiver text, of its
imports (module path segments, names, aliases), of its base texts and of its typed bindings'
texts. They do not depend on how a lookup is done: a change to another file can only change
this file's resolution through a name it mentions (the closure rule of
:mod:`semgraph.resolve.surface`).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from semgraph.model import FileFacts

# bump when the resolver's output for the same input may change (a cache from another
# version is stale: a full resolve)
RESOLVER_VERSION = "resolve-9"  # 2: Go dispatch through external interfaces (go_reach);
# 3: test-only conversions reach only test files; a package directory's family is its code's;
# external call sites recorded for the cross-repository link; 4: self/super sites
# inherited through the file's own classes; 5: sites through typed values and classes of other
# files, with their tokens (resolve.xsites); 6: JS/TS sites name the export they reach, and
# the exports of JS/TS files (File.reexports); 7: C#/Ruby/Swift calls into a namespace imported
# whole are external, a site per candidate namespace (resolve.open_sites); 8: a Go import binds
# the name the Go tools assume (go-runewidth -> runewidth, yaml.v3 -> yaml, /v2 -> its parent);
# 9: a name alone is a candidate, not a resolution (tiers.GLOBAL_NAME_FAMILIES), Java/Kotlin/
# Scala classes of the same package are in scope, the platform's globals are external; a Java
# wildcard import binds every directory of its package (main and test roots)

LEDGER_DDL = """
CREATE TABLE IF NOT EXISTS file_counts (path TEXT, what TEXT, lang TEXT, key TEXT, n INTEGER);
CREATE INDEX IF NOT EXISTS file_counts_path ON file_counts (path);
CREATE TABLE IF NOT EXISTS inc_files (path TEXT PRIMARY KEY, row_digest BLOB, facts BLOB);
CREATE TABLE IF NOT EXISTS inc_tokens (token TEXT, path TEXT);
CREATE INDEX IF NOT EXISTS inc_tokens_token ON inc_tokens (token);
CREATE INDEX IF NOT EXISTS inc_tokens_path ON inc_tokens (path);
CREATE TABLE IF NOT EXISTS inc_renamed (path TEXT PRIMARY KEY, prefix TEXT);
CREATE TABLE IF NOT EXISTS inc_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE INDEX IF NOT EXISTS ambiguous_unlinked_path ON ambiguous_unlinked (path);
CREATE INDEX IF NOT EXISTS file_parts_path ON file_parts (path);
CREATE INDEX IF NOT EXISTS bindings_path ON bindings (path);
"""
# tables a reader of the resolution adds (Resolution.prepare_lookups): never carried over
READER_TABLES = ("sym_stats_agg", "file_stats_agg")

IDENT = re.compile(r"[A-Za-z_$][\w$]*")
CountKey = tuple[str, str, str, str]  # (path, what, lang, key)


def idents(*texts: str | None) -> set[str]:
    out: set[str] = set()
    for text in texts:
        if text:
            out.update(IDENT.findall(text))
    return out


def row_digest(facts: FileFacts) -> bytes:
    """What decides a file's raw rows: its path, content and how it parsed (the parser's
    version is in the tag). Equal digests: the file's rows in the symbol table are equal."""
    material = (
        facts.path,
        facts.blob_sha,
        facts.language,
        facts.module,
        str(facts.parse_status),
        facts.parse_error,
        facts.line_count,
        facts.size_bytes,
    )
    return hashlib.blake2b(repr(material).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def tokens_of(db: sqlite3.Connection, path: str) -> set[str]:
    """Every identifier ``path``'s resolution reads by name (see the module docstring)."""
    out: set[str] = set()
    for callee, receiver in db.execute(
        "SELECT callee, receiver FROM calls_raw WHERE path = ?", (path,)
    ):
        out |= idents(callee, receiver)
    for module, names, alias in db.execute(
        "SELECT module, names, alias FROM imports_raw WHERE path = ?", (path,)
    ):
        out |= idents(module, alias, *json.loads(names or "[]"))
    for (text,) in db.execute("SELECT text FROM bases WHERE path = ?", (path,)):
        out |= idents(text)
    for (text,) in db.execute("SELECT text FROM typed_raw WHERE path = ?", (path,)):
        out |= idents(text)
    return out


def record_files(
    db: sqlite3.Connection, rows: Iterable[tuple[str, bytes]], facts_by_path: dict[str, bytes]
) -> None:
    """Row digests and facts digests of ``rows`` (path, row digest), and their tokens."""
    rows = list(rows)
    paths = [p for p, _ in rows]
    db.executemany("DELETE FROM inc_files WHERE path = ?", [(p,) for p in paths])
    db.executemany("DELETE FROM inc_tokens WHERE path = ?", [(p,) for p in paths])
    db.executemany(
        "INSERT INTO inc_files VALUES (?,?,?)",
        [(p, d, facts_by_path.get(p)) for p, d in rows],
    )
    for path in paths:
        db.executemany(
            "INSERT INTO inc_tokens VALUES (?,?)", [(t, path) for t in sorted(tokens_of(db, path))]
        )


def write_counts(db: sqlite3.Connection, counts: Counter[CountKey]) -> None:
    db.executemany(
        "INSERT INTO file_counts VALUES (?,?,?,?,?)", [(*k, n) for k, n in counts.items()]
    )


def write_meta(db: sqlite3.Connection, **values: str) -> None:
    db.executemany("INSERT OR REPLACE INTO inc_meta VALUES (?,?)", list(values.items()))


def read_meta(db: sqlite3.Connection) -> dict[str, str]:
    return dict(db.execute("SELECT key, value FROM inc_meta").fetchall())


def tag(ambiguous_cap: int, extra: str) -> str:
    """The cache's compatibility tag: the resolver version, its options and the caller's
    fingerprint of the parser (grammars, model)."""
    return f"{RESOLVER_VERSION}|cap={ambiguous_cap}|{extra}"


def take(previous: Path, target: Path, *, consume: bool) -> None:
    """Put the previous resolution at ``target``: a rename when it may be consumed (a copy
    across file systems), else a copy."""
    if consume:
        try:
            previous.replace(target)
            return
        except OSError:
            pass  # another file system: copy
    shutil.copyfile(previous, target)
