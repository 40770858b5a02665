"""The cross-repository link for npm packages (:mod:`semgraph.xrepo.link`): a
JS/TS call site into a package another indexed repository provides, linked to the
definition it reaches.

A site is ``(specifier, imported, rest)`` (:mod:`semgraph.resolve.xsites`): ``import d
from "p"; d()`` is ("p", "default", ""); ``import {a as b} from "p/sub"; b.m()`` is
("p/sub", "a", "m"); ``import * as ns from "p"; ns.f()`` and ``const ns = require("p");
ns.f()`` are ("p", "*", "f") (and ``ns()`` the default export).

The entry file: the specifier less the package name is a subpath (``.``, ``./sub``); the
provider's ``package.json`` names its file (``exports``, else ``module`` / ``main``, else
``index.js``: :mod:`semgraph.manifests.native`). A published path often names a build output
(``./dist/index.js``) the repository holds as source (``src/index.ts``), so the candidates
are, in order: the path as written, with each source extension, as a directory's
``index``, and the same with a leading build directory (``dist``, ``lib``, ``build``, ...)
read as ``src`` or dropped; the first file the provider's graph has is the entry.

In the entry: a top-level definition of that name, else its exports (``File.reexports``:
``export default f``, ``export {a as b}``, ``export ... from``, ``export * from``) followed
to the definition (:func:`semgraph.xrepo.lookup.follow`); ``via`` is ``definition``
when the entry defines it and ``re-export`` otherwise. An attribute after it (``Queue``'s
``enqueue`` in ``d.Queue.enqueue``) is looked up by qualified name under it.
"""

from __future__ import annotations

import posixpath
from typing import Any

from semgraph.db import Tx
from semgraph.xrepo.lookup import Probe, by_qn, first_per_site, follow, probe_files

SOURCE_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
BUILD_DIRS = frozenset({"dist", "lib", "build", "out", "esm", "cjs", "es", "module", "umd"})


def package_of(specifier: str) -> tuple[str, str]:
    """(package name, subpath) of a bare specifier: ``@s/p/x`` -> (``@s/p``, ``./x``)."""
    parts = specifier.split("/")
    cut = 2 if specifier.startswith("@") else 1
    rest = "/".join(parts[cut:])
    return "/".join(parts[:cut]), f"./{rest}" if rest else "."


def entry_target(exports: tuple[str, ...], subpath: str) -> str | None:
    """The file ``package.json`` names for ``subpath`` (``./dist/x.js``; "" when the entry
    names none, None when the package does not export the subpath)."""
    for entry in exports:
        key, _, target = entry.partition("\t")
        if key == subpath:
            return target
    if subpath == ".":
        return ""
    # no entry for it: a package without ``exports`` maps every subpath to its own file
    explicit = any(e.partition("\t")[0] != "." for e in exports)
    return None if explicit else subpath


def candidates(target: str) -> list[str]:
    """The repository paths an entry ``target`` may be, the likeliest first."""
    path = posixpath.normpath(target.removeprefix("./")) if target else ""
    if path.startswith(("..", "/")):
        return []
    bases = [path] if path and path != "." else []
    parts = path.split("/") if bases else []
    for cut in range(1, len(parts)):  # dist/esm/index.js -> src/esm/index.js, src/index.js
        if parts[cut - 1] not in BUILD_DIRS:
            break
        bases += ["/".join(["src", *parts[cut:]]), "/".join(parts[cut:])]
    bases += ["src/index", "index"] if not bases else []
    out: list[str] = []
    for base in bases:
        stem = base.removesuffix(".d.ts")
        stem = posixpath.splitext(stem)[0] if stem == base else stem
        out += [base, *(stem + ext for ext in SOURCE_EXTENSIONS)]
        out += [f"{base}/index{ext}" for ext in SOURCE_EXTENSIONS]
    return list(dict.fromkeys(out))


def site_name(local: str, rest: str) -> tuple[str, list[str]]:
    """(the exported name the site reaches, the attributes after it)."""
    parts = rest.split(".") if rest else []
    if local == "*":  # a namespace / require(): its first attribute is the export
        return (parts[0], parts[1:]) if parts else ("default", [])
    return local, parts


def _probes(s: Any, p: Any) -> list[Probe]:
    """The files an npm site's entry may be, the likeliest first (none when the provider
    does not export the site's subpath)."""
    name, subpath = package_of(s.module)
    target = entry_target(p.exports, subpath)
    if target is None or name not in p.modules:
        return []
    export, tail = site_name(s.local, s.rest)
    return [(path, export, tail) for path in candidates(target)]


def link_js(tx: Tx, sites: dict[int, tuple[Any, Any]]) -> dict[int, tuple[list[str], str]]:
    """site -> (definition keys, via) for the npm sites ``{i: (Site, Provider)}``."""
    entry = first_per_site(probe_files(tx, sites, _probes))
    start = {i: (sites[i][1].repo, path, name) for i, (path, name, _) in entry.items()}
    found = follow(tx, start)
    wanted = {i: (sites[i][1].repo, ".".join([qn, *entry[i][2]])) for i, (qn, _) in found.items()}
    return {
        i: (keys, "definition" if found[i][1] == 0 else "re-export")
        for i, keys in by_qn(tx, wanted).items()
    }
