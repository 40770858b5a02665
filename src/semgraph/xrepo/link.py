"""The cross-repository link: the external call sites of one repository (the
*dependent*: its ``CALLS_EXTERNAL`` edges, :mod:`semgraph.graph.rows`) linked to the
definitions of the indexed repositories that provide the packages it depends on, as
``(:Symbol)-[:XCALLS {tier: 'cross_repo', repo, commit, via, line, site}]->(:Symbol)`` edges
(``site``: the call's ``local.rest``, one of the calls on its line). The link reads only the
graph: no dependent is parsed or resolved again.

Which provider: for each package the dependent depends on (``DEPENDS_ON``), the live
repositories that provide it (``PROVIDES``). One: it is chosen (``why: 'only provider'``).
Several (a fork, a vendored copy): none is chosen, the edge keeps them as ``candidates`` and
every site of its modules counts as ambiguous. A module no provider's ``modules`` covers is
*unprovided*. The choice is written on the ``DEPENDS_ON`` edge.

Which definition, in the chosen provider:

* Python: the dotted name the site calls (``click.echo``; ``from click import echo`` ->
  ``click.echo``) by qualified name; else a re-export: a module (``pkg/__init__``) whose
  ``from .models import Thing`` binds the name (``File.reexports``), followed through a few
  files (:mod:`semgraph.xrepo.lookup`) to the definition (``pkg.Thing`` defined in
  ``pkg/models.py``), ``via: 're-export'``; an attribute after it (``pkg.Thing.method``) by
  qualified name again; a member the class only inherits (``click.Group.make_context``,
  defined on ``BaseCommand``) on its bases in the provider's graph, the nearest level first,
  up to :data:`INHERIT_HOPS` levels, ``via: 'inherited'``. An alias (``from click import
  echo as say``) is not followed;
* Go: the top-level definition of that name in the package's directory (the import path
  less the provider's module path);
* npm: the package's entry file and its exports (:mod:`semgraph.xrepo.npm`);
* Maven: the class's file under the package's directory (:mod:`semgraph.xrepo.maven`);
* Cargo: the item in the crate's module files (:mod:`semgraph.xrepo.crates`);
* Composer (PHP): the namespace-qualified name (``use Monolog\\Logger; Logger::create()``:
  ``Monolog.Logger.create``), PHP's names being its namespaces'.

A site with a provider and no definition found is *unmatched*. The counts (``xrepo_linked``,
``xrepo_ambiguous``, ``xrepo_unprovided``, ``xrepo_unmatched``) are set on the dependent's
``:Repository`` (:mod:`semgraph.xrepo.counts`); its resolution rate still counts
these sites as external.

:func:`link` runs in the caller's transaction: in a publish (the changed sites, or all of
them) and in a library's re-link (:mod:`semgraph.xrepo.relink`: the sites whose names
its change touched), one transaction per dependent.

The module is a little over 300 lines: the choice of provider, the two languages' lookups
and the re-link are one algorithm, kept together.
"""

from __future__ import annotations

import posixpath
from dataclasses import asdict, dataclass, field
from typing import Any

from semgraph.db import Tx
from semgraph.resolve.symtab import external_key
from semgraph.xrepo import queries as q
from semgraph.xrepo.counts import Provider, add_counts, count_all, count_lines, provider_of
from semgraph.xrepo.counts import is_ambiguous as _is_ambiguous
from semgraph.xrepo.crates import link_rust
from semgraph.xrepo.gems import link_ruby
from semgraph.xrepo.lookup import by_qn, follow, link_qualified, reexport
from semgraph.xrepo.maven import link_jvm
from semgraph.xrepo.npm import link_js

UNLINK_SLICE = 10_000
INHERIT_HOPS = 4  # base levels walked for a member a library class inherits
TIER = "cross_repo"


