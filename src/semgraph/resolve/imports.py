"""Import resolution: each import becomes an edge (to a file of the repository, to an
external module, or unresolved) and a set of *bindings* (local name -> what it names) that
call resolution uses for its import tier.

Binding targets, as ``(kind, target)``:

* ``("file", path)`` — a module of this repository (``import pkg.mod as m``);
* ``("dir", dir)`` — a Go package (every file of the directory);
* ``("member", "path\\x00name")`` — a name inside a module (``from m import f``);
* ``("external", name)`` — something outside the repository;
* local name ``"*"`` with kind ``"file"`` / ``"dir"`` — everything top-level is visible
  (C ``#include``, Python ``from m import *``, Java ``import pkg.*``).

The module is over 300 lines because it is one resolver: the per-language rules (Python
packages and relative imports, JS/TS paths and index files, Go modules, Java packages, Rust
crates, C includes) share its lookups and its cache, and none is long enough to stand alone.
The languages added later (C#, Kotlin, Scala, Ruby, PHP, Swift, Bash, Lua) are in
:mod:`semgraph.resolve.import_handlers`, through the same lookups.
"""

from __future__ import annotations

import json
import posixpath
import sqlite3
import sys
from collections.abc import Iterator
from functools import partial

from semgraph.resolve import import_handlers
from semgraph.resolve.import_types import MEMBER_SEP, ImportFile, ImportOutcome
from semgraph.resolve.symtab import SymbolTable

JS_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".d.ts")
C_EXTENSIONS = (".h", ".hpp", ".hh", ".c", ".cc", ".cpp")
RUST_EXTERNAL_ROOTS = frozenset({"std", "core", "alloc"})
_STDLIB = frozenset(sys.stdlib_module_names)
__all__ = ["MEMBER_SEP", "ImportFile", "ImportOutcome", "ImportResolver", "iter_raw_imports"]


