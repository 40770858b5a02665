"""The cross-repository link for Go modules (:mod:`semgraph.xrepo.link`): a Go call site
into a module another indexed repository provides, linked to the top-level definition of
that name in the package's directory (the import path less the provider's module path); a
member after it (``pkg.Type.Method``) by qualified name under it.
"""

from __future__ import annotations

import posixpath
from typing import Any

from semgraph.db import Tx
from semgraph.xrepo import queries as q
from semgraph.xrepo.counts import Provider
from semgraph.xrepo.lookup import Site, by_qn


def link_go(tx: Tx, sites: dict[int, tuple[Site, Provider]]) -> dict[int, tuple[list[str], str]]:
    """site -> (definition keys, "definition") for the Go sites ``{i: (Site, Provider)}``."""
    rows: list[dict[str, Any]] = []
    want: dict[int, tuple[str, str, list[str]]] = {}
    for i, (s, p) in sites.items():
        base = next(m for m in p.modules if s.module == m or s.module.startswith(m + "/"))
        directory = s.module[len(base) + 1 :]
        parts = s.rest.split(".") if s.rest else []
        if not parts:
            continue
        rows.append({"i": i, "repo": p.repo, "name": parts[0]})
        want[i] = (directory, parts[0], parts[1:])
    found: dict[int, list[str]] = {}
    tails: dict[int, tuple[str, str]] = {}
    for r in tx.run(q.LINK_BY_NAME, rows=rows) if rows else []:
        directory, name, tail = want[r["i"]]
        hits = []
        for key, path, qn in r["found"]:
            module = path[:-3].replace("/", ".") if path.endswith(".go") else None
            if posixpath.dirname(path) == directory and qn == f"{module}.{name}":
                hits.append((key, qn))
        if hits and tail:
            if len(hits) == 1:
                tails[r["i"]] = (sites[r["i"]][1].repo, ".".join([hits[0][1], *tail]))
        elif hits:
            found[r["i"]] = sorted(k for k, _ in hits)
    out = {i: (keys, "definition") for i, keys in found.items()}
    out.update({i: (keys, "definition") for i, keys in by_qn(tx, tails).items()})
    return out
