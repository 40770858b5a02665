"""Incremental resolution: resolve only what a change can affect, with the output a full
:func:`~semgraph.resolve.resolver.resolve` of the same files gives (every table, count and
bundle digest; :mod:`semgraph.resolve.compare` checks it).

The previous resolution's SQLite file is a cache, never a source of truth. It is copied into
the job's work directory (or moved there, with ``consume``: one rename instead of copying a
file of hundreds of megabytes); the files whose row digest differs (:mod:`semgraph.resolve.ledger`)
are re-read into a small symbol table of their own and replace their rows; their *surfaces*
(:mod:`semgraph.resolve.surface`) are compared, and every file whose tokens meet a changed
name is resolved again with them. The global parts (possible callers, bundles, counts) are
recomputed from per-file tables. Because the diff is by content, a cache of any older commit
gives the same answer; a missing, corrupt, foreign or stale cache, a packaging change, new
source roots or a closure over ``max_fraction`` of the files is a full resolution.

The module is over 300 lines because the steps of one incremental run (diff, closure,
ledger, the Go reach check, the re-resolve) share its state.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from pathlib import Path, PurePosixPath

from semgraph.model import FileFacts, FileSummary, SkippedFile
from semgraph.resolve import go_reach, ledger, pyroots
from semgraph.resolve.go_types import TypeRef
from semgraph.resolve.imports import ImportFile
from semgraph.resolve.patch import (
    base_names,
    delete_results,
    inherits_changed,
    replace_raw,
    sum_counts,
)
from semgraph.resolve.resolution import DEFAULT_AMBIGUOUS_CAP, Resolution
from semgraph.resolve.resolver import (
    FilesFactory,
    SummariesFactory,
    _FileCounter,
    _Resolver,
    resolve,
)
from semgraph.resolve.scope import NameLookups
from semgraph.resolve.surface import (
    changed_items,
    class_names,
    classes_named,
    item_names,
    star_names,
    surface,
    typed_names,
)
from semgraph.resolve.symtab import SymbolTable
from semgraph.resolve.typed import TypedNames

log = logging.getLogger(__name__)

# above this fraction of the code files to re-resolve, a full resolution is as cheap
# (bench/push/bench_incremental.py measures it; bench/NOTES.md)
DEFAULT_MAX_FRACTION = 0.5
TYPED_HOPS = 8  # rounds of names grown through declared types (a chain of return types)


class Fallback(Exception):
    """The cache cannot serve this resolution; the message says why."""


def resolve_incremental(
    files: FilesFactory,
    repo_key: str,
    workdir: Path,
    previous: Path | None,
    *,
    ambiguous_cap: int = DEFAULT_AMBIGUOUS_CAP,
    tag: str = "",
    max_fraction: float = DEFAULT_MAX_FRACTION,
    summaries: SummariesFactory | None = None,
    consume: bool = False,
) -> Resolution:
    """The resolution of ``files()``, from the previous one at ``previous`` where it can
    serve, else a full one. ``res.incremental`` says which, why, and how many files were
    resolved again. ``summaries``, when given, yields the same files, some as summaries: the
    diff reads it instead of ``files``. With ``consume`` the previous file is moved into
    ``workdir``, not copied: it is gone afterwards, whatever the outcome."""
    reason = "no previous resolution"
    if previous is not None and previous.is_file():
        run = _Incremental(summaries or files, repo_key, workdir, ambiguous_cap, tag, max_fraction)
        try:
            return run.run(previous, consume)
        except Fallback as exc:
            reason = str(exc)
        except sqlite3.DatabaseError as exc:  # corrupt, truncated, another schema
            reason = f"previous resolution unreadable: {exc}"
        finally:
            run.close()
    log.info("full resolution: %s", reason, extra={"action": "resolve_full", "repo": repo_key})
    res = resolve(files, repo_key, workdir, ambiguous_cap=ambiguous_cap, tag=tag)
    code = res.table.db.execute("SELECT count(*) FROM files WHERE code = 1").fetchone()[0]
    res.incremental = {"mode": "full", "reason": reason, "files_resolved": code}
    return res


def _any_go(db: sqlite3.Connection, paths: list[str]) -> bool:
    """Whether one of ``paths`` is a Go file in ``db``'s table of files."""
    return any(
        db.execute("SELECT 1 FROM files WHERE path = ? AND family = 'go'", (p,)).fetchone()
        for p in paths
    )