@dataclass
class LinkStats:
    sites: int = 0  # sites (re)linked by this call
    edges: int = 0  # XCALLS written
    unlinked: int = 0  # XCALLS deleted first
    linked: int = 0  # the repository's totals after the link
    ambiguous: int = 0
    unprovided: int = 0
    unmatched: int = 0
    choices: dict[str, Any] = field(default_factory=dict)  # package -> chosen / candidates
    duration_s: float = 0.0  # a relink's transaction
    stamped: int = 0  # a relink: untouched links into the library given its new commit

    @property
    def rows(self) -> int:
        """Edges the link wrote and deleted."""
        return self.edges + self.unlinked

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Site:
    src: str
    line: int
    module: str
    local: str
    rest: str


def _choose(tx: Tx, repo: str) -> tuple[list[Provider], set[str], dict[str, Any]]:
    """The chosen providers and the package modules that are ambiguous; writes the choice."""
    chosen: list[Provider] = []
    ambiguous: set[str] = set()
    choices: dict[str, Any] = {}
    rows = []
    for r in tx.run(q.LINK_PROVIDERS, repo=repo):
        found = [p for p in r["providers"] if p[0] is not None]
        cands = sorted({p[0] for p in found})
        if len(cands) == 1:
            key, commit, modules, exports = found[0]
            chosen.append(
                Provider(
                    key, commit or "", r["ecosystem"], tuple(modules or ()), tuple(exports or ())
                )
            )
            row = {
                "package": r["package"],
                "chosen": key,
                "why": "only provider",
                "candidates": cands,
            }
        elif cands:
            ambiguous |= {m for p in found for m in (p[2] or ())}
            row = {
                "package": r["package"],
                "chosen": None,
                "why": "several providers",
                "candidates": cands,
            }
        else:
            row = {
                "package": r["package"],
                "chosen": None,
                "why": "no indexed provider",
                "candidates": [],
            }
        rows.append(row)
        choices[r["package"]] = {k: row[k] for k in ("chosen", "why", "candidates")}
    if rows:
        tx.run(q.LINK_CHOICE, repo=repo, rows=rows).single()
    return chosen, ambiguous, choices


def _python_name(site: _Site) -> str:
    root = site.module.split(".")[0]
    head = site.local if site.local == root else f"{site.module}.{site.local}"
    return f"{head}.{site.rest}" if site.rest else head


def _python(tx: Tx, sites: dict[int, tuple[_Site, Provider]]) -> dict[int, tuple[list[str], str]]:
    names = {i: _python_name(s) for i, (s, _) in sites.items()}
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


def _go(tx: Tx, sites: dict[int, tuple[_Site, Provider]]) -> dict[int, tuple[list[str], str]]:
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


_LOOKUPS: dict[str, Any] = {
    "pypi": _python,
    "go": _go,
    "npm": link_js,
    "maven": link_jvm,
    "cargo": link_rust,
    "composer": link_qualified,
    "nuget": link_qualified,
    "gem": link_ruby,
}


def _sites(tx: Tx, repo: str, sources: list[str] | None) -> list[_Site]:
    if sources is None:
        result = tx.run(q.LINK_SITES_ALL, repo=repo)
    else:
        result = tx.run(q.LINK_SITES_OF, keys=sources)
    return [_Site(r["src"], r["line"], r["module"], r["local"], r["rest"]) for r in result]


def sites_into(tx: Tx, repo: str, modules: list[str]) -> list[Any]:
    """The dependent's sites into one of ``modules`` (exact module names): ``src``,
    ``line``, ``module``, ``local``, ``rest``."""
    return list(tx.run(q.LINK_SITES_INTO, modules=modules, prefix=external_key(repo, "")))


