"""Rust's dependency crates: since the 2018 edition a crate the package depends on
is in scope in every file without a ``use`` (``itoa::Buffer::new()``). The crates are read
from every ``Cargo.toml`` of the repository (the ``packaging`` table of
:mod:`semgraph.resolve.symtab`: ``[dependencies]``, ``[dev-dependencies]``,
``[build-dependencies]`` and their ``[target.*]`` forms, by the name the code uses: the key,
``-`` read as ``_``). A file whose call path starts at one, with no binding of that name, is
given the binding and an external import edge of the crate (the line of its first use), as
an ``extern crate`` would: the call is external, and its site names the crate
(:mod:`semgraph.resolve.xsites`)."""

from __future__ import annotations

import posixpath
import sqlite3
import tomllib
from typing import Any

_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


def _keys(doc: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for table in _TABLES:
        found = doc.get(table)
        out |= {k for k in found if isinstance(k, str)} if isinstance(found, dict) else set()
    return out


def dependency_crates(db: sqlite3.Connection) -> frozenset[str]:
    """The crate names every ``Cargo.toml`` of the symbol table ``db`` depends on."""
    out: set[str] = set()
    for path, text in db.execute("SELECT path, text FROM packaging ORDER BY path"):
        if posixpath.basename(path) != "Cargo.toml":
            continue
        try:
            doc = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            continue  # a malformed manifest names no crate
        out |= _keys(doc)
        targets = doc.get("target")
        for spec in targets.values() if isinstance(targets, dict) else ():
            out |= _keys(spec) if isinstance(spec, dict) else set()
    return frozenset(k.replace("-", "_") for k in out if k.replace("-", "_").isidentifier())


def implicit(
    db: sqlite3.Connection, path: str, bound: set[str], crates: frozenset[str]
) -> list[tuple[str, int]]:
    """(crate, first line) of each dependency crate a call path of ``path`` starts at, that
    no module-level binding of the file names."""
    if not crates:
        return []
    first: dict[str, int] = {}
    for receiver, line in db.execute(
        "SELECT receiver, line FROM calls_raw WHERE path = ? ORDER BY id", (path,)
    ):
        root = (receiver or "").split("::", 1)[0]
        if root in crates and root not in bound and "::" not in root:
            first.setdefault(root, line)
    return sorted(first.items())
