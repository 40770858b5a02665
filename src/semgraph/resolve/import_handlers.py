"""Import resolution for Kotlin, Scala, C#, Ruby, PHP, Swift, Bash and Lua.

* kotlin / scala ``import a.b.C``: the file whose module ends with ``a.b.C`` (the class or
  object ``C`` in it), else the file ``a/b.kt`` / ``a/b.scala`` (a member of an object or
  package file), else the one directory ending with ``a/b`` (a top-level function of that
  package: everything top-level in it visible), else external; ``import a.b.*`` / ``a.b._``:
  that directory, or the object file ``a/b``.

* csharp ``using A.B;``: the one directory whose path ends with the namespace (``A/B``,
  ``A.B``, or its tail ``B``), everything top-level in it visible; ``using X = A.B.C`` and
  ``using static A.B.C``: the file ``.../A/B/C.cs``; ``System.*`` / ``Microsoft.*`` external.
* ruby ``require_relative "x"``: ``<dir>/x.rb``; ``require "a/b"``: ``a/b.rb`` or ``lib/a/b.rb``
  or the one file whose module ends with ``a.b``, else the gem ``a`` (external). Everything
  top-level in a required file is visible (``*``).
* php ``use A\\B\\C``: the file whose module ends with ``A.B.C`` (leading segments dropped one
  by one, PSR-4 roots such as ``App\\`` -> ``src/``, down to two); ``require "x.php"``: the
  path relative to the file, then to the repository root (``*``).
* swift ``import M``: the directory named ``M`` (a SwiftPM target, ``Sources/M``), else external.
* bash ``source x.sh``: relative to the script, then to the repository root (``*``).
* lua ``require "a.b"``: ``a/b.lua`` or ``a/b/init.lua`` bound to the local it is assigned to.

And two JS/TS helpers of :mod:`semgraph.resolve.imports` for the cross-repository link:
what an import from a package binds (:func:`js_external`), and the class of an
exported instance (:func:`instance_of`).
"""

from __future__ import annotations

import posixpath
import re
import sqlite3
from collections.abc import Callable
from typing import Protocol

from semgraph.resolve.import_types import MEMBER_SEP, UNRESOLVED, ImportFile, ImportOutcome

CSHARP_EXTERNAL_ROOTS = frozenset({"System", "Microsoft", "Windows", "Newtonsoft", "Xunit"})
SWIFT_EXTERNAL = frozenset(
    {"Foundation", "UIKit", "SwiftUI", "AppKit", "Combine", "XCTest", "Dispatch", "os"}
)


class Lookups(Protocol):
    def file_exists(self, path: str) -> bool: ...

    def module_path(self, dotted: str, fam: str, importer_dir: str) -> str | None: ...

    def dir_by_suffix(self, dotted: str, fam: str) -> str | None: ...


Handler = Callable[[Lookups, ImportFile, str, list[str], str | None], ImportOutcome]


_MAJOR = re.compile(r"v[0-9]+")
_IDENT_HEAD = re.compile(r"\w*")


def _star_file(target: str) -> ImportOutcome:
    return ImportOutcome("internal", "file", target, (("*", "file", target),))


def _first_file(look: Lookups, candidates: list[str]) -> str | None:
    return next((c for c in candidates if c and look.file_exists(c)), None)


def _rel(directory: str, path: str) -> str:
    joined = posixpath.normpath(posixpath.join(directory, path))
    return "" if joined.startswith("..") else joined


def jvm(
    look: Lookups, f: ImportFile, module: str, names: list[str], alias: str | None
) -> ImportOutcome:
    """Kotlin and Scala (``module`` is the package part, ``names`` the imported members)."""
    if not names:
        module, _, last = module.rpartition(".")
        names = [last] if module else []
        module = module or last
    if names == ["*"]:
        directory = look.dir_by_suffix(module, f.family)
        if directory is not None:
            return ImportOutcome("internal", "dir", directory, (("*", "dir", directory),))
        target = look.module_path(module, f.family, f.dir)
        return _star_file(target) if target else ImportOutcome("external", "external", module, ())
    binds: list[tuple[str, str, str]] = []
    first: tuple[str, str] | None = None
    for name in names:
        local = alias if alias and len(names) == 1 else name
        own = look.module_path(f"{module}.{name}", f.family, f.dir)
        holder = own or look.module_path(module, f.family, f.dir)
        if holder is not None:
            binds.append((local, "member", f"{holder}{MEMBER_SEP}{name}"))
            first = first or ("file", holder)
            continue
        directory = look.dir_by_suffix(module, f.family)
        if directory is not None:
            binds.append(("*", "dir", directory))
            first = first or ("dir", directory)
        else:  # an alias keeps the name it imports (the cross-repository site's)
            binds.append(
                (local, "external", module if local == name else f"{module}{MEMBER_SEP}{name}")
            )
    if first is not None:
        return ImportOutcome("internal", first[0], first[1], tuple(dict.fromkeys(binds)))
    return ImportOutcome("external", "external", module, tuple(binds))


