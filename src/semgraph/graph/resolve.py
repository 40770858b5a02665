"""Call and import resolution without a compiler, with honest accounting.

:func:`resolve` streams the parsed model once into an on-disk symbol table
(:mod:`semgraph.graph.symtab`), resolves imports (:mod:`semgraph.graph.imports`), base
classes, then every call site, by tiers, in this order:

``scope``     a nested definition visible from the enclosing function (and, in Java/C++,
              a member of the enclosing class called without a receiver);
``import``    a name bound by an import of the file (or a member of an imported module);
``module``    a top-level definition of the same module (Go: the same package);
``receiver``  ``self.``/``this.``/``cls.`` methods of the enclosing class and its bases, and
              ``Type.method()`` where ``Type`` names a class;
``unique``    the only definition with that name in the repository (same language family).

Every call site is classified ``resolved`` (with its tier), ``ambiguous`` (several candidates:
never resolved to the first one; edges tagged ``ambiguous`` go to each candidate when there
are at most ``ambiguous_cap`` of them), ``external`` (bound to an external import or a language
builtin) or ``unresolved``. The results stay in the SQLite file for the writer to stream.
"""

from __future__ import annotations

import enum
import hashlib
import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from semgraph.graph.imports import MEMBER_SEP, ImportFile, ImportResolver, iter_raw_imports
from semgraph.graph.symtab import CLASS_KINDS, SymbolTable, external_key, file_key
from semgraph.model import FileFacts, SkippedFile

FilesFactory = Callable[[], Iterable[FileFacts | SkippedFile]]

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


AMBIGUOUS_TIER = "ambiguous"  # the tier recorded on CALLS edges to one of several candidates

