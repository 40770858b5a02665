"""What a name means, seen from one file: the file's own symbols and import bindings
(:class:`FileScope`), and the lookups in the symbol table that call and base resolution
share (:class:`NameLookups`): top-level definitions of a bound file or Go package, what an
imported name binds, a class's members (through its bases), definitions by name across the
repository, a JVM package's directories, what a JS/TS file exports.

It is a little over 300 lines: each lookup is a query and its small cache, and the lookups
call each other (a re-export is followed through ``top_level``), so they stay one class.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from semgraph.resolve.go_types import GoTypes, is_go_key
from semgraph.resolve.import_handlers import MAX_PACKAGE_DIRS
from semgraph.resolve.imports import MEMBER_SEP, ImportFile
from semgraph.resolve.symtab import CLASS_KINDS


@dataclass(slots=True)
class Sym:
    key: str
    qn: str
    name: str
    kind: str
    parent_key: str | None
    start: int
    end: int


class FileScope:
    """One file's symbols and bindings, loaded while that file's calls are resolved."""

    def __init__(self, db: Any, path: str) -> None:
        self.by_key: dict[str, Sym] = {}
        self.by_qn: dict[str, list[Sym]] = defaultdict(list)
        self.module_key = ""
        self.module_qn = ""
        for row in db.execute(
            "SELECT key, qn, name, kind, parent_key, start_line, end_line FROM symbols "
            "WHERE path = ? ORDER BY rowid",
            (path,),
        ):
            sym = Sym(*row)
            self.by_key[sym.key] = sym
            self.by_qn[sym.qn].append(sym)
            if sym.parent_key is None:
                self.module_key, self.module_qn = sym.key, sym.qn
        self.bindings: dict[str, tuple[str, str]] = {}  # module-level imports
        self.star: list[tuple[str, str]] = []
        self.local_imports: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
        for local, kind, target, within in db.execute(
            "SELECT local, kind, target, scope_key FROM bindings WHERE path = ? ORDER BY rowid",
            (path,),
        ):
            if within is not None:  # an import inside a function binds there only
                self.local_imports[within][local] = (kind, target)
            elif local == "*":
                self.star.append((kind, target))
            else:
                self.bindings[local] = (kind, target)

    def enclosing(self, qn: str, line: int) -> Sym | None:
        syms = self.by_qn.get(qn)
        if not syms:
            return self.by_key.get(self.module_key)
        for sym in reversed(syms):
            if sym.start <= line <= sym.end:
                return sym
        return syms[0]

    def binding(self, name: str, src: Sym | None) -> tuple[str, str] | None:
        """What an import binds ``name`` to, seen from ``src``: the imports of the enclosing
        functions first, then the module's."""
        if self.local_imports:
            for sym in self.ancestors(src):
                found = self.local_imports.get(sym.key, {}).get(name)
                if found is not None:
                    return found
        return self.bindings.get(name)

    def ancestors(self, sym: Sym | None) -> Iterator[Sym]:
        while sym is not None:
            yield sym
            sym = self.by_key.get(sym.parent_key) if sym.parent_key else None


@dataclass(slots=True)
class Ctx:
    """Where a receiver is evaluated: the file's scope and imports, the enclosing symbol."""

    scope: FileScope
    f: ImportFile
    src: Sym


_SOURCE_ROOT = re.compile(r"(?:^|/)(?:java|kotlin|scala)/(.+)$")  # a JVM source root's package


