"""The cross-repository link for Python packages (:mod:`semgraph.xrepo.link`): a Python
call site into a package another indexed repository provides, linked to the definition it
names.

The dotted name the site calls (``click.echo``; ``from click import echo`` -> ``click.echo``)
by qualified name; else a re-export: a module (``pkg/__init__``) whose ``from .models import
Thing`` binds the name (``File.reexports``), followed through a few files
(:func:`semgraph.xrepo.lookup.follow`) to the definition (``pkg.Thing`` defined in
``pkg/models.py``), ``via: 're-export'``; an attribute after it (``pkg.Thing.method``) by
qualified name again; a member the class only inherits (``click.Group.make_context``, defined
on ``BaseCommand``) on its bases in the provider's graph, the nearest level first, up to
:data:`INHERIT_HOPS` levels, ``via: 'inherited'``. An alias (``from click import echo as
say``) is not followed.
"""

from __future__ import annotations

from typing import Any

from semgraph.db import Tx
from semgraph.xrepo import queries as q
from semgraph.xrepo.counts import Provider
from semgraph.xrepo.lookup import Site, by_qn, follow, reexport

INHERIT_HOPS = 4  # base levels walked for a member a library class inherits


def python_name(site: Site) -> str:
    root = site.module.split(".")[0]
    head = site.local if site.local == root else f"{site.module}.{site.local}"
    return f"{head}.{site.rest}" if site.rest else head


def link_python(
    tx: Tx, sites: dict[int, tuple[Site, Provider]]
) -> dict[int, tuple[list[str], str]]:
    """site -> (definition keys, via) for the Python sites ``{i: (Site, Provider)}``."""
    names = {i: python_name(s) for i, (s, _) in sites.items()}
    exact = by_qn(tx, {i: (p.repo, names[i]) for i, (_, p) in sites.items()})
    out = {i: (keys, "definition") for i, keys in exact.items()}
    rows: list[dict[str, Any]] = []
    splits: dict[int, tuple[int, str, list[str]]] = {}  # row -> (site, name, tail)
    for i in (i for i in sites if i not in exact):
        parts = names[i].split(".")
        for cut in range(len(parts) - 1, 0, -1):
            splits[len(rows)] = (i, parts[cut], parts[cut + 1 :])
            rows.append({"i": len(rows), "repo": sites[i][1].repo, "module": ".".join(parts[:cut])})
    start: dict[int, tuple[str, str, str]] = {}
    best_tail: dict[int, int] = {}
    tails: dict[int, list[str]] = {}
    for r in tx.run(q.LINK_MODULE_FILE, rows=rows) if rows else []:
        i, name, _ = splits[r["i"]]
        hop = reexport(r["reexports"], name)
        if hop is not None and (i not in start or len(splits[r["i"]][2]) < best_tail[i]):
            start[i] = (sites[i][1].repo, *hop)
            best_tail[i] = len(splits[r["i"]][2])
            tails[i] = splits[r["i"]][2]
    deeper = {
        i: (sites[i][1].repo, ".".join([qn, *tails[i]])) for i, (qn, _) in follow(tx, start).items()
    }
    for i, keys in by_qn(tx, deeper).items():
        out[i] = (keys, "re-export")
    # ``Group.make_context`` that click defines on a base of Group (``BaseCommand``)
    wanted = {i: deeper.get(i) or (sites[i][1].repo, names[i]) for i in sites if i not in out}
    for i, keys in _inherited(tx, wanted).items():
        out[i] = (keys, "inherited")
    return out


def _inherited(tx: Tx, wanted: dict[int, tuple[str, str]]) -> dict[int, list[str]]:
    """site -> the definitions of ``Class.member`` found on the class's bases in its own
    repository, the nearest level first (up to :data:`INHERIT_HOPS` levels); several found
    at one level are all candidates."""
    out: dict[int, list[str]] = {}
    todo: dict[int, tuple[str, list[str], str]] = {}  # site -> (repo, classes, member)
    for i, (repo, qn) in wanted.items():
        cls, _, member = qn.rpartition(".")
        if cls and member:
            todo[i] = (repo, [cls], member)
    seen: dict[int, set[str]] = {i: set(c) for i, (_, c, _) in todo.items()}
    for _ in range(INHERIT_HOPS):
        rows = [{"i": i, "repo": r, "classes": c} for i, (r, c, _) in todo.items()]
        if not rows:
            break
        parents = {
            r["i"]: [p for p in r["parents"] if p not in seen[r["i"]]]
            for r in tx.run(q.LINK_BASES, rows=rows)
        }
        nxt: dict[int, tuple[str, list[str], str]] = {}
        asked: dict[int, tuple[str, str]] = {}
        site_of: list[int] = []  # asked row -> its site
        for i, found in parents.items():
            repo, _, member = todo[i]
            seen[i].update(found)
            for cls in found:
                site_of.append(i)
                asked[len(site_of) - 1] = (repo, f"{cls}.{member}")
            if found:
                nxt[i] = (repo, found, member)
        for k, keys in sorted(by_qn(tx, asked).items()):
            out[site_of[k]] = sorted({*out.get(site_of[k], []), *keys})
        todo = {i: v for i, v in nxt.items() if i not in out}
    return out