class ImportResolver:
    """Resolves the imports of one repository against its symbol table."""

    def __init__(self, table: SymbolTable) -> None:
        self.db: sqlite3.Connection = table.db
        self._module_cache: dict[tuple[str, str, str], str | None] = {}
        self._go_modules = list(self.db.execute("SELECT dir, module FROM go_modules"))

    # -- lookups ------------------------------------------------------------------------------

    def file_exists(self, path: str) -> bool:
        row = self.db.execute("SELECT 1 FROM files WHERE path = ? AND code = 1", (path,))
        return row.fetchone() is not None

    def dir_exists(self, directory: str, fam: str) -> bool:
        row = self.db.execute(
            "SELECT 1 FROM files WHERE dir = ? AND family = ? AND code = 1 LIMIT 1",
            (directory, fam),
        )
        return row.fetchone() is not None

    def module_path(self, dotted: str, fam: str, importer_dir: str) -> str | None:
        """The file whose module name is ``dotted`` or ends with ``.dotted``; when several
        match, the exact name, else the one nearest the importer, else None (not a guess)."""
        cache_key = (dotted, fam, importer_dir)
        if cache_key not in self._module_cache:
            rows = [
                r[0]
                for r in self.db.execute(
                    "SELECT path FROM modsuffix WHERE suffix = ? AND family = ? LIMIT 50",
                    (dotted, fam),
                )
            ]
            self._module_cache[cache_key] = _pick_nearest(rows, importer_dir, dotted, self.db)
        return self._module_cache[cache_key]

    def dir_by_suffix(self, dotted: str, fam: str) -> str | None:
        rows = [
            r[0]
            for r in self.db.execute(
                "SELECT DISTINCT dir FROM dirsuffix WHERE suffix = ? AND family = ? LIMIT 2",
                (dotted, fam),
            )
        ]
        return rows[0] if len(rows) == 1 else None

    # -- per language -----------------------------------------------------------------------

    def resolve(
        self, f: ImportFile, module: str, names: list[str], alias: str | None
    ) -> ImportOutcome:
        handler = {
            "python": self._python,
            "js": self._js,
            "go": self._go,
            "java": self._dotted,
            "rust": self._rust,
            "c": self._c,
        }.get(f.family)
        if handler is None and f.family in import_handlers.HANDLERS:
            handler = partial(import_handlers.HANDLERS[f.family], self)
        if handler is None or not module.strip():
            return ImportOutcome("unresolved", None, None, ())
        return handler(f, module.strip(), names, alias)

    def _python(
        self, f: ImportFile, module: str, names: list[str], alias: str | None
    ) -> ImportOutcome:
        dots = len(module) - len(module.lstrip("."))
        absolute = _python_absolute(f, module, dots)
        if not names:
            return self._python_module(f, absolute, alias, relative=dots > 0)
        return self._python_from(f, absolute, names, alias, relative=dots > 0)

    def _py_path(self, f: ImportFile, dotted: str, relative: bool) -> str | None:
        """The file of a Python module; an absolute import of a standard library name (or
        of the importing file itself) must name the module exactly (``import json`` in
        ``pkg/json/__init__.py`` is the standard library's)."""
        target = self.module_path(dotted, "python", f.dir)
        if target is None or relative:
            return target
        exact = self.db.execute(
            "SELECT 1 FROM files WHERE path = ? AND module = ?", (target, dotted)
        ).fetchone()
        if exact is None and (target == f.path or dotted.split(".")[0] in _STDLIB):
            return None
        return target

    def _python_module(
        self, f: ImportFile, absolute: str, alias: str | None, relative: bool
    ) -> ImportOutcome:
        """``import a.b.c [as x]``."""
        target = self._py_path(f, absolute, relative)
        local = alias or absolute.split(".")[0]
        if target is None:
            if relative:
                return ImportOutcome("unresolved", None, None, ())
            return ImportOutcome("external", "external", absolute, ((local, "external", absolute),))
        binds = [(alias or absolute, "file", target)]
        if not alias and "." in absolute:
            root = self._py_path(f, local, relative)
            if root is not None:
                binds.append((local, "file", root))
        return ImportOutcome("internal", "file", target, tuple(binds))

    def _python_from(
        self, f: ImportFile, absolute: str, names: list[str], alias: str | None, relative: bool
    ) -> ImportOutcome:
        """``from m import a, b as c`` (each name a submodule or a member of ``m``)."""
        mod_path = self._py_path(f, absolute, relative) if absolute else None
        binds: list[tuple[str, str, str]] = []
        sub_target: str | None = None
        for name in names:
            local = alias if alias and len(names) == 1 else name
            if name == "*":
                if mod_path:
                    binds.append(("*", "file", mod_path))
                continue
            sub = self._py_path(f, f"{absolute}.{name}" if absolute else name, relative)
            if sub is not None:
                binds.append((local, "file", sub))
                sub_target = sub_target or sub
            elif mod_path is not None:
                binds.append((local, "member", f"{mod_path}{MEMBER_SEP}{name}"))
            elif not relative:
                binds.append((local, "external", absolute))
        target = mod_path or sub_target
        if target is not None:
            return ImportOutcome("internal", "file", target, tuple(binds))
        if relative:
            return ImportOutcome("unresolved", None, None, ())
        return ImportOutcome("external", "external", absolute, tuple(binds))

    def exports_of(self, f: ImportFile, module_binds: dict[str, tuple[str, str]]) -> list[str]:
        """JS/TS: ``exported\tpath\tmember`` of each export a name lookup does not find
        (``File.reexports``): a local name through the module's own imports, an
        instance of a class as the class."""
        out: set[str] = set()
        rows = self.db.execute(
            "SELECT module, member, exported FROM exports_raw WHERE path = ? ORDER BY rowid",
            (f.path,),
        )
        for module, member, exported in rows.fetchall() if f.family == "js" else ():
            if not module:
                kind, target = module_binds.get(member, ("", ""))
                if kind == "member":
                    out.add(f"{exported}\t{target.replace(MEMBER_SEP, chr(9), 1)}")
                elif kind == "file":
                    out.add(f"{exported}\t{target}\t*")
                elif not kind:
                    out.add(
                        f"{exported}\t{f.path}\t{import_handlers.instance_of(self.db, f, member)}"
                    )
                continue
            found = self.resolve(f, module, [], None)
            if found.status == "internal" and found.dst_kind == "file" and found.dst:
                out.add(f"{exported}\t{found.dst}\t{member}")
        return sorted(out)

    def _js(self, f: ImportFile, module: str, names: list[str], alias: str | None) -> ImportOutcome:
        if not module.startswith((".", "/")):
            parts = module.split("/")
            package = "/".join(parts[:2]) if module.startswith("@") else parts[0]
            return ImportOutcome(
                "external", "external", package, import_handlers.js_external(module, names, alias)
            )
        base = posixpath.normpath(
            posixpath.join(f.dir, module.lstrip("/") if module.startswith("/") else module)
        )
        if module.startswith("/"):
            base = posixpath.normpath(module.lstrip("/"))
        candidates = [base] + [base + ext for ext in JS_EXTENSIONS]
        stem, dot, ext = base.rpartition(".")
        if dot and ext in ("js", "jsx", "mjs", "cjs"):  # TS ESM: `./x.js` is the source x.ts
            candidates += [f"{stem}.{ts}" for ts in ("ts", "tsx", "mts", "cts", "d.ts")]
        folder = "" if base == "." else f"{base}/"  # require("../") from a top directory
        candidates += [f"{folder}index{ext}" for ext in JS_EXTENSIONS]
        target = next((c for c in candidates if self.file_exists(c)), None)
        if target is None:
            return ImportOutcome("unresolved", None, None, ())
        return ImportOutcome(
            "internal", "file", target, import_handlers.js_internal(target, names, alias)
        )

    def _go(self, f: ImportFile, module: str, names: list[str], alias: str | None) -> ImportOutcome:
        module = module.strip('"')
        local = alias or import_handlers.go_package_name(module)
        directory = self._go_dir(module)
        if directory is None:
            binds = () if local in ("_", ".") else ((local, "external", module),)
            return ImportOutcome("external", "external", module, binds)
        if local == "_":
            return ImportOutcome("internal", "dir", directory, ())
        return ImportOutcome(
            "internal", "dir", directory, (("*" if local == "." else local, "dir", directory),)
        )

    def _go_dir(self, module: str) -> str | None:
        for mod_dir, mod_name in self._go_modules:
            if module == mod_name or module.startswith(mod_name + "/"):
                rest = module[len(mod_name) :].lstrip("/")
                directory = posixpath.normpath(posixpath.join(mod_dir, rest)) if rest else mod_dir
                directory = "" if directory == "." else directory
                return directory if self.dir_exists(directory, "go") else None
        parts = module.split("/")
        if self._go_modules or "." not in parts[0]:
            return None
        for i in range(1, len(parts) - 1):  # at least two trailing segments must match
            found = self.dir_by_suffix(".".join(parts[i:]), "go")
            if found is not None:
                return found
        return None

    def _dotted(
        self, f: ImportFile, module: str, names: list[str], alias: str | None, sep: str = "."
    ) -> ImportOutcome:
        text = module.removeprefix("static ").strip()
        parts = [p for p in text.split(sep) if p]
        if names:
            parts_pkg, members = parts, names
        elif parts and parts[-1] == "*":
            parts_pkg, members = parts[:-1], ["*"]
        else:
            parts_pkg, members = parts[:-1], parts[-1:]
        dotted_full = ".".join(parts_pkg + ([] if members == ["*"] or names else members))
        if members == ["*"]:
            directory = self.dir_by_suffix(".".join(parts_pkg), f.family)
            if directory is not None:
                return ImportOutcome("internal", "dir", directory, (("*", "dir", directory),))
            if f.family == "java" and len(parts_pkg) > 1:  # one package in several roots
                dirs = import_handlers.package_dirs(self.db, ".".join(parts_pkg), f.family)
                if dirs:
                    binds = tuple(("*", "dir", d) for d in dirs)
                    return ImportOutcome("internal", "dir", dirs[0], binds)
            return ImportOutcome("external", "external", ".".join(parts_pkg), ())
        target = self.module_path(dotted_full, f.family, f.dir) if dotted_full else None
        if target is not None and not names:
            # `import com.acme.Strings` names the class inside Strings.java
            local = alias or members[-1]
            return ImportOutcome(
                "internal",
                "file",
                target,
                ((local, "member", f"{target}{MEMBER_SEP}{members[-1]}"),),
            )
        pkg_path = target or (
            self.module_path(".".join(parts_pkg), f.family, f.dir) if parts_pkg else None
        )
        if pkg_path is None and names and f.family == "java":  # `import a.b.C` as (a.b, [C])
            files = [
                (m, self.module_path(".".join([*parts_pkg, m]), f.family, f.dir)) for m in names
            ]
            found = [(m, p) for m, p in files if p is not None]
            if found:
                binds = tuple(
                    ((alias if alias and len(names) == 1 else m), "member", f"{p}{MEMBER_SEP}{m}")
                    for m, p in found
                )
                return ImportOutcome("internal", "file", found[0][1], binds)
        if pkg_path is not None:
            binds = tuple(
                (
                    (alias if alias and len(members) == 1 else m),
                    "member",
                    f"{pkg_path}{MEMBER_SEP}{m}",
                )
                for m in members
            )
            return ImportOutcome("internal", "file", pkg_path, binds)
        name = ".".join(parts_pkg) if names else ".".join(parts)
        aliased = alias if alias and len(members) == 1 else None
        binds = tuple(  # an alias keeps the name it imports (the cross-repository site's)
            (
                aliased or m,
                "external",
                f"{name}{MEMBER_SEP}{m}" if aliased not in (None, m) else name,
            )
            for m in members
        )
        return ImportOutcome("external", "external", name, binds)

    def _rust(
        self, f: ImportFile, module: str, names: list[str], alias: str | None
    ) -> ImportOutcome:
        parts = [p for p in module.split("::") if p]
        if parts and parts[0] in RUST_EXTERNAL_ROOTS:
            binds = tuple((alias or m, "external", parts[0]) for m in (names or parts[-1:]))
            return ImportOutcome("external", "external", "::".join(parts[:1]), binds)
        while parts and parts[0] in ("crate", "self", "super"):
            parts = parts[1:]
        dotted = ".".join(parts)
        if names and parts and self.module_path(dotted, f.family, f.dir) is None:
            inner = f"{dotted}.mod"  # a module in a directory: buffer/mod.rs
            dotted = inner if self.module_path(inner, f.family, f.dir) is not None else dotted
        return self._dotted(f, dotted, names, alias)

    def _c(self, f: ImportFile, module: str, names: list[str], alias: str | None) -> ImportOutcome:
        header = module.strip('<>"')
        local = posixpath.normpath(posixpath.join(f.dir, header))
        if self.file_exists(local):
            return ImportOutcome("internal", "file", local, (("*", "file", local),))
        stem, _ = posixpath.splitext(header)
        target = self.module_path(stem.replace("/", "."), "c", f.dir)
        if (
            target is not None
            and target.endswith(C_EXTENSIONS)
            and target.endswith(posixpath.splitext(header)[1] or ".h")
        ):
            return ImportOutcome("internal", "file", target, (("*", "file", target),))
        return ImportOutcome("external", "external", header, ())