class NameLookups:
    """Lookups by name in the symbol table (a cache of repository-wide name lookups)."""

    def __init__(self, db: Any, ambiguous_cap: int) -> None:
        self.db = db
        self.ambiguous_cap = ambiguous_cap
        self._name_cache: dict[tuple[str, str, str], tuple[int, list[str]]] = {}
        self._package_cache: dict[tuple[str, str], list[str]] = {}

    def top_level(self, kind: str, target: str, name: str, fam: str, depth: int = 0) -> list[str]:
        """Top-level definitions named ``name`` in a bound file / Go package directory; a
        file's name that is a re-export (``from .models import Thing`` in a package
        ``__init__``, or a ``*`` import there) is followed to its definition."""
        if kind == "file":
            sql = "SELECT key FROM symbols WHERE path = ? AND name = ? AND toplevel = 1"
            keys = [r[0] for r in self.db.execute(sql, (target, name))]
            if keys or depth >= 4:
                return keys
            return self._reexported(target, name, fam, depth + 1)
        if kind == "dir":
            sql = (
                "SELECT s.key FROM symbols s JOIN files f ON f.path = s.path "
                "WHERE f.dir = ? AND f.family = ? AND s.name = ? AND s.toplevel = 1 "
                "AND s.kind != 'method'"
            )
            return [r[0] for r in self.db.execute(sql, (target, fam, name))]
        if kind == "member":
            path, member = target.split(MEMBER_SEP, 1)
            return self.top_level("file", path, member, fam, depth) if member == name else []
        return []

    def package_level(
        self, directory: str, name: str, fam: str, kinds: tuple[str, ...]
    ) -> list[str]:
        """Top-level definitions of ``kinds`` named ``name`` in a package directory (Java,
        Kotlin, Scala: a package's classes need no import in its own files)."""
        dirs = self.package_dirs(directory, fam)
        marks, places = ",".join("?" * len(kinds)), ",".join("?" * len(dirs))
        sql = (
            "SELECT s.key FROM symbols s JOIN files f ON f.path = s.path "
            f"WHERE f.dir IN ({places}) AND f.family = ? AND s.name = ? AND s.toplevel = 1 "
            f"AND s.kind IN ({marks})"
        )
        return [r[0] for r in self.db.execute(sql, (*dirs, fam, name, *kinds))]

    def package_dirs(self, directory: str, fam: str) -> list[str]:
        """The directories of one JVM package: ``src/main/java/a/b`` and ``src/test/java/a/b``
        (the path after a ``java``/``kotlin``/``scala`` source root names the package), at
        most :data:`MAX_PACKAGE_DIRS`; else the directory alone."""
        found = self._package_cache.get((directory, fam))
        if found is None:
            m = _SOURCE_ROOT.search(directory)
            found = [directory]
            if m is not None:
                package = m.group(1)
                found += [
                    d
                    for (d,) in self.db.execute(
                        "SELECT DISTINCT dir FROM dirsuffix WHERE suffix = ? AND family = ? "
                        "ORDER BY dir LIMIT ?",
                        (package.replace("/", "."), fam, MAX_PACKAGE_DIRS),
                    )
                    if d != directory and d.endswith(f"/{package}") and _SOURCE_ROOT.search(d)
                ]
            self._package_cache[(directory, fam)] = found
        return found

    def _reexported(self, path: str, name: str, fam: str, depth: int) -> list[str]:
        for local, kind, target in self.db.execute(
            "SELECT local, kind, target FROM bindings WHERE path = ? AND local IN (?, '*') "
            "AND scope_key IS NULL ORDER BY rowid",
            (path, name),
        ).fetchall():
            if kind == "member" and local == name:
                member_path, member = target.split(MEMBER_SEP, 1)
                keys = self.top_level("file", member_path, member, fam, depth)
            elif kind == "file" and local == "*":
                keys = self.top_level("file", target, name, fam, depth)
            else:
                continue
            if keys:
                return keys
        return self._js_exported(path, name, fam, depth) if fam == "js" else []

    def js_default(self, module: str) -> list[str]:
        """What calling a JS/TS module (``file<NUL>path``, a ``require``) calls: the
        definition its ``module.exports =`` (or ``export default``) names; a module of
        another language has no exports, so none."""
        kind, _, target = module.partition(MEMBER_SEP)
        return self._js_exported(target, "default", "js", 0) if kind == "file" else []

    def _js_exported(self, path: str, name: str, fam: str, depth: int) -> list[str]:
        """What a JS/TS file exports as ``name`` (``export default C``, ``module.exports =
        C``, ``export {a as name}``, ``export * from``: never its default), read from the
        resolved exports."""
        for (entry,) in self.db.execute(
            "SELECT entry FROM file_exports WHERE path = ? ORDER BY entry", (path,)
        ).fetchall():
            exported, _, rest = entry.partition("\t")
            target, _, member = rest.partition("\t")
            if exported == name and member not in ("*", name if target == path else ""):
                keys = self.top_level("file", target, member, fam, depth)
            elif exported == "*" and member == "*" and target != path and name != "default":
                keys = self.top_level("file", target, name, fam, depth)
            else:
                continue
            if keys:
                return keys
        return []

    def bound(
        self, scope: FileScope, name: str, fam: str, src: Sym | None = None
    ) -> tuple[str, list[str]] | None:
        """What an imported ``name`` refers to (seen from ``src``, default the module):
        ("external", []), ("symbols", keys) or ("module", [kind\0target])."""
        bound = scope.binding(name, src)
        if bound is not None:
            kind, target = bound
            if kind == "external":
                return "external", []
            if kind == "member":
                path, member = target.split(MEMBER_SEP, 1)
                keys = self.top_level("file", path, member, fam)
                return ("symbols", keys) if keys else None
            return "module", [f"{kind}{MEMBER_SEP}{target}"]
        for kind, target in scope.star:
            keys = self.top_level(kind, target, name, fam)
            if keys:
                return "symbols", keys
        return None

    def members(self, class_key: str, name: str, depth: int = 0) -> list[str]:
        keys = [
            r[0]
            for r in self.db.execute(
                "SELECT key FROM symbols WHERE parent_key = ? AND name = ?", (class_key, name)
            )
        ]
        if not keys and is_go_key(class_key):  # a Go method may be in another file
            keys = GoTypes.of(self).methods(class_key, name)
        if keys or depth >= 4:
            return keys
        for (parent,) in self.db.execute(
            "SELECT parent_key FROM inherits WHERE child_key = ? ORDER BY rowid", (class_key,)
        ):
            keys = self.members(parent, name, depth + 1)
            if keys:
                return keys
        return []

    def by_name(self, name: str, fam: str, kinds: tuple[str, ...]) -> tuple[int, list[str]]:
        """(number of definitions, their keys when at most the cap) across the repository."""
        cache_key = (name, fam, kinds[0])
        hit = self._name_cache.get(cache_key)
        if hit is None:
            marks = ",".join("?" * len(kinds))
            rows = self.db.execute(
                f"SELECT key FROM symbols WHERE name = ? AND family = ? AND kind IN ({marks}) "
                "LIMIT ?",
                (name, fam, *kinds, self.ambiguous_cap + 1),
            ).fetchall()
            if len(rows) > self.ambiguous_cap:
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

    def classes_named(self, scope: FileScope, name: str, f: ImportFile) -> list[str]:
        bound = self.bound(scope, name, f.family)
        if bound is not None:
            return bound[1] if bound[0] == "symbols" else []
        local = self.top_level(
            "dir" if f.family == "go" else "file",
            f.dir if f.family == "go" else f.path,
            name,
            f.family,
        )
        if local:
            return local
        _, keys = self.by_name(name, f.family, tuple(sorted(CLASS_KINDS)))
        return keys

    def has_external_base(self, cls: str, up: int = 0) -> bool:
        """Whether class ``cls`` (or a base) names a base the repository does not define
        (its members may be that base's)."""
        named = self.db.execute("SELECT count(*) FROM bases WHERE child_key = ?", (cls,))
        resolved = self.db.execute("SELECT count(*) FROM inherits WHERE child_key = ?", (cls,))
        if int(named.fetchone()[0]) > int(resolved.fetchone()[0]):
            return True
        parents = self.db.execute(
            "SELECT parent_key FROM inherits WHERE child_key = ? ORDER BY rowid", (cls,)
        )
        return up < 4 and any(self.has_external_base(p, up + 1) for (p,) in parents.fetchall())

    def is_class(self, key: str) -> bool:
        row = self.db.execute("SELECT kind FROM symbols WHERE key = ?", (key,)).fetchone()
        return row is not None and row[0] in CLASS_KINDS
