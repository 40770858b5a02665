"""A file's *surface*: everything of it that another file's resolution can read, and the
names a change of surfaces touches (:mod:`semgraph.resolve.incremental`).

The surface is the file's record (path, module, language, directory), its symbols (names,
kinds, keys, parents, signatures; not their lines), its class bases, its imports (which are
re-exports for others) and its typed bindings that are not a function's locals (module and
class attributes, return types). Call sites and function-local bindings are not surface: a
change that leaves the surface equal is body-only, and only the file's own sites change.

The *changed names* of a surface change are the identifiers of every item that differs
(old or new), and for a class among them every member name of the classes related to it
through bases, both ways (a new method can make a Go type implement an interface; a new
base changes the MRO). For a file added or removed: its module's, file's and directory's last
names; for a star import added or removed, every name it brings (:func:`star_names`). A
file whose tokens (:mod:`semgraph.resolve.ledger`) meet no changed name reads nothing that
changed.
"""

from __future__ import annotations

import json
import posixpath
import sqlite3
from collections.abc import Iterable

from semgraph.model import RETURN
from semgraph.resolve.ledger import idents
from semgraph.resolve.symtab import CLASS_KINDS

Item = tuple[object, ...]
_FUNCTIONS = ("function", "method")


def surface(db: sqlite3.Connection, path: str) -> list[Item]:
    """The surface items of ``path`` in the symbol table ``db``, in a fixed order."""
    items: list[Item] = []
    row = db.execute(
        "SELECT module, language, family, dir, code FROM files WHERE path = ?", (path,)
    ).fetchone()
    if row is None:
        return items
    items.append(("file", path, *row))
    functions: set[str] = set()
    for sym in db.execute(
        "SELECT key, qn, name, kind, parent_key, family, toplevel, signature FROM symbols "
        "WHERE path = ? ORDER BY rowid",
        (path,),
    ):
        items.append(("sym", *sym))
        if sym[3] in _FUNCTIONS:
            functions.add(sym[1])
    items += [
        ("base", *r)
        for r in db.execute(
            "SELECT child_key, text FROM bases WHERE path = ? ORDER BY rowid", (path,)
        )
    ]
    items += [
        ("import", *r)
        for r in db.execute(
            "SELECT module, names, alias FROM imports_raw WHERE path = ? ORDER BY id", (path,)
        )
    ]
    for scope, name, kind, text in db.execute(
        "SELECT scope, name, kind, text FROM typed_raw WHERE path = ? ORDER BY rowid", (path,)
    ):
        if name == RETURN or scope not in functions:
            items.append(("typed", scope, name, kind, text))
    return items


def item_names(item: Item) -> tuple[set[str], set[str], set[str]]:
    """(names, class keys, class qualified names) that one surface item touches."""
    kind = item[0]
    names: set[str] = set()
    keys: set[str] = set()
    qns: set[str] = set()
    if kind == "file":
        path, module, _, _, directory = (str(x) for x in item[1:6])
        names |= idents(str(module).rsplit(".", 1)[-1], posixpath.basename(path))
        names |= idents(directory.rsplit("/", 1)[-1])
    elif kind == "sym":
        key, qn, name, skind, parent = (str(x) if x is not None else "" for x in item[1:6])
        names.add(name)
        if skind in CLASS_KINDS:
            keys.add(key)
        if parent:
            keys.add(parent)  # a member: its class (when it is one) and the class's relatives
        if "." in qn:
            qns.add(qn.rsplit(".", 1)[0])  # a Go method's receiver type, by name
    elif kind == "base":
        keys.add(str(item[1]))
        names |= idents(str(item[2]))
    elif kind == "import":
        names |= idents(*(str(x) for x in item[1:4] if x is not None))
    elif kind == "typed":
        scope, name, _, text = (str(x) for x in item[1:5])
        names |= idents(text, scope.rsplit(".", 1)[-1])
        if name != RETURN:
            names.add(name)
        qns.add(scope)
    return names, keys, qns


def star_names(db: sqlite3.Connection, item: Item) -> set[str]:
    """The names a star import item brings (``from .m2 import *``, Go's ``import .``): the
    top-level names of every file whose module ends with its last segment, and the names
    those files import (their re-exports); a superset, never fewer."""
    if item[0] != "import":
        return set()
    module, names, alias = (str(x) if x is not None else "" for x in item[1:4])
    if "*" not in json.loads(names or "[]") and alias != ".":
        return set()
    last = module.replace("/", ".").rstrip(".").rsplit(".", 1)[-1]
    if not last:
        return set()
    paths = [
        r[0]
        for r in db.execute(
            "SELECT path FROM files WHERE module = ? OR module LIKE ? ESCAPE '\\'",
            (last, "%." + last.replace("_", "\\_").replace("%", "\\%")),
        )
    ]
    out: set[str] = set()
    for path in paths:
        out |= {
            r[0]
            for r in db.execute("SELECT name FROM symbols WHERE path = ? AND toplevel = 1", (path,))
        }
        for mod, imported, local in db.execute(
            "SELECT module, names, alias FROM imports_raw WHERE path = ?", (path,)
        ):
            out |= idents(mod, local, *json.loads(imported or "[]"))
    return out


