"""What :func:`semgraph.resolve.resolver.resolve` produces: the call classes and tiers, the
edges, and :class:`Resolution`, which keeps every result in the symbol table's SQLite file
(the result tables are created by :data:`RESULT_DDL`) and reads it back: streamed for counts,
per file for the graph writer and the parity check.

It is a little over 300 lines because the tables and every query that reads them are one
schema, kept in one place: a reader and the DDL of its table change together.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from semgraph.resolve.symtab import SymbolTable, external_key, file_key

DEFAULT_AMBIGUOUS_CAP = 10


class CallClass(enum.StrEnum):
    RESOLVED = "resolved"
    AMBIGUOUS = "ambiguous"
    EXTERNAL = "external"
    UNRESOLVED = "unresolved"


class Tier(enum.StrEnum):
    SCOPE = "scope"
    IMPORT = "import"
    MODULE = "module"
    RECEIVER = "receiver"
    UNIQUE = "unique"


class Reason(enum.StrEnum):
    """Why a call site stayed ``unresolved`` (counted in ``calls_unresolved_by_reason``)."""

    UNTYPED_LOCAL = "untyped_local"  # the callee or receiver is a local/parameter/attribute
    UNTYPED_EXPRESSION = "untyped_expression"  # f().m(), x[0].m(): a receiver not followed
    NO_MEMBER = "no_member"  # the receiver's class (known) has no such member
    NO_DEFINITION = "no_definition"  # nothing of the repository has that name
    CONVERSION = "conversion"  # Go `Attr(x)`: a defined type's value made, nothing called


AMBIGUOUS_TIER = "ambiguous"  # the tier recorded on CALLS edges to one of several candidates


@dataclass(frozen=True, slots=True)
class CallEdge:
    src_key: str
    dst_key: str
    line: int
    tier: str  # a Tier value, or "ambiguous"
    candidates: int  # 1 when resolved


@dataclass(frozen=True, slots=True)
class ImportEdge:
    src_key: str  # File key
    dst_key: str  # File or ExternalModule key
    dst_label: str  # "File" | "ExternalModule"
    line: int


@dataclass(frozen=True, slots=True)
class SymbolStats:
    """Per symbol: its call sites that did not become a resolved edge, and the number of
    ambiguous call sites elsewhere that name it without an edge (over the cap)."""

    key: str
    calls_unresolved: int
    calls_external: int
    calls_ambiguous: int
    possible_callers: int


@dataclass
class Resolution:
    """The outcome of :func:`resolve`; edges stay on disk, streamed by ``iter_*``."""

    repo_key: str
    table: SymbolTable
    call_counts: dict[str, dict[str, int]] = field(default_factory=dict)  # language -> class
    tier_counts: dict[str, int] = field(default_factory=dict)
    reason_counts: dict[str, int] = field(default_factory=dict)  # unresolved, by Reason
    # ambiguous, by why: several candidates, or one that only its name suggests (name_only)
    ambiguous_counts: dict[str, int] = field(default_factory=dict)
    import_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    inherits_counts: dict[str, int] = field(default_factory=dict)
    files_by_language: dict[str, int] = field(default_factory=dict)
    files_by_status: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    symbols: int = 0
    ambiguous_cap: int = DEFAULT_AMBIGUOUS_CAP
    # how it was made: {"mode": "full" | "incremental", "reason": why full, "files_resolved"}
    incremental: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.table.path

    def close(self) -> None:
        self.table.close()

    def __enter__(self) -> Resolution:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _calls_total(self, cls: CallClass | None = None) -> int:
        return sum(
            n for by_cls in self.call_counts.values() for c, n in by_cls.items() if cls in (None, c)
        )

    @property
    def total_calls(self) -> int:
        return self._calls_total()

    @property
    def resolved_calls(self) -> int:
        return self._calls_total(CallClass.RESOLVED)

    @property
    def rate(self) -> float:
        """Resolved call sites / all call sites (1.0 when there are no call sites)."""
        total = self.total_calls
        return self.resolved_calls / total if total else 1.0

    @property
    def counts(self) -> dict[str, Any]:
        by_class = {c.value: self._calls_total(c) for c in CallClass}
        return {
            "calls": {"total": self.total_calls, **by_class},
            "calls_by_language": self.call_counts,
            "calls_by_tier": self.tier_counts,
            "calls_unresolved_by_reason": self.reason_counts,
            "calls_ambiguous_by_reason": self.ambiguous_counts,
            "imports_by_language": self.import_counts,
            "inherits": self.inherits_counts,
            "files_by_language": self.files_by_language,
            "files_by_status": self.files_by_status,
            "skipped_by_reason": self.skipped,
            "symbols": self.symbols,
            "resolution_rate": round(self.rate, 4),
        }

    def iter_calls(self) -> Iterator[CallEdge]:
        for row in self.table.db.execute(
            "SELECT src_key, dst_key, line, tier, candidates FROM call_edges ORDER BY rowid"
        ):
            yield CallEdge(*row)

    def iter_imports(self) -> Iterator[ImportEdge]:
        for src, dst_kind, dst, line in self.table.db.execute(
            "SELECT src_path, dst_kind, dst, line FROM import_edges ORDER BY rowid"
        ):
            if dst_kind == "external":
                yield ImportEdge(
                    file_key(self.repo_key, src),
                    external_key(self.repo_key, dst),
                    "ExternalModule",
                    line,
                )
            else:
                yield ImportEdge(
                    file_key(self.repo_key, src), file_key(self.repo_key, dst), "File", line
                )

    def iter_externals(self) -> Iterator[tuple[str, str]]:
        """(key, name) of every external module imported by the repository."""
        for (name,) in self.table.db.execute(
            "SELECT DISTINCT dst FROM import_edges WHERE dst_kind = 'external' ORDER BY dst"
        ):
            yield external_key(self.repo_key, name), name

    def iter_inherits(self) -> Iterator[tuple[str, str]]:
        yield from self.table.db.execute(
            "SELECT child_key, parent_key FROM inherits ORDER BY rowid"
        )

    def iter_symbol_stats(self) -> Iterator[SymbolStats]:
        for row in self.table.db.execute(
            "SELECT key, sum(unresolved), sum(external), sum(ambiguous), sum(possible) "
            "FROM sym_stats GROUP BY key ORDER BY key"
        ):
            yield SymbolStats(*row)

    def iter_file_stats(self) -> Iterator[tuple[str, int]]:
        """(File key, unresolved imports) for files with unresolved imports."""
        for path, n in self.table.db.execute(
            "SELECT src_path, count(*) FROM import_unresolved GROUP BY src_path ORDER BY src_path"
        ):
            yield file_key(self.repo_key, path), n

    # -- the graph model, read per file (the graph writer and the parity check) ------------

    def prepare_lookups(self) -> None:
        """Aggregate the per-symbol and per-file statistics once, keyed for lookups."""
        self.table.db.executescript(_LOOKUP_DDL)

    def model_rows(self) -> int:
        """Nodes plus edges a full publish of this model writes (counted, not built)."""
        db = self.table.db
        files, symbols, parented = db.execute(
            "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM symbols), "
            "(SELECT count(*) FROM symbols WHERE parent_key IS NOT NULL)"
        ).fetchone()
        edges = db.execute(
            "SELECT (SELECT count(*) FROM import_edges), (SELECT count(*) FROM inherits), "
            "(SELECT count(*) FROM call_edges), (SELECT count(DISTINCT dst) FROM import_edges "
            "WHERE dst_kind = 'external'), (SELECT count(*) FROM external_sites)"
        ).fetchone()
        # nodes: files, symbols, externals; structure: repository->file, file->symbol, parent
        return int(files * 2 + symbols * 2 + parented + sum(edges))

    def file_bundles(self) -> Iterator[tuple[str, bytes]]:
        """(path, bundle digest) of every parsed file, by path."""
        yield from self.table.db.execute("SELECT path, bundle FROM files ORDER BY path")

    def file_blobs(self) -> Iterator[tuple[str, str]]:
        """(path, blob sha) of every parsed file, by path (what incremental staging compares
        with the graph's files, without decoding the spill again)."""
        for path, blob in self.table.db.execute("SELECT path, blob_sha FROM files ORDER BY path"):
            yield str(path), str(blob)

    def renamed_modules(self) -> dict[str, str]:
        """path -> the source-root prefix (``src.``) resolution dropped from the modules of
        that file, as the graph names its symbols."""
        rows = self.table.db.execute("SELECT path, prefix FROM inc_renamed")
        return {str(path): str(prefix) for path, prefix in rows}

    def file_record(self, path: str) -> tuple[Any, ...] | None:
        """(key, language, blob_sha, loc, size_bytes, parse_status, parse_error) of ``path``."""
        row = self.table.db.execute(
            "SELECT key, language, blob_sha, loc, size_bytes, parse_status, parse_error "
            "FROM files WHERE path = ?",
            (path,),
        ).fetchone()
        return tuple(row) if row is not None else None

    def symbols_of(self, path: str) -> list[tuple[Any, ...]]:
        """(key, qualified name, name, kind, parent key, parent kind, start, end, signature)
        of every symbol of ``path``."""
        return self.table.db.execute(
            "SELECT s.key, s.qn, s.name, s.kind, s.parent_key, p.kind, s.start_line, "
            "s.end_line, s.signature FROM symbols s LEFT JOIN symbols p ON p.key = s.parent_key "
            "WHERE s.path = ? ORDER BY s.rowid",
            (path,),
        ).fetchall()

    def symbol_stats_of(self, path: str) -> dict[str, tuple[int, int, int, int]]:
        """(unresolved, external, ambiguous, possible callers) of the symbols of ``path``
        that have any; needs :meth:`prepare_lookups`."""
        rows = self.table.db.execute(
            "SELECT x.key, x.unresolved, x.external, x.ambiguous, x.possible "
            "FROM symbols s JOIN sym_stats_agg x ON x.key = s.key WHERE s.path = ?",
            (path,),
        )
        return {key: (u, e, a, p) for key, u, e, a, p in rows}

    def unresolved_imports(self, path: str) -> int:
        """Import statements of ``path`` that resolved to nothing; needs :meth:`prepare_lookups`."""
        row = self.table.db.execute(
            "SELECT n FROM file_stats_agg WHERE path = ?", (path,)
        ).fetchone()
        return int(row[0]) if row is not None else 0

    def imports_of(self, path: str) -> list[tuple[str, str, int]]:
        """(dst kind, dst path or module, line) of ``path``'s import edges, sorted."""
        return self.table.db.execute(
            "SELECT dst_kind, dst, line FROM import_edges WHERE src_path = ? "
            "ORDER BY dst_kind, dst, line",
            (path,),
        ).fetchall()

    def inherits_of(self, path: str) -> list[tuple[str, str]]:
        """(child key, parent key) for the classes of ``path``, sorted."""
        return self.table.db.execute(
            "SELECT i.child_key, i.parent_key FROM symbols s JOIN inherits i "
            "ON i.child_key = s.key WHERE s.path = ? ORDER BY i.child_key, i.parent_key",
            (path,),
        ).fetchall()

    def calls_of(self, path: str) -> list[tuple[str, str, int, str, int]]:
        """(src, dst, line, tier, candidates) of every call edge leaving a symbol of ``path``,
        sorted."""
        return self.table.db.execute(
            "SELECT c.src_key, c.dst_key, c.line, c.tier, c.candidates FROM symbols s "
            "JOIN call_edges c ON c.src_key = s.key WHERE s.path = ? "
            "ORDER BY c.src_key, c.dst_key, c.line, c.tier, c.candidates",
            (path,),
        ).fetchall()

    def reexports_of(self, path: str, family: str = "python") -> list[str]:
        """``local\tpath\tmember`` of each module-level ``from .m import name`` binding of
        ``path`` to a member of another file: what a package re-exports. JS/TS:
        what the module's ``export`` statements name (``default``, ``export {a as b}``,
        ``export ... from``; member ``*``: all of a module), resolved by the resolver."""
        if family == "js":
            found = self.table.db.execute(
                "SELECT entry FROM file_exports WHERE path = ?", (path,)
            ).fetchall()
            return sorted({r[0] for r in found})
        rows = self.table.db.execute(
            "SELECT local, target FROM bindings WHERE path = ? AND kind = 'member' "
            "AND scope_key IS NULL",
            (path,),
        ).fetchall()
        return sorted({f"{local}\t{target.replace(chr(0), chr(9), 1)}" for local, target in rows})

    def external_sites_of(self, path: str) -> list[tuple[str, int, str, str, str]]:
        """(src, line, module, local, rest) of the external call sites of ``path`` (issue
        30), sorted."""
        return self.table.db.execute(
            "SELECT src_key, line, module, local, rest FROM external_sites WHERE path = ? "
            "ORDER BY src_key, module, line, local, rest",
            (path,),
        ).fetchall()


RESULT_DDL = """
CREATE TABLE bindings (path TEXT, local TEXT, kind TEXT, target TEXT, scope_key TEXT);
CREATE INDEX bindings_path ON bindings (path);
CREATE TABLE import_edges (src_path TEXT, dst_kind TEXT, dst TEXT, line INTEGER);
CREATE TABLE import_unresolved (src_path TEXT, module TEXT, line INTEGER);
CREATE TABLE inherits (child_key TEXT, parent_key TEXT);
CREATE INDEX inherits_child ON inherits (child_key);
CREATE TABLE call_edges (src_key TEXT, dst_key TEXT, line INTEGER, tier TEXT, candidates INTEGER);
CREATE TABLE sym_stats (key TEXT, unresolved INTEGER, external INTEGER, ambiguous INTEGER,
                        possible INTEGER);
CREATE TABLE ambiguous_unlinked (name TEXT, family TEXT, mode TEXT, path TEXT);
CREATE TABLE file_parts (path TEXT, part BLOB);
CREATE TABLE external_sites (path TEXT, src_key TEXT, line INTEGER, module TEXT, local TEXT,
                             rest TEXT);
CREATE TABLE site_tokens (path TEXT, token TEXT);
CREATE TABLE file_exports (path TEXT, entry TEXT);
"""
# for the writer's per-file reads, built once the edges are all in
EDGE_INDEXES = """
CREATE INDEX call_edges_src ON call_edges (src_key, dst_key, line, tier, candidates);
CREATE INDEX import_edges_src ON import_edges (src_path, dst_kind, dst, line);
CREATE INDEX inherits_pair ON inherits (child_key, parent_key);
CREATE INDEX import_unresolved_src ON import_unresolved (src_path);
CREATE INDEX sym_stats_key ON sym_stats (key);
CREATE INDEX external_sites_path ON external_sites (path, src_key, line, module, local, rest);
CREATE INDEX site_tokens_path ON site_tokens (path);
CREATE INDEX site_tokens_token ON site_tokens (token);
CREATE INDEX file_exports_path ON file_exports (path);
"""

_LOOKUP_DDL = """
CREATE TABLE IF NOT EXISTS sym_stats_agg AS
  SELECT key, sum(unresolved) AS unresolved, sum(external) AS external,
         sum(ambiguous) AS ambiguous, sum(possible) AS possible
  FROM sym_stats GROUP BY key;
CREATE UNIQUE INDEX IF NOT EXISTS sym_stats_agg_key ON sym_stats_agg (key);
CREATE TABLE IF NOT EXISTS file_stats_agg AS
  SELECT src_path AS path, count(*) AS n FROM import_unresolved GROUP BY src_path;
CREATE UNIQUE INDEX IF NOT EXISTS file_stats_agg_path ON file_stats_agg (path);
"""
