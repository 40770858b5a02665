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

* Python: the dotted name the site calls by qualified name, else through a re-export, else
  on the bases of the class it names (:mod:`semgraph.xrepo.pypi`);
* Go: the top-level definition of that name in the package's directory (:mod:`semgraph.xrepo.go`);
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
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from semgraph.db import Tx
from semgraph.resolve.symtab import external_key
from semgraph.xrepo import queries as q
from semgraph.xrepo.counts import Provider, add_counts, count_all, count_lines, provider_of
from semgraph.xrepo.counts import is_ambiguous as _is_ambiguous
from semgraph.xrepo.crates import link_rust
from semgraph.xrepo.gems import link_ruby
from semgraph.xrepo.go import link_go
from semgraph.xrepo.lookup import Site, link_qualified
from semgraph.xrepo.maven import link_jvm
from semgraph.xrepo.npm import link_js
from semgraph.xrepo.pypi import link_python

UNLINK_SLICE = 10_000
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


_LOOKUPS: dict[str, Any] = {
    "pypi": link_python,
    "go": link_go,
    "npm": link_js,
    "maven": link_jvm,
    "cargo": link_rust,
    "composer": link_qualified,
    "nuget": link_qualified,
    "gem": link_ruby,
}


def _sites(tx: Tx, repo: str, sources: list[str] | None) -> list[Site]:
    if sources is None:
        result = tx.run(q.LINK_SITES_ALL, repo=repo)
    else:
        result = tx.run(q.LINK_SITES_OF, keys=sources)
    return [Site(r["src"], r["line"], r["module"], r["local"], r["rest"]) for r in result]


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
    by_eco: dict[str, dict[int, tuple[Site, Provider]]] = {e: {} for e in _LOOKUPS}
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
    found: dict[int, tuple[list[str], str]], by_eco: dict[str, dict[int, tuple[Site, Provider]]]
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
