"""The cross-repository link for Maven packages (:mod:`semgraph.xrepo.link`): a
Java call site into a package another indexed repository provides, linked to the class or
member it names.

A site is ``(package, Class, rest)`` for ``import a.b.C; C.m()`` (("a.b", "C", "m")), and
``(package.Class, member, "")`` for a static import (``import static a.b.C.m; m()``). The
class is the file ``<root>/a/b/C.java`` of the provider (Java names a public class after its
file), the root one of :data:`ROOTS`, the first the provider's graph has; in it the class
``C``, then the member by qualified name under it; else (Kotlin) the one top-level definition
of that name in a file of the package's directory. A member the class inherits is not looked
for (the provider's bases are not followed for the JVM).
"""

from __future__ import annotations

import posixpath
from typing import Any

from semgraph.db import Tx
from semgraph.resolve.symtab import file_key
from semgraph.xrepo import queries as q
from semgraph.xrepo.lookup import by_qn, follow

ROOTS = ("src/main/java", "src/main/kotlin", "src/main/scala", "src/java", "src", "")
_EXT = (".java", ".kt", ".scala")


def readings(module: str, local: str, rest: str) -> list[tuple[str, str, list[str]]]:
    """(package path, class, members after it) a site may mean: a class import first, then
    a static import of a member."""
    tail = rest.split(".") if rest else []
    out = [(module.replace(".", "/"), local, tail)]
    pkg, _, cls = module.rpartition(".")
    if pkg and cls[:1].isupper():
        out.append((pkg.replace(".", "/"), cls, [local, *tail]))
    return out


def link_jvm(tx: Tx, sites: dict[int, tuple[Any, Any]]) -> dict[int, tuple[list[str], str]]:
    """site -> (definition keys, "definition") for the Maven sites ``{i: (_Site, Provider)}``."""
    asked: list[tuple[int, int, str, str, list[str]]] = []  # row -> (site, rank, path, ...)
    rows = []
    for i, (s, p) in sites.items():
        rank = 0
        for pkg, cls, tail in readings(s.module, s.local, s.rest):
            for root in ROOTS:
                for ext in _EXT:
                    path = "/".join(x for x in (root, pkg, cls + ext) if x)
                    rows.append({"i": len(asked), "key": file_key(p.repo, path)})
                    asked.append((i, rank, path, cls, tail))
                    rank += 1
    best: dict[int, tuple[int, str, str, list[str]]] = {}
    for r in tx.run(q.LINK_FILES, rows=rows) if rows else []:
        i, rank, path, cls, tail = asked[r["i"]]
        if i not in best or rank < best[i][0]:
            best[i] = (rank, path, cls, tail)
    start = {i: (sites[i][1].repo, path, cls) for i, (_, path, cls, _) in best.items()}
    found = follow(tx, start)
    wanted = {i: (sites[i][1].repo, ".".join([qn, *best[i][3]])) for i, (qn, _) in found.items()}
    wanted |= _top_level(tx, {i: v for i, v in sites.items() if i not in wanted})
    return {i: (keys, "definition") for i, keys in by_qn(tx, wanted).items()}


def _top_level(tx: Tx, sites: dict[int, tuple[Any, Any]]) -> dict[int, tuple[str, str]]:
    """Kotlin and Scala: a top-level function, class or object of the package in a file of
    another name (``runBlocking`` in ``kotlinx/coroutines/Builders.kt``, named by its package:
    ``kotlinx.coroutines.runBlocking``); one definition only."""
    rows = [{"i": i, "repo": p.repo, "name": s.local} for i, (s, p) in sites.items()]
    out: dict[int, tuple[str, str]] = {}
    for r in tx.run(q.LINK_BY_NAME, rows=rows) if rows else []:
        s, p = sites[r["i"]]
        dirs = {"/".join(x for x in (root, s.module.replace(".", "/")) if x) for root in ROOTS}
        hits = {
            qn
            for _, path, qn in r["found"]
            if path.endswith(_EXT)
            and (  # Kotlin names by the package; a file's path where it declares none
                qn == f"{s.module}.{s.local}"
                or (
                    posixpath.dirname(path) in dirs
                    and qn == f"{posixpath.splitext(path)[0].replace('/', '.')}.{s.local}"
                )
            )
        }
        if len(hits) == 1:
            out[r["i"]] = (p.repo, ".".join([hits.pop(), *(s.rest.split(".") if s.rest else [])]))
    return out