def changed_items(old: list[Item], new: list[Item]) -> list[Item]:
    """The items of ``old`` and ``new`` that the other lacks (an order change counts: the
    item moved, and both of its places are changed)."""
    if old == new:
        return []
    return list(set(old) ^ set(new)) or old + new


def class_names(db: sqlite3.Connection, keys: Iterable[str], qns: Iterable[str]) -> set[str]:
    """Every member name of the classes ``keys`` (and the classes called ``qns`` in a
    file's own module), of their bases and their subclasses (transitively), and their names."""
    frontier = {k for k in keys if _is_class(db, k)}
    for qn in qns:
        found = {
            r[0]
            for r in db.execute(
                f"SELECT key FROM symbols WHERE qn = ? AND kind IN ({_CLASS_MARKS})",
                (qn, *CLASS_KINDS),
            )
        }
        frontier |= found or _go_receiver_type(db, qn)
    seen: set[str] = set()
    while frontier:
        key = frontier.pop()
        if key in seen:
            continue
        seen.add(key)
        for (other,) in db.execute(
            "SELECT parent_key FROM inherits WHERE child_key = ? UNION "
            "SELECT child_key FROM inherits WHERE parent_key = ?",
            (key, key),
        ):
            frontier.add(other)
    names: set[str] = set()
    for key in sorted(seen):
        names |= _members(db, key)
    return names


_CLASS_MARKS = ",".join("?" * len(CLASS_KINDS))
_GO_TYPE = (  # the type `name` of the Go package whose file has the module `module`
    "SELECT DISTINCT s.key FROM files m JOIN files f ON f.dir = m.dir AND f.family = 'go' "
    "JOIN symbols s ON s.path = f.path WHERE m.module = ? AND m.family = 'go' AND s.name = ? "
    f"AND s.toplevel = 1 AND s.kind IN ({_CLASS_MARKS})"
)


def _go_receiver_type(db: sqlite3.Connection, qn: str) -> set[str]:
    """A Go method declared in another file than its type (``gopkg.b.T`` for ``func (x *T)
    Run()`` in ``gopkg/b.go``): the type ``T`` of that file's package, wherever it is
    declared, so that a method added there changes the names of all of ``T``'s methods
    (the interfaces ``T`` implements, and so every dispatch to it, may have changed)."""
    module, dot, name = qn.rpartition(".")
    if not dot:
        return set()
    return {r[0] for r in db.execute(_GO_TYPE, (module, name, *CLASS_KINDS))}


def _is_class(db: sqlite3.Connection, key: str) -> bool:
    row = db.execute("SELECT kind FROM symbols WHERE key = ?", (key,)).fetchone()
    return row is not None and row[0] in CLASS_KINDS


def _members(db: sqlite3.Connection, key: str) -> set[str]:
    """A class's name, its members' names, the names its typed bindings declare (attributes,
    Go interface methods, embedded fields) and, for Go, its methods in other files."""
    row = db.execute(
        "SELECT s.name, s.qn, s.path, f.dir, f.family FROM symbols s JOIN files f "
        "ON f.path = s.path WHERE s.key = ?",
        (key,),
    ).fetchone()
    if row is None:
        return set()
    name, qn, path, directory, family = row
    out = {name}
    out |= {r[0] for r in db.execute("SELECT name FROM symbols WHERE parent_key = ?", (key,))}
    out |= {
        r[0]
        for r in db.execute("SELECT name FROM typed_raw WHERE path = ? AND scope = ?", (path, qn))
    }
    if family == "go":
        suffix = f".{name}."
        out |= {
            r[0]
            for r in db.execute(
                "SELECT s.name FROM symbols s JOIN files f ON f.path = s.path WHERE f.dir = ? "
                "AND f.family = 'go' AND s.kind = 'method' AND instr(s.qn, ?) > 0",
                (directory, suffix),
            )
        }
    out.discard(RETURN)
    return out


def classes_named(db: sqlite3.Connection, names: Iterable[str]) -> set[str]:
    """Keys of every class named one of ``names`` (a base text may name any of them)."""
    out: set[str] = set()
    for name in names:
        out |= {
            r[0]
            for r in db.execute(
                f"SELECT key FROM symbols WHERE name = ? AND kind IN ({_CLASS_MARKS})",
                (name, *CLASS_KINDS),
            )
        }
    return out


def typed_names(db: sqlite3.Connection, paths: Iterable[str], names: set[str]) -> set[str]:
    """The functions (by name) whose return type, and the attributes whose declared type or
    value, name one of ``names`` in the surface of ``paths``: what they evaluate to may have
    changed with it, though their text did not."""
    out: set[str] = set()
    for path in sorted(paths):
        functions = {
            r[0]
            for r in db.execute(
                "SELECT qn FROM symbols WHERE path = ? AND kind IN ('function', 'method')",
                (path,),
            )
        }
        for scope, name, text in db.execute(
            "SELECT scope, name, text FROM typed_raw WHERE path = ?", (path,)
        ):
            if (name == RETURN or scope not in functions) and not names.isdisjoint(idents(text)):
                out.add(scope.rsplit(".", 1)[-1] if name == RETURN else name)
    return out