class _Incremental:
    def __init__(
        self,
        files: SummariesFactory,
        repo_key: str,
        workdir: Path,
        ambiguous_cap: int,
        tag: str,
        max_fraction: float,
    ) -> None:
        self.files, self.repo_key, self.workdir = files, repo_key, workdir
        self.cap, self.tag, self.max_fraction = ambiguous_cap, tag, max_fraction
        self.table: SymbolTable | None = None
        self.small: SymbolTable | None = None
        self.done = False
        self.old_inherits: list[tuple[str, str]] = []
        self.limit, self.n_files = 0.0, 0
        # the Go reach table reads only Go files' facts: a change without one keeps it
        self.go_touched = True

    def close(self) -> None:
        if self.small is not None:
            self.small.close()
            self.small.path.unlink(missing_ok=True)
        if self.table is not None and not self.done:
            self.table.close()

    def run(self, previous: Path, consume: bool) -> Resolution:
        started = time.process_time()
        self.workdir.mkdir(parents=True, exist_ok=True)
        target = self.workdir / "symtab.sqlite"
        target.unlink(missing_ok=True)
        ledger.take(previous, target, consume=consume)
        self.table = table = SymbolTable(target)
        db = table.db
        meta = ledger.read_meta(db)
        if meta.get("tag") != ledger.tag(self.cap, self.tag):
            raise Fallback("previous resolution of another resolver version or options")
        if meta.get("repo_key") != self.repo_key:
            raise Fallback("previous resolution of another repository")
        for name in ledger.READER_TABLES:
            db.execute(f"DROP TABLE IF EXISTS {name}")

        stats, changed, skipped, removed = self._diff(db)
        n_files = len(stats.digests)
        limit = self.max_fraction * max(n_files, 1)
        if len(changed) + len(removed) > limit:
            raise Fallback(f"{len(changed) + len(removed)} of {n_files} files changed")
        self._check_packaging(db, changed, removed)
        self.small = small = SymbolTable.build(
            self.workdir / "changed.sqlite", self.repo_key, changed
        )
        roots = self._roots(db, small, changed, removed)
        renamed_new = pyroots.apply_roots(small.db, self.repo_key, roots)

        touched = sorted({f.path for f in changed} | set(removed))
        self.go_touched = _any_go(db, touched) or _any_go(small.db, touched)
        names, keys, qns = self._changed(db, small.db, touched)
        names |= class_names(db, keys | classes_named(db, base_names(keys, db)), qns)
        self.old_inherits = delete_results(db, touched)
        replace_raw(db, small, touched)
        names |= class_names(db, keys | classes_named(db, base_names(keys, db)), qns)
        self.limit, self.n_files = limit, n_files
        closure = self._closure(db, names, touched)
        self._ledger(db, small, changed, removed, renamed_new, skipped)
        res = self._resolve(table, stats, closure, touched)
        closure = res.incremental.pop("closure")
        res.incremental = {
            "mode": "incremental",
            "reason": None,
            "files_changed": len(changed),
            "files_removed": len(removed),
            "files_resolved": len(closure),
            "changed_names": len(names),
            "cpu_s": round(time.process_time() - started, 3),
        }
        self.done = True
        return res

    # -- steps ---------------------------------------------------------------------------

    def _diff(
        self, db: sqlite3.Connection
    ) -> tuple[_FileCounter, list[FileFacts], list[tuple[str, str]], list[str]]:
        """One pass over the files: the changed ones (kept), the skipped, the removed."""
        old = dict(db.execute("SELECT path, row_digest FROM inc_files").fetchall())
        stats = _FileCounter()
        changed: list[FileFacts] = []
        skipped: list[tuple[str, str]] = []
        seen: set[str] = set()
        for item in stats.count(self.files()):
            if isinstance(item, SkippedFile):
                skipped.append((item.path, str(item.reason)))
                continue
            seen.add(item.path)
            if old.get(item.path) != stats.digests[-1][1]:
                changed.append(item.load() if isinstance(item, FileSummary) else item)
        return stats, changed, skipped, sorted(set(old) - seen)

    def _check_packaging(
        self, db: sqlite3.Connection, changed: list[FileFacts], removed: list[str]
    ) -> None:
        paths = [f.path for f in changed if pyroots.packaging_text(f) is not None]
        paths += [f.path for f in changed if PurePosixPath(f.path).name == "go.mod"]
        for path in removed:
            hit = db.execute("SELECT 1 FROM packaging WHERE path = ?", (path,)).fetchone()
            if hit is not None or PurePosixPath(path).name == "go.mod":
                paths.append(path)
        old = {r[0] for r in db.execute("SELECT path FROM packaging")}
        paths += [f.path for f in changed if f.path in old]
        if paths:
            raise Fallback(f"packaging changed: {sorted(set(paths))[0]}")

    def _roots(
        self, db: sqlite3.Connection, small: SymbolTable, changed: list[FileFacts], rm: list[str]
    ) -> list[str]:
        gone = {f.path for f in changed} | set(rm)
        python = [r[0] for r in db.execute("SELECT path FROM files WHERE language = 'python'")]
        python = [p for p in python if p not in gone]
        python += [
            r[0] for r in small.db.execute("SELECT path FROM files WHERE language = 'python'")
        ]
        packaging = db.execute("SELECT path, text FROM packaging ORDER BY path").fetchall()
        roots = pyroots.find_roots(packaging, python)
        old = json.loads(ledger.read_meta(db).get("roots", "null"))
        if roots != old:
            raise Fallback("source roots changed")
        return roots

    def _changed(
        self, db: sqlite3.Connection, new: sqlite3.Connection, touched: list[str]
    ) -> tuple[set[str], set[str], set[str]]:
        names: set[str] = set()
        keys: set[str] = set()
        qns: set[str] = set()
        for path in touched:
            for item in changed_items(surface(db, path), surface(new, path)):
                n, k, q = item_names(item)
                names |= n | star_names(db, item) | star_names(new, item)
                keys |= k
                qns |= q
        return names, keys, qns

    def _closure(self, db: sqlite3.Connection, names: set[str], touched: list[str]) -> list[str]:
        """Every code file to resolve again: the changed ones and each file whose tokens, or
        whose external sites' tokens (:mod:`semgraph.resolve.xsites`), meet a changed name;
        ``names`` grows by the functions and attributes of those files whose declared types
        name a changed one (:func:`~semgraph.resolve.surface.typed_names`: ``def make() ->
        C`` when a class ``C`` came or went), until none is new."""
        db.execute("CREATE TEMP TABLE IF NOT EXISTS changed_names (token TEXT PRIMARY KEY)")
        db.execute("DELETE FROM changed_names")
        paths: set[str] = set()
        fresh = set(names)
        for _ in range(TYPED_HOPS):  # a return type naming a changed name changes its function
            db.executemany("INSERT OR IGNORE INTO changed_names VALUES (?)", [(n,) for n in fresh])
            paths = {
                r[0]
                for r in db.execute(
                    "SELECT t.path FROM inc_tokens t JOIN changed_names c ON c.token = t.token "
                    "UNION SELECT s.path FROM site_tokens s JOIN changed_names c "
                    "ON c.token = s.token"
                )
            } | set(touched)
            fresh = typed_names(db, paths, names) - names
            if not fresh:
                break
            names |= fresh
        paths |= set(touched)
        code = {r[0] for r in db.execute("SELECT path FROM files WHERE code = 1")}
        out = sorted(paths & code)
        if len(out) > self.limit:
            raise Fallback(f"{len(out)} of {self.n_files} files to resolve again")
        return out

    def _reach_names(
        self, db: sqlite3.Connection, old: dict[str, set[TypeRef]], resolver: _Resolver
    ) -> set[str]:
        """The names a change of which types reach an external interface touches (the table
        is global: the imports and bases it reads are final here, so the resolution keeps
        this one rather than build it again)."""
        new = go_reach.Reach(TypedNames(db, NameLookups(db, self.cap))).keyed()
        resolver.reach_keyed = new
        return go_reach.changed_names(db, old, new)

    def _ledger(
        self,
        db: sqlite3.Connection,
        small: SymbolTable,
        changed: list[FileFacts],
        removed: list[str],
        renamed_new: dict[str, str],
        skipped: list[tuple[str, str]],
    ) -> None:
        for path in removed:
            db.execute("DELETE FROM inc_files WHERE path = ?", (path,))
            db.execute("DELETE FROM inc_tokens WHERE path = ?", (path,))
        for path in [f.path for f in changed] + removed:
            db.execute("DELETE FROM inc_renamed WHERE path = ?", (path,))
        db.executemany("INSERT INTO inc_renamed VALUES (?,?)", sorted(renamed_new.items()))
        facts = dict(small.db.execute("SELECT path, bundle FROM files").fetchall())
        ledger.record_files(db, [(f.path, ledger.row_digest(f)) for f in changed], facts)
        db.execute("DELETE FROM skipped")
        db.executemany("INSERT INTO skipped VALUES (?,?)", skipped)
        db.execute("DELETE FROM dirsuffix")
        db.commit()

    def _resolve(
        self, table: SymbolTable, stats: _FileCounter, closure: list[str], touched: list[str]
    ) -> Resolution:
        db = table.db
        table.build_dir_suffixes()
        res = Resolution(repo_key=self.repo_key, table=table, ambiguous_cap=self.cap)
        res.files_by_language = dict(stats.languages)
        res.files_by_status = dict(stats.statuses)
        res.skipped = dict(stats.skipped)
        res.symbols = db.execute("SELECT count(*) FROM symbols").fetchone()[0]
        renamed = dict(db.execute("SELECT path, prefix FROM inc_renamed").fetchall())
        resolver = _Resolver(res, renamed)
        resolver.keep_reach = not self.go_touched
        code = {r[0]: ImportFile(*r) for r in table.iter_files()}
        done: set[str] = set()
        todo = set(closure)
        old_reach, reach_checked = go_reach.stored(db), resolver.keep_reach
        while todo - done or not reach_checked:
            batch = sorted(todo - done)
            self.old_inherits += delete_results(db, [p for p in batch if p not in touched])
            resolver.resolve_front([code[p] for p in batch])
            done |= set(batch)
            moved = inherits_changed(db, self.old_inherits, sorted(done))
            if moved:  # a class whose bases now resolve otherwise: its relatives' names
                todo |= set(self._closure(db, class_names(db, moved, ()), touched))
            if not todo - done and not reach_checked:  # Go types that reach other interfaces
                reach_checked = True
                todo |= set(self._closure(db, self._reach_names(db, old_reach, resolver), touched))
        resolver.resolve_calls([code[p] for p in sorted(done)])
        db.execute("DELETE FROM sym_stats WHERE possible > 0")
        resolver.finish()
        sum_counts(db, res)
        res.incremental = {"closure": sorted(done)}
        return res
