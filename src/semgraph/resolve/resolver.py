"""Call and import resolution without a compiler, with honest accounting.

:func:`resolve` streams the parsed model once into an on-disk symbol table
(:mod:`semgraph.resolve.symtab`), resolves imports (:mod:`semgraph.resolve.imports`), base
classes, then every call site, by tiers (:mod:`semgraph.resolve.tiers`), in this order:

``scope``     a nested definition visible from the enclosing function (and, in Java/C++,
              a member of the enclosing class called without a receiver);
``import``    a name bound by an import of the file (or a member of an imported module);
``module``    a top-level definition of the same module (Go: the same package);
``receiver``  a method of the receiver's type (``self.m()``, ``Type.m()``, typed locals);
``unique``    the only definition with that name, where bare names are global (else a candidate).

Every call site is classified ``resolved`` (with its tier), ``ambiguous`` (several candidates,
or one its name alone suggests; edges tagged ``ambiguous`` go to each candidate when there
are at most ``ambiguous_cap`` of them), ``external`` (bound to an external import or a language
builtin, :mod:`semgraph.resolve.builtins`) or ``unresolved``. The results stay in the SQLite
file for the writer to stream (:class:`~semgraph.resolve.resolution.Resolution`), with
what a later incremental resolution reads (:mod:`semgraph.resolve.ledger`).

It is a little over 300 lines: the per-file steps (imports, bases, calls) and the global
ones (possible callers, bundles) are one driver the full and the incremental resolution share.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from semgraph.model import FileFacts, FileSummary, SkippedFile
from semgraph.resolve import go_reach, ledger, pyroots, rust_crates, xsites
from semgraph.resolve.imports import ImportFile, ImportResolver, iter_raw_imports
from semgraph.resolve.memo import memoised
from semgraph.resolve.resolution import (
    AMBIGUOUS_TIER,
    DEFAULT_AMBIGUOUS_CAP,
    EDGE_INDEXES,
    RESULT_DDL,
    CallClass,
    Reason,
    Resolution,
)
from semgraph.resolve.scope import Ctx, FileScope, NameLookups, Sym
from semgraph.resolve.symtab import SymbolTable
from semgraph.resolve.tiers import BARE_KINDS, RECEIVER_KINDS, RECEIVER_SPLIT, SEVERAL, CallTiers
from semgraph.resolve.typed import TypedNames
from semgraph.resolve.typeexpr import Segment

FilesFactory = Callable[[], Iterable[FileFacts | SkippedFile]]
# the files as the diff reads them: a parse-cache hit may come as a summary, decoded only if
# its row digest differs from the previous resolution's (the spill's ``summaries``)
SummariesFactory = Callable[[], Iterable[FileFacts | SkippedFile | FileSummary]]
# what _FileCounter counts: a spill's records, or its summaries (the incremental diff)
_Item = TypeVar("_Item", FileFacts | SkippedFile, FileFacts | SkippedFile | FileSummary)
_DOTTED_BASE = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)+$")
_BASE_CLEAN = re.compile(r"<[^<>]*>|\[[^\[\]]*]|\([^()]*\)")  # innermost first


def clean_base(text: str) -> str:
    """A base's text without its (nested) type arguments: ``Base[t.IO[t.Any]]`` is ``Base``."""
    for _ in range(16):  # a bound on the passes keeps hostile input linear enough
        cleaned = _BASE_CLEAN.sub("", text)
        if cleaned == text:
            break
        text = cleaned
    return text


