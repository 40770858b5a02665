"""Python source roots: in a src layout the module of ``src/pkg/api.py`` is
``pkg.api``, what an import of it says, not ``src.pkg.api``.

The roots come from the repository's packaging metadata, read from the parsed model's text
chunks of ``pyproject.toml`` and ``setup.cfg`` (setuptools ``package-dir`` and
``packages.find.where``, hatch wheel ``packages`` / ``sources``, poetry ``packages`` ``from``,
setup.cfg ``package_dir`` and ``options.packages.find`` ``where``), each relative to the file's
directory, else from the layout itself: a directory named ``src`` that holds a package (a
directory with ``__init__.py``). :func:`apply_roots` then renames the symbol table's modules,
qualified names and keys of the Python files under a root, before anything reads them.
"""

from __future__ import annotations

import configparser
import posixpath
import sqlite3
import tomllib
from collections.abc import Iterable
from typing import Any

from semgraph.model import FileFacts

PACKAGING_FILES = frozenset({"pyproject.toml", "setup.cfg", "Cargo.toml"})  # Cargo: rust_crates
MAX_PACKAGING_CHARS = 256_000
MAX_ROOTS = 64


def packaging_text(facts: FileFacts) -> str | None:
    """The text of a packaging file, rebuilt from its chunks (which may overlap)."""
    name = posixpath.basename(facts.path)
    if (name not in PACKAGING_FILES and not name.endswith(".gemspec")) or not facts.chunks:
        return None  # (a gemspec: the gems a Ruby file's constants may name, open_sites)
    lines: dict[int, str] = {}
    for chunk in facts.chunks:
        for i, line in enumerate(chunk.text.split("\n")):
            lines.setdefault(chunk.start_line + i, line)
    text = "\n".join(lines[n] for n in sorted(lines))
    return text if len(text) <= MAX_PACKAGING_CHARS else None


def _dirs_of(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _table(data: Any, *keys: str) -> dict[str, Any]:
    """``data[k1][k2]...`` when every step is a table, else an empty one."""
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def roots_from_pyproject(text: str) -> list[str]:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return []
    out: list[str] = []
    out += _dirs_of(_table(data, "tool", "setuptools", "package-dir").get(""))
    out += _dirs_of(_table(data, "tool", "setuptools", "packages", "find").get("where"))
    wheel = _table(data, "tool", "hatch", "build", "targets", "wheel")
    for pkg in _dirs_of(wheel.get("packages")):
        parent = posixpath.dirname(pkg.strip("/"))
        if parent:
            out.append(parent)
    sources = wheel.get("sources")
    if isinstance(sources, list):
        out += _dirs_of(sources)
    elif isinstance(sources, dict):
        out += [k for k, v in sources.items() if v == "" and isinstance(k, str)]
    packages = _table(data, "tool", "poetry").get("packages")
    for pkg in packages if isinstance(packages, list) else []:
        if isinstance(pkg, dict) and isinstance(pkg.get("from"), str):
            out.append(pkg["from"])
    return out


def roots_from_setup_cfg(text: str) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except (configparser.Error, ValueError):
        return []
    out: list[str] = []
    package_dir = parser.get("options", "package_dir", fallback="")
    for line in package_dir.replace(";", "\n").splitlines():
        key, sep, value = line.partition("=")
        if sep and not key.strip() and value.strip():
            out.append(value.strip())
    out += _dirs_of(parser.get("options.packages.find", "where", fallback="").strip() or [])
    return out


def _normal(base: str, root: str) -> str | None:
    joined = posixpath.normpath(posixpath.join(base, root.strip()))
    if joined in (".", "") or joined.startswith(("..", "/")):
        return None
    return joined


def find_roots(packaging: Iterable[tuple[str, str]], python_paths: list[str]) -> list[str]:
    """Source roots (repository-relative directories), longest first."""
    roots: set[str] = set()
    for path, text in packaging:
        base = posixpath.dirname(path)
        name = posixpath.basename(path)
        found = roots_from_pyproject(text) if name == "pyproject.toml" else []
        found += roots_from_setup_cfg(text) if name == "setup.cfg" else []
        roots |= {r for r in (_normal(base, x) for x in found) if r is not None}
    inits = {posixpath.dirname(p) for p in python_paths if p.endswith("/__init__.py")}
    for package in inits:
        parent = posixpath.dirname(package)
        if posixpath.basename(parent) == "src" and parent not in inits:
            roots.add(parent)
    return sorted(roots, key=lambda r: (-len(r), r))[:MAX_ROOTS]


def apply_roots(db: sqlite3.Connection, repo_key: str, roots: list[str]) -> dict[str, str]:
    """Rename the modules under each root in the symbol table: (path -> dropped prefix)."""
    renamed: dict[str, str] = {}
    rows = db.execute("SELECT path, module FROM files WHERE language = 'python' AND code = 1")
    for path, module in rows.fetchall():
        root = next((r for r in roots if path.startswith(r + "/")), None)
        if root is None:
            continue
        prefix = root.replace("/", ".") + "."
        if not module.startswith(prefix) or module == prefix[:-1]:
            continue
        renamed[path] = prefix
        _rename(db, repo_key, path, prefix)
    db.commit()
    return renamed


def _rename(db: sqlite3.Connection, repo_key: str, path: str, prefix: str) -> None:
    n = len(prefix)
    head = len(f"{repo_key}|{path}|")
    cut = (head, head + n + 1)  # key = head + qualified name (+ "|2" ...)
    db.execute("UPDATE files SET module = substr(module, ?) WHERE path = ?", (n + 1, path))
    db.execute(
        "UPDATE symbols SET qn = substr(qn, ?), key = substr(key, 1, ?) || substr(key, ?), "
        "parent_key = CASE WHEN parent_key IS NULL THEN NULL "
        "ELSE substr(parent_key, 1, ?) || substr(parent_key, ?) END WHERE path = ?",
        (n + 1, *cut, *cut, path),
    )
    db.execute(
        "UPDATE bases SET child_key = substr(child_key, 1, ?) || substr(child_key, ?) "
        "WHERE path = ?",
        (*cut, path),
    )
    for table, column in (("calls_raw", "enclosing"), ("typed_raw", "scope")):
        db.execute(
            f"UPDATE {table} SET {column} = substr({column}, ?) WHERE path = ? "
            f"AND substr({column}, 1, ?) = ?",
            (n + 1, path, n, prefix),
        )