def _python_absolute(f: ImportFile, module: str, dots: int) -> str:
    """The absolute dotted module of a (possibly relative) Python import."""
    rest = module[dots:]
    if not dots:
        return rest
    package = f.module.split(".")
    if not f.path.endswith("__init__.py"):
        package = package[:-1]
    package = package[: max(0, len(package) - (dots - 1))]
    return ".".join([*package, *([rest] if rest else [])])


def _pick_nearest(
    paths: list[str], importer_dir: str, dotted: str, db: sqlite3.Connection
) -> str | None:
    if len(paths) <= 1:
        return paths[0] if paths else None
    exact = [
        p
        for p in paths
        if db.execute("SELECT 1 FROM files WHERE path = ? AND module = ?", (p, dotted)).fetchone()
    ]
    if len(exact) == 1:
        return exact[0]

    def shared(p: str) -> int:
        a, b = posixpath.dirname(p).split("/"), importer_dir.split("/")
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n

    scores = sorted(((shared(p), p) for p in paths), reverse=True)
    if scores[0][0] > scores[1][0]:
        return scores[0][1]
    return None


def iter_raw_imports(
    db: sqlite3.Connection, path: str
) -> Iterator[tuple[str, list[str], str | None, int]]:
    for module, names, alias, line in db.execute(
        "SELECT module, names, alias, line FROM imports_raw WHERE path = ? ORDER BY id", (path,)
    ):
        yield module, list(json.loads(names)), alias, line