def resolve(
    files: FilesFactory,
    repo_key: str,
    workdir: Path,
    *,
    ambiguous_cap: int = DEFAULT_AMBIGUOUS_CAP,
    tag: str = "",
) -> Resolution:
    """Build the symbol table under ``workdir`` from one pass over ``files()`` and resolve
    every import and call site. The caller closes the result (or uses it as a context).
    ``tag`` names the parser's version (a later incremental resolution requires the same)."""
    workdir.mkdir(parents=True, exist_ok=True)
    stats = _FileCounter()
    table = SymbolTable.build(workdir / "symtab.sqlite", repo_key, stats.count(files()))
    roots = find_roots(table.db)
    renamed = pyroots.apply_roots(table.db, repo_key, roots)
    table.build_dir_suffixes()
    table.db.executescript(RESULT_DDL + ledger.LEDGER_DDL)
    res = Resolution(repo_key=repo_key, table=table, ambiguous_cap=ambiguous_cap)
    res.files_by_language = dict(stats.languages)
    res.files_by_status = dict(stats.statuses)
    res.skipped = dict(stats.skipped)
    res.symbols = table.db.execute("SELECT count(*) FROM symbols").fetchone()[0]
    db = table.db
    facts = dict(db.execute("SELECT path, bundle FROM files").fetchall())
    ledger.record_files(db, stats.digests, facts)
    db.executemany("INSERT INTO inc_renamed VALUES (?,?)", sorted(renamed.items()))
    ledger.write_meta(
        db, tag=ledger.tag(ambiguous_cap, tag), repo_key=repo_key, roots=json.dumps(roots)
    )
    resolver = _Resolver(res, renamed)
    resolver.resolve_files([ImportFile(*row) for row in table.iter_files()])
    resolver.finish()
    db.executescript(EDGE_INDEXES)
    db.commit()
    return res


def find_roots(db: Any) -> list[str]:
    """The Python source roots of the symbol table's files (:mod:`semgraph.resolve.pyroots`)."""
    return pyroots.find_roots(
        db.execute("SELECT path, text FROM packaging ORDER BY path").fetchall(),
        [r[0] for r in db.execute("SELECT path FROM files WHERE language = 'python'")],
    )


FUNCTION_KINDS = frozenset({"function", "method"})


def _innermost_function(functions: list[Sym], line: int) -> str | None:
    """The key of the innermost function whose range holds ``line`` (None: module level)."""
    best: Sym | None = None
    for sym in functions:
        if sym.start <= line <= sym.end and (best is None or sym.start >= best.start):
            best = sym
    return best.key if best is not None else None


class _FileCounter:
    def __init__(self) -> None:
        self.languages: Counter[str] = Counter()
        self.statuses: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.digests: list[tuple[str, bytes]] = []  # (path, row digest) of every parsed file

    def count(self, files: Iterable[_Item]) -> Iterator[_Item]:
        for item in files:
            if isinstance(item, SkippedFile):
                self.skipped[str(item.reason)] += 1
            else:
                self.languages[item.language] += 1
                self.statuses[str(item.parse_status)] += 1
                digest = (
                    item.row_digest if isinstance(item, FileSummary) else ledger.row_digest(item)
                )
                self.digests.append((item.path, digest))
            yield item