def csharp(
    look: Lookups, f: ImportFile, module: str, names: list[str], alias: str | None
) -> ImportOutcome:
    parts = [p for p in module.split(".") if p]
    if not parts:
        return UNRESOLVED
    if parts[0] in CSHARP_EXTERNAL_ROOTS:
        binds = ((alias, "external", module),) if alias else ()
        return ImportOutcome("external", "external", module, binds)
    if names and names != ["*"]:  # using X = A.B.C
        target = look.module_path(".".join([*parts, names[0]]), f.family, f.dir)
        if target is not None:
            local = alias or names[0]
            return ImportOutcome(
                "internal", "file", target, ((local, "member", f"{target}{MEMBER_SEP}{names[0]}"),)
            )
    else:
        target = look.module_path(".".join(parts), f.family, f.dir)  # using static A.B.C
        if target is not None and len(parts) > 1:
            return _star_file(target)
        for i in range(len(parts)):
            directory = look.dir_by_suffix(".".join(parts[i:]), f.family)
            if directory is not None:
                return ImportOutcome("internal", "dir", directory, (("*", "dir", directory),))
    return ImportOutcome("external", "external", module, ())


def ruby(
    look: Lookups, f: ImportFile, module: str, names: list[str], alias: str | None
) -> ImportOutcome:
    path = module if module.endswith(".rb") else f"{module}.rb"
    if module.startswith(("./", "../")):
        target = _first_file(look, [_rel(f.dir, path)])
        return _star_file(target) if target else UNRESOLVED
    target = _first_file(look, [path.lstrip("/"), f"lib/{path}"])
    if target is None:
        dotted = module.removesuffix(".rb").strip("/").replace("/", ".")
        target = look.module_path(dotted, f.family, f.dir)
    if target is not None:
        return _star_file(target)
    gem = module.split("/", 1)[0]
    return ImportOutcome("external", "external", gem, ())


def php(
    look: Lookups, f: ImportFile, module: str, names: list[str], alias: str | None
) -> ImportOutcome:
    if "/" in module or module.endswith((".php", ".inc")):
        candidates = [_rel(f.dir, module)] + ([] if module.startswith(".") else [module])
        target = _first_file(look, candidates)
        return _star_file(target) if target else UNRESOLVED
    parts = [p for p in module.replace("\\", ".").split(".") if p]
    members = names or parts[-1:]
    pkg = parts if names else parts[:-1]
    binds: list[tuple[str, str, str]] = []
    first: str | None = None
    for name in members:
        full = [*pkg, name]
        target = None
        for i in range(max(1, len(full) - 1) if len(full) > 1 else 1):
            target = look.module_path(".".join(full[i:]), f.family, f.dir)
            if target is not None:
                break
        local = alias if alias and len(members) == 1 else name
        if target is not None:
            binds.append((local, "member", f"{target}{MEMBER_SEP}{name}"))
            first = first or target
        else:  # an alias keeps the name it imports (the cross-repository site's)
            ns = "\\".join(pkg)
            binds.append((local, "external", ns if local == name else f"{ns}{MEMBER_SEP}{name}"))
    if first is not None:
        return ImportOutcome("internal", "file", first, tuple(binds))
    return ImportOutcome("external", "external", "\\".join(pkg) or module, tuple(binds))


def swift(
    look: Lookups, f: ImportFile, module: str, names: list[str], alias: str | None
) -> ImportOutcome:
    if module not in SWIFT_EXTERNAL:
        directory = look.dir_by_suffix(module, f.family)
        if directory is not None:
            return ImportOutcome("internal", "dir", directory, (("*", "dir", directory),))
    return ImportOutcome("external", "external", module, ())


