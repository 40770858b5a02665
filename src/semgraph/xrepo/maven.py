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
from collections.abc import Iterator
from typing import Any

from semgraph.db import Tx
from semgraph.xrepo import queries as q
from semgraph.xrepo.lookup import Probe, by_qn, first_per_site, follow, probe_files

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


def _probes(s: Any, _p: Any) -> Iterator[Probe]:
    """The files a Maven site's class may be in, the likeliest first."""
    for pkg, cls, tail in readings(s.module, s.local, s.rest):
        for root in ROOTS:
            for ext in _EXT:
                yield "/".join(x for x in (root, pkg, cls + ext) if x), cls, tail


def link_jvm(tx: Tx, sites: dict[int, tuple[Any, Any]]) -> dict[int, tuple[list[str], str]]:
    """site -> (definition keys, "definition") for the Maven sites ``{i: (Site, Provider)}``."""
    best = first_per_site(probe_files(tx, sites, _probes))
    start = {i: (sites[i][1].repo, path, cls) for i, (path, cls, _) in best.items()}
    found = follow(tx, start)
    wanted = {i: (sites[i][1].repo, ".".join([qn, *best[i][2]])) for i, (qn, _) in found.items()}
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