class _Resolver:
    def __init__(self, res: Resolution, renamed: dict[str, str]) -> None:
        self.res = res
        self.renamed = renamed  # path -> the source-root prefix dropped from its module
        self.db = res.table.db
        self.imports = ImportResolver(res.table)
        self.names = NameLookups(self.db, res.ambiguous_cap)
        self.typed = TypedNames(self.db, self.names)
        self.tiers = CallTiers(self.names, self.typed)
        self.counts: Counter[ledger.CountKey] = Counter()  # per file, for the ledger
        self.crates = rust_crates.dependency_crates(self.db)  # Rust: in scope without a use
        # an incremental run that touched no Go file keeps the stored go_reach table: it
        # reads only Go files' facts (semgraph.resolve.incremental)
        self.keep_reach = False
        # the table an incremental run already built once its fronts were final
        self.reach_keyed: dict[str, frozenset[go_reach.TypeRef]] | None = None

    def resolve_files(self, files: list[ImportFile]) -> None:
        """Resolve the imports, then the bases, then the calls of ``files`` (by path)."""
        self.resolve_front(files)
        self.resolve_calls(files)

    def resolve_front(self, files: list[ImportFile]) -> None:
        """The imports, then the bases of ``files``: what the calls of any file read."""
        for f in files:
            prefix = self.renamed.get(f.path)
            if prefix is not None:
                self._part(f.path, ("source root", prefix))
        for f in files:
            self._resolve_imports(f)
        self.db.commit()
        for f in files:
            self._resolve_bases(f)
        self.db.commit()

    def resolve_calls(self, files: list[ImportFile]) -> None:
        """The calls of ``files``, once every front (imports, bases) they read is final."""
        self.names, self.typed, self.tiers = memoised(self.db, self.res.ambiguous_cap)
        self._externals: set[str] | None = None  # read at the first site (a push may have none)
        for f in files:
            self._resolve_calls(f)
        ledger.write_counts(self.db, self.counts)
        self.counts.clear()

    def finish(self) -> None:
        """The global parts: possible callers of every symbol, every file's bundle."""
        self._possible_callers()
        self._bundles()
        if self.reach_keyed is not None:
            go_reach.write_keyed(self.db, self.reach_keyed)
        elif not self.keep_reach:
            go_reach.Reach.of(self.typed).write(self.db)  # what a later incremental compares
        self.db.commit()

    def _tally(self, table: dict[str, int], path: str, what: str, lang: str, key: str) -> None:
        table[key] = table.get(key, 0) + 1
        self.counts[(path, what, lang, key)] += 1

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
            "SELECT f.path, i.facts, p.part FROM files f LEFT JOIN inc_files i ON i.path = f.path "
            "LEFT JOIN file_parts p ON p.path = f.path ORDER BY f.path, p.rowid"
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
        functions = [
            s for s in FileScope(self.db, f.path).by_key.values() if s.kind in FUNCTION_KINDS
        ]
        for module, names, alias, line in iter_raw_imports(self.db, f.path):
            out = self.imports.resolve(f, module, names, alias)
            self._tally(counts, f.path, "imports", f.language, out.status)
            within = _innermost_function(functions, line)  # a function's own import
            binds += [(f.path, *b, within) for b in out.bindings]
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
        module_level = {b[1] for b in binds if b[4] is None}
        for crate, line in rust_crates.implicit(self.db, f.path, module_level, self.crates):
            binds.append((f.path, crate, "external", crate, None))  # an extern crate in scope
            if ("external", crate) not in seen:
                seen.add(("external", crate))
                edges.append((f.path, "external", crate, line))
        self.db.executemany("INSERT INTO bindings VALUES (?,?,?,?,?)", binds)
        self.db.executemany("INSERT INTO import_edges VALUES (?,?,?,?)", edges)
        self.db.executemany("INSERT INTO import_unresolved VALUES (?,?,?)", unresolved)
        members = sorted((b[1], b[3]) for b in binds if b[2] == "member" and b[4] is None)
        exports = self.imports.exports_of(f, {b[1]: (b[2], b[3]) for b in binds if b[4] is None})
        self.db.executemany("INSERT INTO file_exports VALUES (?,?)", [(f.path, e) for e in exports])
        self._part(f.path, ("imports", sorted(edges), len(unresolved), members, exports))

    # -- bases ---------------------------------------------------------------------------------

    def _resolve_bases(self, f: ImportFile) -> None:
        rows = self.db.execute(
            "SELECT child_key, text FROM bases WHERE path = ? ORDER BY rowid", (f.path,)
        ).fetchall()
        if not rows:
            return
        scope = FileScope(self.db, f.path)
        out = []
        for child, text in rows:
            cleaned = clean_base(text)
            cleaned = re.sub(
                r"^(public|private|protected|virtual|extends|implements)\s+", "", cleaned.strip()
            )
            name = RECEIVER_SPLIT.split(cleaned.strip())[-1].strip()
            if not name:
                continue
            keys = self._dotted_base(scope, f, child, cleaned.strip())
            keys = keys or self.names.classes_named(scope, name, f)
            outcome = "resolved" if len(keys) == 1 else ("ambiguous" if keys else "unresolved")
            self._tally(self.res.inherits_counts, f.path, "inherits", "", outcome)
            if len(keys) == 1 and keys[0] != child:
                out.append((child, keys[0]))
        self.db.executemany("INSERT INTO inherits VALUES (?,?)", out)
        self._part(f.path, ("bases", sorted(out)))

    def _dotted_base(self, scope: FileScope, f: ImportFile, child: str, text: str) -> list[str]:
        """A base named through a module (``flask.views.View``): the class it evaluates to."""
        sym = scope.by_key.get(child)
        if sym is None or not _DOTTED_BASE.match(text) or not RECEIVER_SPLIT.search(text):
            return []
        segs = [Segment(p, False) for p in RECEIVER_SPLIT.split(text)]
        kind, keys = self.typed.evaluate(Ctx(scope, f, sym), segs, sym.start, 0)
        return list(keys) if kind == "class" and len(keys) == 1 else []

    # -- calls ---------------------------------------------------------------------------------

    def _resolve_calls(self, f: ImportFile) -> None:
        scope = FileScope(self.db, f.path)
        self.typed.use_scope(scope, f)
        counts = self.res.call_counts.setdefault(f.language, {})
        edges: list[tuple[str, str, int, str, int]] = []
        stats: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        unlinked: list[tuple[str, str, str, str]] = []
        sites: list[tuple[str, str, int, str, str, str]] = []
        site_tokens: set[str] = set()
        for enclosing, callee, receiver, line, args in self.db.execute(
            "SELECT enclosing, callee, receiver, line, args FROM calls_raw WHERE path = ? "
            "ORDER BY id",
            (f.path,),
        ).fetchall():
            src = scope.enclosing(enclosing, line)
            if src is None:  # a code file always has its module symbol; defensive only
                continue
            outcome = self.tiers.classify(scope, f, src, callee, receiver, line, args)
            cls, tier, keys, candidates = outcome
            self._tally(counts, f.path, "calls", f.language, cls.value)
            value = self.tiers.receiver_value
            if cls is CallClass.EXTERNAL or tier == Reason.NO_MEMBER.value:  # a member from
                site_tokens |= xsites.class_names(self.typed, value)  # outside, or none yet
            if cls is CallClass.RESOLVED and tier is not None:
                self._tally(self.res.tier_counts, f.path, "tiers", "", tier)
                # one edge; Go interface dispatch: one per implementation (candidates: how many)
                edges += [(src.key, k, line, tier, max(candidates, 1)) for k in keys]
            elif cls is CallClass.AMBIGUOUS:
                stats[src.key][2] += 1
                self._tally(self.res.ambiguous_counts, f.path, "ambiguous", "", tier or SEVERAL)
                if keys:
                    edges += [(src.key, k, line, AMBIGUOUS_TIER, candidates) for k in keys]
                else:
                    mode = "bare" if receiver is None else "receiver"
                    unlinked.append((callee, f.family, mode, f.path))
            elif cls is CallClass.EXTERNAL:
                stats[src.key][1] += 1
                found = xsites.find(self.typed, Ctx(scope, f, src), callee, receiver, line, value)
                found = found or self.tiers.open.found(f.path, f.family, callee, receiver)
                site_tokens |= found[1] if found is not None else set()
                modules = self._external_modules()  # a site's module has its node
                sites += (
                    [(f.path, src.key, line, *s) for s in found[0] if s[0] in modules]
                    if found
                    else []
                )
            else:
                stats[src.key][0] += 1
                why = tier or Reason.NO_DEFINITION.value
                self._tally(self.res.reason_counts, f.path, "reasons", "", why)
        self.db.executemany("INSERT INTO call_edges VALUES (?,?,?,?,?)", edges)
        self.db.executemany(
            "INSERT INTO sym_stats VALUES (?,?,?,?,0)", [(k, *v) for k, v in stats.items()]
        )
        self.db.executemany("INSERT INTO ambiguous_unlinked VALUES (?,?,?,?)", unlinked)
        self.db.executemany("INSERT INTO external_sites VALUES (?,?,?,?,?,?)", sites)
        self.db.executemany(
            "INSERT INTO site_tokens VALUES (?,?)", [(f.path, t) for t in sorted(site_tokens)]
        )
        self._part(f.path, ("calls", sorted(edges), sorted(stats.items()), sorted(sites)))

    def _external_modules(self) -> set[str]:
        """The modules the repository imports from outside: a site's ExternalModule exists."""
        if self._externals is None:
            sql = "SELECT dst FROM import_edges WHERE dst_kind = 'external'"
            self._externals = {r[0] for r in self.db.execute(sql)}
        return self._externals

    def _possible_callers(self) -> None:
        for mode, kinds in (("bare", BARE_KINDS), ("receiver", RECEIVER_KINDS)):
            marks = ",".join("?" * len(kinds))
            self.db.execute(
                "INSERT INTO sym_stats SELECT s.key, 0, 0, 0, count(*) FROM ambiguous_unlinked a "
                "JOIN symbols s ON s.name = a.name AND s.family = a.family "
                f"WHERE a.mode = ? AND s.kind IN ({marks}) GROUP BY s.key",
                (mode, *kinds),
            )