def link(
    tx: Tx,
    repo: str,
    sources: list[str] | None = None,
    *,
    recount: bool = True,
    lines: set[tuple[str, int]] | None = None,
    lost: frozenset[tuple[str, int, str]] = frozenset(),
) -> LinkStats:
    """Link the external sites of ``sources`` (symbol keys of ``repo``; None: every one) or
    of ``lines`` only (``(symbol key, line)``: a re-link) against the live graphs of the
    providers, replacing their ``XCALLS``. The counts are read again unless no source is
    given and ``recount`` is False (a publish that changed no external site and no package
    edge); a re-link of ``lines`` counts those calls only, before and after (``lost``: calls
    counted linked before, :mod:`semgraph.xrepo.counts`)."""
    stats = LinkStats()
    providers, ambiguous, stats.choices = _choose(tx, repo)
    before = None
    if lines is not None:
        before = count_lines(tx, lines, providers, ambiguous, lost)
        sources = sorted({src for src, _ in lines})
    stats.unlinked = _unlink(tx, repo, sources, lines)
    sites = _sites(tx, repo, sources) if sources is None or sources else []
    if lines is not None:
        sites = [s for s in sites if (s.src, s.line) in lines]
    stats.sites = len({(s.src, s.line, s.local, s.rest) for s in sites})  # open: one per row
    by_eco: dict[str, dict[int, tuple[_Site, Provider]]] = {e: {} for e in _LOOKUPS}
    for i, s in enumerate(sites):
        p = provider_of(s.module, providers)
        if p is not None and not _is_ambiguous(s.module, ambiguous):
            by_eco[p.ecosystem if p.ecosystem in _LOOKUPS else "pypi"][i] = (s, p)
    found = {i: v for eco, lookup in _LOOKUPS.items() for i, v in lookup(tx, by_eco[eco]).items()}
    created = _xcalls(found, by_eco)
    if created:
        stats.edges = tx.run(q.LINK_CREATE, rows=created).single(strict=True)["created"]
    if sources == [] and not recount:  # no site changed: the counts stand (a one-file push)
        return stats
    if lines is not None and before is not None:
        after = count_lines(tx, lines, providers, ambiguous)
        if add_counts(tx, repo, before, after, stats):
            return stats
    count_all(tx, repo, providers, ambiguous, stats)
    return stats


def _unlink(
    tx: Tx, repo: str, sources: list[str] | None, lines: set[tuple[str, int]] | None
) -> int:
    """Delete the XCALLS of ``lines``, else of ``sources`` (None: every one of ``repo``)."""
    if lines is not None:
        rows = [{"src": src, "line": line} for src, line in sorted(lines)]
        return _deleted(tx, q.LINK_UNLINK_LINES, rows=rows) if rows else 0
    if sources is None:
        deleted = 0
        while True:
            n = _deleted(tx, q.LINK_UNLINK_ALL, repo=repo, limit=UNLINK_SLICE)
            deleted += n
            if n < UNLINK_SLICE:
                return deleted
    return _deleted(tx, q.LINK_UNLINK_OF, keys=sources) if sources else 0


def _deleted(tx: Tx, cypher: str, **params: Any) -> int:
    """Run one of the statements that delete links: how many it deleted."""
    return int(tx.run(cypher, **params).single(strict=True)["deleted"])


def _xcalls(
    found: dict[int, tuple[list[str], str]], by_eco: dict[str, dict[int, tuple[_Site, Provider]]]
) -> list[dict[str, Any]]:
    """The XCALLS rows of the sites found, one per (caller, definition, line, site): an open
    site's candidate namespaces may reach one definition twice."""
    rows: dict[tuple[str, str, int, str], dict[str, Any]] = {}
    for i, (keys, via) in sorted(found.items()):
        s, p = next(by_eco[e][i] for e in by_eco if i in by_eco[e])
        site = f"{s.local}.{s.rest}"
        for k in keys:
            row = {
                "src": s.src,
                "dst": k,
                "line": s.line,
                "site": site,
                "repo": p.repo,
                "commit": p.commit,
                "via": via,
                "candidates": len(keys),
            }
            rows.setdefault((s.src, k, s.line, site), row)
    return list(rows.values())