def bash(
    look: Lookups, f: ImportFile, module: str, names: list[str], alias: str | None
) -> ImportOutcome:
    if module.startswith(("/", "~")):
        return ImportOutcome("external", "external", module, ())
    target = _first_file(look, [_rel(f.dir, module), posixpath.normpath(module)])
    return _star_file(target) if target else UNRESOLVED


def lua(
    look: Lookups, f: ImportFile, module: str, names: list[str], alias: str | None
) -> ImportOutcome:
    dotted = module.replace("/", ".")
    target = look.module_path(dotted, f.family, f.dir) or look.module_path(
        f"{dotted}.init", f.family, f.dir
    )
    if target is None:
        root = dotted.split(".", 1)[0]
        binds = ((alias, "external", root),) if alias else ()
        return ImportOutcome("external", "external", root, binds)
    binds = ((alias, "file", target),) if alias else (("*", "file", target),)
    return ImportOutcome("internal", "file", target, binds)


HANDLERS: dict[str, Handler] = {
    "kotlin": jvm,
    "scala": jvm,
    "csharp": csharp,
    "ruby": ruby,
    "php": php,
    "swift": swift,
    "bash": bash,
    "lua": lua,
}


def go_package_name(path: str) -> str:
    """The name a Go import binds without an alias when the package clause is not read, by
    the Go tools' own assumption: the last element of the path (the one before it for a
    major version, ``/v2``), less a ``go-`` prefix, up to the first character no identifier
    has (``github.com/mattn/go-runewidth`` -> ``runewidth``, ``gopkg.in/yaml.v3`` ->
    ``yaml``)."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        return path
    base = parts[-1]
    if len(parts) > 1 and _MAJOR.fullmatch(base):
        base = parts[-2]
    base = base.removeprefix("go-")
    return _IDENT_HEAD.match(base).group(0) or base  # type: ignore[union-attr]


def js_external(
    module: str, names: list[str], alias: str | None
) -> tuple[tuple[str, str, str], ...]:
    """The bindings of an import from a package, each to ``specifier<NUL>imported``: the
    exported name it reaches (``default``; ``*`` for a namespace or ``require``), what the
    cross-repository link looks up (:mod:`semgraph.xrepo.npm`)."""
    if alias:
        imported = names[0] if names and names[0] != "*" else "*"
        return ((alias, "external", f"{module}{MEMBER_SEP}{imported}"),)
    return tuple((n, "external", f"{module}{MEMBER_SEP}{n}") for n in names if n != "*")


def instance_of(db: sqlite3.Connection, f: ImportFile, name: str) -> str:
    """The class a module-level ``const name = new Cls()`` holds (its members are the
    class's: ``export default name``), else ``name``."""
    row = db.execute(
        "SELECT text FROM typed_raw WHERE path = ? AND scope = ? AND name = ? "
        "AND kind = 'call' ORDER BY line LIMIT 1",
        (f.path, f.module, name),
    ).fetchone()
    text = row[0] if row is not None else ""
    return text if text.isidentifier() and text[:1].isupper() else name


# a Java package's directories a wildcard import binds (main and test roots, a few modules)
MAX_PACKAGE_DIRS = 8


def package_dirs(db: sqlite3.Connection, dotted: str, fam: str) -> list[str]:
    """Every directory of a dotted package (Java: ``src/main/java/a/b`` and
    ``src/test/java/a/b`` are the one package ``a.b``), at most ``MAX_PACKAGE_DIRS``."""
    return [
        r[0]
        for r in db.execute(
            "SELECT DISTINCT dir FROM dirsuffix WHERE suffix = ? AND family = ? "
            "ORDER BY dir LIMIT ?",
            (dotted, fam, MAX_PACKAGE_DIRS),
        )
    ]


def js_internal(
    target: str, names: list[str], alias: str | None
) -> tuple[tuple[str, str, str], ...]:
    """The bindings of an import of a repository file: ``import d from "m"`` and ``import {b
    as c}`` bind the export (``d`` is m's default); ``import * as ns`` and ``require("m")``
    bind the module (a CommonJS module called is its ``module.exports``, resolved later);
    ``import {a}`` binds ``a``."""
    named = [n for n in names if n != "*"]
    if alias and len(named) == 1:
        return ((alias, "member", f"{target}{MEMBER_SEP}{named[0]}"),)
    binds = [(alias, "file", target)] if alias else []
    binds += [(n, "member", f"{target}{MEMBER_SEP}{n}") for n in named]
    return tuple(binds)
