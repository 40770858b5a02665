"""The cross-repository link for crates (:mod:`semgraph.xrepo.link`): a Rust call
site into a crate another indexed repository provides, linked to the item it names.

A site is ``(crate[.module...], local, rest)``: ``use itoa::Buffer; Buffer::new()`` is
("itoa", "Buffer", "new"); ``itoa::Buffer::new()`` with no ``use`` is ("itoa", "itoa",
"Buffer.new") (:mod:`semgraph.resolve.rust_crates`); ``use serde::de::Visitor`` is
("serde.de", "Visitor", ...). The path after the crate is read every way it splits into a
module path, an item and the members after it (``de::Visitor::visit`` as module ``de``,
item ``Visitor``, member ``visit``, or module ``de::Visitor``...): the module is the file
``src/lib.rs`` (the crate root), ``src/<m>.rs`` or ``src/<m>/mod.rs``; the item is its
definition there or what its ``use`` declarations re-export (``pub use crate::value::Value``,
``File.reexports``); the members are looked up by qualified name under it. The longest
module path that finds a definition wins.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from semgraph.db import Tx
from semgraph.xrepo.lookup import Probe, by_qn, follow, probe_files

MAX_PATH = 8  # segments of a site's path read


def paths(module: str, local: str, rest: str) -> list[list[str]]:
    """The item paths after the crate a site may mean (``local`` the crate itself, or an
    item of it with the crate's name: ``use memchr::memchr``)."""
    parts = module.split(".")
    tail = rest.split(".") if rest else []
    out = [[*parts[1:], local, *tail][:MAX_PATH]]
    if local == parts[0] and len(parts) == 1 and tail:
        out.insert(0, tail[:MAX_PATH])
    return out


def readings(path: list[str]) -> list[tuple[list[str], str, list[str]]]:
    """(module files, item, members) for each split of ``path``, the longest module first."""
    out = []
    for k in range(len(path) - 1, -1, -1):
        mod = "/".join(path[:k])
        files = ["src/lib.rs"] if not mod else [f"src/{mod}.rs", f"src/{mod}/mod.rs"]
        out.append((files, path[k], path[k + 1 :]))
    return out


def _probes(s: Any, _p: Any) -> Iterator[Probe]:
    """The module files a crate site's item may be in, the longest module path first."""
    for path in paths(s.module, s.local, s.rest):
        for files, item, members in readings(path):
            for f in files:
                yield f, item, members


def link_rust(tx: Tx, sites: dict[int, tuple[Any, Any]]) -> dict[int, tuple[list[str], str]]:
    """site -> (definition keys, via) for the crate sites ``{i: (Site, Provider)}``."""
    tried = probe_files(tx, sites, _probes)
    start = {n: (sites[i][1].repo, f, item) for n, (i, _, (f, item, _)) in enumerate(tried)}
    found = follow(tx, start)
    wanted = {
        n: (sites[tried[n][0]][1].repo, ".".join([qn, *tried[n][2][2]]))
        for n, (qn, _) in found.items()
    }
    best: dict[int, tuple[int, list[str], str]] = {}
    for n, keys in by_qn(tx, wanted).items():
        i, rank = tried[n][0], tried[n][1]
        via = "definition" if found[n][1] == 0 else "re-export"
        if i not in best or rank < best[i][0]:
            best[i] = (rank, keys, via)
    return {i: (keys, via) for i, (_, keys, via) in best.items()}
