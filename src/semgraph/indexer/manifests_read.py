"""The root-level manifests of a checked-out work tree, read for package identity (the
parsing is :mod:`semgraph.manifests`, pure). Symbolic links are never followed (a
manifest linked to ``/etc/passwd`` is not read), and no file is read past the size limit."""

from __future__ import annotations

import os
from pathlib import Path

from semgraph.manifests import Identity, identity, is_manifest
from semgraph.manifests.base import MAX_MANIFEST_BYTES

#: at most this many directories are looked at for Python packages (root and ``src/``)
MAX_DIRS = 2_000
#: where JVM sources hold their packages: these together (Kotlin multiplatform adds
#: ``src/<target>Main/kotlin``), else the first of :data:`JVM_FALLBACK_ROOTS` that has any
JVM_ROOTS = ("src/main/java", "src/main/kotlin", "src/main/scala")
JVM_FALLBACK_ROOTS = ("src/java", "src")
JVM_CODE = (".java", ".kt", ".scala")


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(MAX_MANIFEST_BYTES + 1)  # one byte over: the parser refuses it


def _package_dirs(root: Path) -> list[str]:
    out: list[str] = []
    for base in ("", "src"):
        where = root / base if base else root
        try:
            entries = list(os.scandir(where))[:MAX_DIRS]
        except OSError:
            continue
        for e in entries:
            if e.is_dir(follow_symlinks=False) and os.path.isfile(
                os.path.join(e.path, "__init__.py")
            ):
                out.append(f"{base}/{e.name}" if base else e.name)
    return out


def read_identity(root: Path) -> Identity:
    """What the work tree at ``root`` provides and depends on, by its manifests."""
    files: dict[str, bytes] = {}
    try:
        entries = list(os.scandir(root))
    except OSError:
        return Identity()
    for e in entries:
        if is_manifest(e.name) and e.is_file(follow_symlinks=False):
            try:
                files[e.name] = _read(e.path)
            except OSError as exc:
                files.pop(e.name, None)
                ident = Identity(errors=[f"{e.name}: unreadable ({exc.strerror})"])
                return _merge(identity(files, _package_dirs(root), _jvm(root)), ident)
    return identity(files, _package_dirs(root), _jvm(root))


def _jvm(root: Path) -> list[str]:
    """The JVM packages the sources declare by their directories: the shallowest directory
    holding JVM code on each branch (``org.apache.commons.lang3``), at most :data:`MAX_DIRS`
    directories looked at per root; links never followed."""
    try:
        targets = sorted(e.name for e in os.scandir(root / "src") if e.name.endswith("Main"))
    except OSError:
        targets = []
    main = [*JVM_ROOTS, *(f"src/{t}/kotlin" for t in targets[:MAX_DIRS])]
    found = sorted({p for base in main for p in _packages(root / base)})
    for base in JVM_FALLBACK_ROOTS:
        found = found or _packages(root / base)
    return found


def _packages(top: Path) -> list[str]:
    """The shallowest directory holding JVM code on each branch under ``top``, dotted."""
    out: list[str] = []
    todo, seen = [str(top)], 0
    while todo and seen < MAX_DIRS:
        where = todo.pop()
        seen += 1
        try:
            entries = list(os.scandir(where))
        except OSError:
            continue
        code = any(e.name.endswith(JVM_CODE) and e.is_file(follow_symlinks=False) for e in entries)
        if code and where != str(top):
            out.append(os.path.relpath(where, top).replace(os.sep, "."))
            continue
        todo += sorted((e.path for e in entries if e.is_dir(follow_symlinks=False)), reverse=True)
    return sorted(out)


def _merge(a: Identity, b: Identity) -> Identity:
    return Identity(a.provides + b.provides, a.depends + b.depends, a.errors + b.errors).merged()