SELF_NAMES = frozenset({"self", "this", "cls", "super"})
_MEMBER_SCOPE_FAMILIES = frozenset({"java", "c"})  # bare calls see the enclosing class
_BARE_KINDS = ("function", "class", "struct")  # constructors call a class
_RECEIVER_KINDS = ("method", "function")
BUILTIN_CALLS: dict[str, frozenset[str]] = {
    "python": frozenset(
        [
            "print",
            "len",
            "range",
            "str",
            "int",
            "float",
            "list",
            "dict",
            "set",
            "tuple",
            "isinstance",
            "getattr",
            "setattr",
            "hasattr",
            "open",
            "super",
            "sorted",
            "enumerate",
            "zip",
            "map",
            "filter",
            "min",
            "max",
            "sum",
            "any",
            "all",
            "repr",
            "type",
            "iter",
            "next",
            "abs",
            "round",
            "format",
            "id",
            "hash",
            "vars",
            "dir",
            "issubclass",
            "callable",
            "bool",
            "bytes",
            "object",
            "frozenset",
            "ValueError",
            "TypeError",
            "KeyError",
            "RuntimeError",
            "OSError",
            "Exception",
            "NotImplementedError",
            "AttributeError",
            "IndexError",
            "StopIteration",
            "AssertionError",
        ]
    ),
    "js": frozenset(
        [
            "require",
            "parseInt",
            "parseFloat",
            "setTimeout",
            "setInterval",
            "clearTimeout",
            "clearInterval",
            "String",
            "Number",
            "Boolean",
            "Array",
            "Object",
            "Promise",
            "Error",
            "Map",
            "Set",
            "Date",
            "Symbol",
            "RegExp",
            "fetch",
        ]
    ),
    "go": frozenset(
        [
            "len",
            "cap",
            "make",
            "new",
            "append",
            "copy",
            "delete",
            "panic",
            "recover",
            "print",
            "println",
            "close",
            "complex",
            "real",
            "imag",
            "min",
            "max",
            "clear",
            "string",
            "int",
            "int64",
            "int32",
            "uint",
            "byte",
            "rune",
            "float64",
            "error",
        ]
    ),
    "java": frozenset(["super", "this"]),
    "rust": frozenset(["Some", "None", "Ok", "Err", "Box", "Vec", "String", "drop", "panic"]),
    "c": frozenset(
        [
            "printf",
            "fprintf",
            "sprintf",
            "snprintf",
            "malloc",
            "calloc",
            "realloc",
            "free",
            "memcpy",
            "memset",
            "memcmp",
            "strlen",
            "strcmp",
            "strncmp",
            "strcpy",
            "strncpy",
            "exit",
            "abort",
            "assert",
            "sizeof",
        ]
    ),
}
BUILTIN_RECEIVERS: dict[str, frozenset[str]] = {
    "python": frozenset(["str", "dict", "list", "set", "bytes", "int", "float", "object"]),
    "js": frozenset(
        [
            "console",
            "Math",
            "JSON",
            "Object",
            "Array",
            "Promise",
            "Number",
            "String",
            "Date",
            "Reflect",
            "process",
            "document",
            "window",
        ]
    ),
    "go": frozenset(),
    "java": frozenset(
        [
            "System",
            "Math",
            "String",
            "Integer",
            "Long",
            "Double",
            "Boolean",
            "Objects",
            "Arrays",
            "Collections",
            "List",
            "Map",
            "Set",
            "Optional",
            "Thread",
        ]
    ),
    "rust": frozenset(
        ["Vec", "String", "Box", "Option", "Result", "HashMap", "HashSet", "Rc", "Arc"]
    ),
    "c": frozenset(["std"]),
}
_RECEIVER_SPLIT = re.compile(r"\.|::|->")
_BASE_CLEAN = re.compile(r"<.*?>|\[.*?]|\(.*?\)")


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
    import_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    inherits_counts: dict[str, int] = field(default_factory=dict)
    files_by_language: dict[str, int] = field(default_factory=dict)
    files_by_status: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    symbols: int = 0
    ambiguous_cap: int = DEFAULT_AMBIGUOUS_CAP

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
            "WHERE dst_kind = 'external')"
        ).fetchone()
        # nodes: files, symbols, externals; structure: repository->file, file->symbol, parent
        return int(files * 2 + symbols * 2 + parented + sum(edges))

    def file_bundles(self) -> Iterator[tuple[str, bytes]]:
        """(path, bundle digest) of every parsed file, by path."""
        yield from self.table.db.execute("SELECT path, bundle FROM files ORDER BY path")

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


_RESULT_DDL = """
CREATE TABLE bindings (path TEXT, local TEXT, kind TEXT, target TEXT);
CREATE INDEX bindings_path ON bindings (path);
CREATE TABLE import_edges (src_path TEXT, dst_kind TEXT, dst TEXT, line INTEGER);
CREATE TABLE import_unresolved (src_path TEXT, module TEXT, line INTEGER);
CREATE TABLE inherits (child_key TEXT, parent_key TEXT);
CREATE INDEX inherits_child ON inherits (child_key);
CREATE TABLE call_edges (src_key TEXT, dst_key TEXT, line INTEGER, tier TEXT, candidates INTEGER);
CREATE TABLE sym_stats (key TEXT, unresolved INTEGER, external INTEGER, ambiguous INTEGER,
                        possible INTEGER);
CREATE TABLE ambiguous_unlinked (name TEXT, family TEXT, mode TEXT);
CREATE TABLE file_parts (path TEXT, part BLOB);
"""
# for the writer's per-file reads, built once the edges are all in
_EDGE_INDEXES = """
CREATE INDEX call_edges_src ON call_edges (src_key, dst_key, line, tier, candidates);
CREATE INDEX import_edges_src ON import_edges (src_path, dst_kind, dst, line);
CREATE INDEX inherits_pair ON inherits (child_key, parent_key);
CREATE INDEX import_unresolved_src ON import_unresolved (src_path);
CREATE INDEX sym_stats_key ON sym_stats (key);
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


def resolve(
    files: FilesFactory,
    repo_key: str,
    workdir: Path,
    *,
    ambiguous_cap: int = DEFAULT_AMBIGUOUS_CAP,
) -> Resolution:
    """Build the symbol table under ``workdir`` from one pass over ``files()`` and resolve
    every import and call site. The caller closes the result (or uses it as a context)."""
    workdir.mkdir(parents=True, exist_ok=True)
    stats = _FileCounter()
    table = SymbolTable.build(workdir / "symtab.sqlite", repo_key, stats.count(files()))
    table.build_dir_suffixes()
    table.db.executescript(_RESULT_DDL)
    res = Resolution(repo_key=repo_key, table=table, ambiguous_cap=ambiguous_cap)
    res.files_by_language = dict(stats.languages)
    res.files_by_status = dict(stats.statuses)
    res.skipped = dict(stats.skipped)
    res.symbols = table.db.execute("SELECT count(*) FROM symbols").fetchone()[0]
    _Resolver(res).run()
    return res


class _FileCounter:
    def __init__(self) -> None:
        self.languages: Counter[str] = Counter()
        self.statuses: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()

    def count(self, files: Iterable[FileFacts | SkippedFile]) -> Iterator[FileFacts | SkippedFile]:
        for item in files:
            if isinstance(item, SkippedFile):
                self.skipped[str(item.reason)] += 1
            else:
                self.languages[item.language] += 1
                self.statuses[str(item.parse_status)] += 1
            yield item


@dataclass(slots=True)
class _Sym:
    key: str
    qn: str
    name: str
    kind: str
    parent_key: str | None
    start: int
    end: int


class _FileScope:
    """One file's symbols and bindings, loaded while that file's calls are resolved."""

    def __init__(self, db: Any, path: str) -> None:
        self.by_key: dict[str, _Sym] = {}
        self.by_qn: dict[str, list[_Sym]] = defaultdict(list)
        self.module_key = ""
        for row in db.execute(
            "SELECT key, qn, name, kind, parent_key, start_line, end_line FROM symbols "
            "WHERE path = ? ORDER BY rowid",
            (path,),
        ):
            sym = _Sym(*row)
            self.by_key[sym.key] = sym
            self.by_qn[sym.qn].append(sym)
            if sym.parent_key is None:
                self.module_key = sym.key
        self.bindings: dict[str, tuple[str, str]] = {}
        self.star: list[tuple[str, str]] = []
        for local, kind, target in db.execute(
            "SELECT local, kind, target FROM bindings WHERE path = ? ORDER BY rowid", (path,)
        ):
            if local == "*":
                self.star.append((kind, target))
            else:
                self.bindings[local] = (kind, target)

    def enclosing(self, qn: str, line: int) -> _Sym | None:
        syms = self.by_qn.get(qn)
        if not syms:
            return self.by_key.get(self.module_key)
        for sym in reversed(syms):
            if sym.start <= line <= sym.end:
                return sym
        return syms[0]

    def ancestors(self, sym: _Sym | None) -> Iterator[_Sym]:
        while sym is not None:
            yield sym
            sym = self.by_key.get(sym.parent_key) if sym.parent_key else None


Outcome = tuple[CallClass, str | None, list[str], int]  # class, tier, target keys, candidates


class _Resolver:
    def __init__(self, res: Resolution) -> None:
        self.res = res
        self.db = res.table.db
        self.imports = ImportResolver(res.table)
        self._name_cache: dict[tuple[str, str, str], tuple[int, list[str]]] = {}

    def run(self) -> None:
        files = [ImportFile(*row) for row in self.res.table.iter_files()]
        for f in files:
            self._resolve_imports(f)
        self.db.commit()
        for f in files:
            self._resolve_bases(f)
        self.db.commit()
        for f in files:
            self._resolve_calls(f)
        self._possible_callers()
        self._bundles()
        self.db.executescript(_EDGE_INDEXES)
        self.db.commit()

    def _part(self, path: str, material: object) -> None:
        """Fold what one step of the resolution produced for ``path`` into its bundle. Lists
        come sorted: candidates found by SQL come in no fixed order, and a bundle must change
        only when the graph rows do (the rows are sorted the same way)."""
        digest = hashlib.blake2b(repr(material).encode("utf-8", "surrogatepass"), digest_size=16)
        self.db.execute("INSERT INTO file_parts VALUES (?, ?)", (path, digest.digest()))

    def _bundles(self) -> None:
        """Each file's bundle digest: its facts (from the symbol table) and everything the
        resolution produced for it, so a file whose graph rows cannot have changed is known
        without building them (a delta publish skips it)."""
        possible: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for path, key, n in self.db.execute(
            "SELECT s.path, x.key, sum(x.possible) FROM sym_stats x JOIN symbols s "
            "ON s.key = x.key WHERE x.possible > 0 GROUP BY x.key ORDER BY x.key"
        ):
            possible[path].append((key, n))
        rows = self.db.execute(
            "SELECT f.path, f.bundle, p.part FROM files f LEFT JOIN file_parts p "
            "ON p.path = f.path ORDER BY f.path, p.rowid"
        ).fetchall()
        out = []
        for path, group in itertools.groupby(rows, key=lambda r: r[0]):
            parts = list(group)
            h = hashlib.blake2b(parts[0][1] or b"", digest_size=16)
            for _, _, part in parts:
                if part is not None:
                    h.update(part)
            h.update(repr(possible.get(path)).encode())
            out.append((h.digest(), path))
        self.db.executemany("UPDATE files SET bundle = ? WHERE path = ?", out)

    # -- imports --------------------------------------------------------------------------

    def _resolve_imports(self, f: ImportFile) -> None:
        counts = self.res.import_counts.setdefault(f.language, {})
        edges, binds, unresolved = [], [], []
        seen: set[tuple[str | None, str | None]] = set()
        for module, names, alias, line in iter_raw_imports(self.db, f.path):
            out = self.imports.resolve(f, module, names, alias)
            counts[out.status] = counts.get(out.status, 0) + 1
            binds += [(f.path, *b) for b in out.bindings]
            if out.status == "unresolved":
                unresolved.append((f.path, module, line))
            elif (out.dst_kind, out.dst) not in seen and out.dst != f.path:
                seen.add((out.dst_kind, out.dst))
                kind = "external" if out.dst_kind == "external" else "file"
                if out.dst_kind == "dir":
                    for (path,) in self.db.execute(
                        "SELECT path FROM files WHERE dir = ? AND family = ? AND code = 1 "
                        "AND path != ? ORDER BY path",
                        (out.dst, f.family, f.path),
                    ):
                        edges.append((f.path, kind, path, line))
                else:
                    edges.append((f.path, kind, out.dst, line))
        self.db.executemany("INSERT INTO bindings VALUES (?,?,?,?)", binds)
        self.db.executemany("INSERT INTO import_edges VALUES (?,?,?,?)", edges)
        self.db.executemany("INSERT INTO import_unresolved VALUES (?,?,?)", unresolved)
        self._part(f.path, ("imports", sorted(edges), len(unresolved)))

    # -- name lookups -----------------------------------------------------------------------

    def _top_level(self, kind: str, target: str, name: str, fam: str) -> list[str]:
        """Top-level definitions named ``name`` in a bound file / Go package directory."""
        if kind == "file":
            sql = "SELECT key FROM symbols WHERE path = ? AND name = ? AND toplevel = 1"
            return [r[0] for r in self.db.execute(sql, (target, name))]
        if kind == "dir":
            sql = (
                "SELECT s.key FROM symbols s JOIN files f ON f.path = s.path "
                "WHERE f.dir = ? AND f.family = ? AND s.name = ? AND s.toplevel = 1 "
                "AND s.kind != 'method'"
            )
            return [r[0] for r in self.db.execute(sql, (target, fam, name))]
        if kind == "member":
            path, member = target.split(MEMBER_SEP, 1)
            return self._top_level("file", path, member, fam) if member == name else []
        return []

    def _bound(self, scope: _FileScope, name: str, fam: str) -> tuple[str, list[str]] | None:
        """What an imported ``name`` refers to: ("external", []) or ("symbols", keys)."""
        bound = scope.bindings.get(name)
        if bound is not None:
            kind, target = bound
            if kind == "external":
                return "external", []
            if kind == "member":
                path, member = target.split(MEMBER_SEP, 1)
                keys = self._top_level("file", path, member, fam)
                return ("symbols", keys) if keys else None
            return "module", [f"{kind}{MEMBER_SEP}{target}"]
        for kind, target in scope.star:
            keys = self._top_level(kind, target, name, fam)
            if keys:
                return "symbols", keys
        return None

    def _members(self, class_key: str, name: str, depth: int = 0) -> list[str]:
        keys = [
            r[0]
            for r in self.db.execute(
                "SELECT key FROM symbols WHERE parent_key = ? AND name = ?", (class_key, name)
            )
        ]
        if keys or depth >= 4:
            return keys
        for (parent,) in self.db.execute(
            "SELECT parent_key FROM inherits WHERE child_key = ?", (class_key,)
        ):
            keys = self._members(parent, name, depth + 1)
            if keys:
                return keys
        return []

    def _by_name(self, name: str, fam: str, kinds: tuple[str, ...]) -> tuple[int, list[str]]:
        """(number of definitions, their keys when at most the cap) across the repository."""
        cache_key = (name, fam, kinds[0])
        hit = self._name_cache.get(cache_key)
        if hit is None:
            marks = ",".join("?" * len(kinds))
            rows = self.db.execute(
                f"SELECT key FROM symbols WHERE name = ? AND family = ? AND kind IN ({marks}) "
                "LIMIT ?",
                (name, fam, *kinds, self.res.ambiguous_cap + 1),
            ).fetchall()
            if len(rows) > self.res.ambiguous_cap:
                total = self.db.execute(
                    f"SELECT count(*) FROM symbols WHERE name = ? AND family = ? "
                    f"AND kind IN ({marks})",
                    (name, fam, *kinds),
                ).fetchone()[0]
                hit = (total, [])
            else:
                hit = (len(rows), [r[0] for r in rows])
            if len(self._name_cache) > 200_000:
                self._name_cache.clear()
            self._name_cache[cache_key] = hit
        return hit

    def _classes_named(self, scope: _FileScope, name: str, f: ImportFile) -> list[str]:
        bound = self._bound(scope, name, f.family)
        if bound is not None:
            return bound[1] if bound[0] == "symbols" else []
        local = self._top_level(
            "dir" if f.family == "go" else "file",
            f.dir if f.family == "go" else f.path,
            name,
            f.family,
        )
        if local:
            return local
        _, keys = self._by_name(name, f.family, tuple(sorted(CLASS_KINDS)))
        return keys

    # -- bases ---------------------------------------------------------------------------------

    def _resolve_bases(self, f: ImportFile) -> None:
        rows = self.db.execute(
            "SELECT child_key, text FROM bases WHERE path = ? ORDER BY rowid", (f.path,)
        ).fetchall()
        if not rows:
            return
        scope = _FileScope(self.db, f.path)
        out = []
        for child, text in rows:
            cleaned = _BASE_CLEAN.sub("", text)
            cleaned = re.sub(
                r"^(public|private|protected|virtual|extends|implements)\s+", "", cleaned.strip()
            )
            name = _RECEIVER_SPLIT.split(cleaned.strip())[-1].strip()
            if not name:
                continue
            keys = self._classes_named(scope, name, f)
            outcome = "resolved" if len(keys) == 1 else ("ambiguous" if keys else "unresolved")
            self.res.inherits_counts[outcome] = self.res.inherits_counts.get(outcome, 0) + 1
            if len(keys) == 1 and keys[0] != child:
                out.append((child, keys[0]))
        self.db.executemany("INSERT INTO inherits VALUES (?,?)", out)
        self._part(f.path, ("bases", sorted(out)))

    # -- calls ---------------------------------------------------------------------------------

    def _resolve_calls(self, f: ImportFile) -> None:
        scope = _FileScope(self.db, f.path)
        counts = self.res.call_counts.setdefault(f.language, {})
        edges: list[tuple[str, str, int, str, int]] = []
        stats: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        unlinked: list[tuple[str, str, str]] = []
        for enclosing, callee, receiver, line in self.db.execute(
            "SELECT enclosing, callee, receiver, line FROM calls_raw WHERE path = ? ORDER BY id",
            (f.path,),
        ).fetchall():
            src = scope.enclosing(enclosing, line)
            if src is None:  # a code file always has its module symbol; defensive only
                continue
            cls, tier, keys, candidates = self._classify(scope, f, src, callee, receiver)
            counts[cls.value] = counts.get(cls.value, 0) + 1
            if cls is CallClass.RESOLVED and tier is not None:
                self.res.tier_counts[tier] = self.res.tier_counts.get(tier, 0) + 1
                edges.append((src.key, keys[0], line, tier, 1))
            elif cls is CallClass.AMBIGUOUS:
                stats[src.key][2] += 1
                if keys:
                    edges += [(src.key, k, line, AMBIGUOUS_TIER, candidates) for k in keys]
                else:
                    mode = "bare" if receiver is None else "receiver"
                    unlinked.append((callee, f.family, mode))
            elif cls is CallClass.EXTERNAL:
                stats[src.key][1] += 1
            else:
                stats[src.key][0] += 1
        self.db.executemany("INSERT INTO call_edges VALUES (?,?,?,?,?)", edges)
        self.db.executemany(
            "INSERT INTO sym_stats VALUES (?,?,?,?,0)", [(k, *v) for k, v in stats.items()]
        )
        self.db.executemany("INSERT INTO ambiguous_unlinked VALUES (?,?,?)", unlinked)
        self._part(f.path, ("calls", sorted(edges), sorted(stats.items())))

    def _classify(
        self, scope: _FileScope, f: ImportFile, src: _Sym, callee: str, receiver: str | None
    ) -> Outcome:
        if receiver is None or not receiver.strip():
            found = self._bare(scope, f, src, callee)
            if found is not None:
                return found
            if callee in BUILTIN_CALLS.get(f.family, ()):
                return CallClass.EXTERNAL, None, [], 0
            return self._unique(callee, f.family, _BARE_KINDS)
        found = self._with_receiver(scope, f, src, callee, receiver.strip())
        if found is not None:
            return found
        return self._unique(callee, f.family, _RECEIVER_KINDS)

    def _bare(self, scope: _FileScope, f: ImportFile, src: _Sym, callee: str) -> Outcome | None:
        for sym in scope.ancestors(src):
            if sym.parent_key is None:
                break
            if sym.kind in CLASS_KINDS:
                if f.family in _MEMBER_SCOPE_FAMILIES:
                    keys = self._members(sym.key, callee)
                    if keys:
                        return _pick(keys, Tier.SCOPE)
                continue
            nested = scope.by_qn.get(f"{sym.qn}.{callee}")
            if nested:
                return _pick([s.key for s in nested], Tier.SCOPE)
        bound = self._bound(scope, callee, f.family)
        if bound is not None:
            if bound[0] == "external":
                return CallClass.EXTERNAL, None, [], 0
            if bound[0] == "symbols":
                return _pick(bound[1], Tier.IMPORT)
        kind, target = ("dir", f.dir) if f.family == "go" else ("file", f.path)
        local = [
            k for k in self._top_level(kind, target, callee, f.family) if k != scope.module_key
        ]
        if local:
            return _pick(local, Tier.MODULE)
        return None

    def _with_receiver(
        self, scope: _FileScope, f: ImportFile, src: _Sym, callee: str, receiver: str
    ) -> Outcome | None:
        parts = _RECEIVER_SPLIT.split(receiver)
        root = parts[0].strip()
        if root in SELF_NAMES and len(parts) == 1:
            cls = next((s for s in scope.ancestors(src) if s.kind in CLASS_KINDS), None)
            if cls is not None:
                if root == "super":
                    parents = [
                        r[0]
                        for r in self.db.execute(
                            "SELECT parent_key FROM inherits WHERE child_key = ?", (cls.key,)
                        )
                    ]
                    keys = [k for p in parents for k in self._members(p, callee)]
                else:
                    keys = self._members(cls.key, callee)
                if keys:
                    return _pick(keys, Tier.RECEIVER)
            return None
        via_import = self._receiver_import(scope, f, callee, receiver, root)
        if via_import is not None:
            return via_import
        if root in BUILTIN_RECEIVERS.get(f.family, ()):
            return CallClass.EXTERNAL, None, [], 0
        if len(parts) == 1 and root[:1].isupper():
            classes = self._classes_named(scope, root, f)
            if len(classes) == 1:
                keys = self._members(classes[0], callee)
                if keys:
                    return _pick(keys, Tier.RECEIVER)
        return None

    def _receiver_import(
        self, scope: _FileScope, f: ImportFile, callee: str, receiver: str, root: str
    ) -> Outcome | None:
        """``mod.f()`` / ``pkg.f()`` / ``ImportedClass.m()`` through the file's imports."""
        for name in (receiver, root):
            bound = self._bound(scope, name, f.family)
            if bound is None:
                continue
            if bound[0] == "external":
                return CallClass.EXTERNAL, None, [], 0
            if bound[0] == "module":
                kind, target = bound[1][0].split(MEMBER_SEP, 1)
                keys = self._top_level(kind, target, callee, f.family)
                return _pick(keys, Tier.IMPORT) if keys else None
            classes = [k for k in bound[1] if self._is_class(k)]
            keys = [m for c in classes for m in self._members(c, callee)]
            return _pick(keys, Tier.IMPORT) if keys else None
        return None

    def _is_class(self, key: str) -> bool:
        row = self.db.execute("SELECT kind FROM symbols WHERE key = ?", (key,)).fetchone()
        return row is not None and row[0] in CLASS_KINDS

    def _unique(self, callee: str, fam: str, kinds: tuple[str, ...]) -> Outcome:
        total, keys = self._by_name(callee, fam, kinds)
        if total == 0:
            return CallClass.UNRESOLVED, None, [], 0
        if total == 1:
            return CallClass.RESOLVED, Tier.UNIQUE.value, keys, 1
        return CallClass.AMBIGUOUS, None, keys, total

    def _possible_callers(self) -> None:
        for mode, kinds in (("bare", _BARE_KINDS), ("receiver", _RECEIVER_KINDS)):
            marks = ",".join("?" * len(kinds))
            self.db.execute(
                "INSERT INTO sym_stats SELECT s.key, 0, 0, 0, count(*) FROM ambiguous_unlinked a "
                "JOIN symbols s ON s.name = a.name AND s.family = a.family "
                f"WHERE a.mode = ? AND s.kind IN ({marks}) GROUP BY s.key",
                (mode, *kinds),
            )


def _pick(keys: list[str], tier: Tier) -> Outcome:
    """One candidate resolves; several (overloads, duplicate definitions) are ambiguous."""
    unique = list(dict.fromkeys(keys))
    if len(unique) == 1:
        return CallClass.RESOLVED, tier.value, unique, 1
    return CallClass.AMBIGUOUS, None, unique, len(unique)
