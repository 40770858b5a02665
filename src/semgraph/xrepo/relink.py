"""A library's dependents re-linked after it changed, in proportion to the names
the change touched.

A library's publish records what it changed in a ``(:RelinkPending {library})`` node, in
the same transaction as the change (:func:`record`): the *names* a delta publish touched,
or *everything* (a first or full publish, changed manifests). A delta's names are those of
the symbols it wrote or dropped, or whose kind or bases changed, of their subclasses in the
library (a member inherited through a changed class), and the re-exports the changed files
gained or lost; and the names the library's modules re-export any of them under, followed when
the re-link runs (:func:`aliases`: ``export {default as disc} from``, ``from .m import T as
U``); a module re-exported whole that came or went (``export *``) re-links every site. A symbol
whose row changed otherwise (lines, counts) is linked to as before. The calls of other
repositories linked into a symbol the delta dropped (their ``XCALLS`` went with it) are
recorded too (``lost``, :func:`lost_links`).

:func:`relink_dependents` then re-links each dependent in a transaction of its own: only the
dependent's sites into the library's modules whose identifiers (``local``, ``rest``) meet a
changed name, or linked now to a definition of such a name (a site is its symbol and line;
every site into the library when a module it re-exports whole, ``export *``, came or went).
What it reads follows the change: the linked sites through the library's name index, the
others as the rows into the library's modules whose text holds a name (filtered in the
server), and the counts of the calls it touched only, before and after
(:mod:`semgraph.xrepo.counts`; a ``lost`` call counts linked before). The links left
in place take the library's new commit (a property). Once every dependent is done, the
names it read are cleared (the node goes when empty); a crash before that leaves them, and
the job's retry re-links again (a re-link is idempotent). A removal re-links everything
into the repository.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from semgraph.db import Graph, Tx
from semgraph.resolve.symtab import external_key
from semgraph.xrepo import queries as q
from semgraph.xrepo.counts import Provider, provider_of
from semgraph.xrepo.link import LinkStats, link, sites_into

_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
MAX_ALIASES = 10_000  # (module, name) pairs followed through a library's re-exports
MAX_LOST = 20_000  # calls whose links a publish dropped, kept on the pending node


@dataclass(frozen=True)
class Pending:
    everything: bool
    names: tuple[str, ...]
    commit: str
    lost: tuple[str, ...] = ()  # calls whose links the publish dropped (:func:`lost_links`)


@dataclass
class Held:
    """What a delta publish's changed and removed files held before it wrote."""

    symbols: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (name, kind)
    #: key -> the calls linked into it from other repositories (``repo<TAB>src<TAB>line<TAB>site``)
    linked: dict[str, list[str]] = field(default_factory=dict)
    reexports: dict[str, set[str]] = field(default_factory=dict)  # file key -> entries


def before(tx: Tx, file_keys: list[str]) -> Held:
    """Before a delta publish writes: what its changed and removed files held."""
    held = Held()
    for r in tx.run(q.RELINK_BEFORE, keys=file_keys) if file_keys else []:
        held.symbols.update({k: (n, kind) for k, n, kind, _ in r["symbols"] if k is not None})
        held.linked.update({k: calls for k, _, _, calls in r["symbols"] if k and calls})
        held.reexports[r["key"]] = set(r["reexports"] or ())
    return held


def changed_names(tx: Tx, rows: Any) -> set[str]:
    """The names a delta publish (its :class:`~semgraph.graph.row_writer.RowWriter`
    ``rows``) touched: of the symbols it added or dropped, of those whose kind or bases
    changed, and of their subclasses in the repository; the re-exports its files gained or
    lost (``*``: a module re-exported whole, every site). Each changed name is also kept as
    ``path<TAB>name``: the re-link adds the names other modules re-export it under
    (:func:`aliases`). A symbol only rewritten (its lines, its counts) keeps its links."""
    held: Held = rows.held
    keys = rows.symbols_added | rows.symbols_dropped | rows.bases_changed
    out: set[str] = set()
    for k in keys & held.symbols.keys():
        out |= {held.symbols[k][0], f"{_path(k)}\t{held.symbols[k][0]}"}
    asked = sorted(keys | rows.symbols_updated)
    for r in tx.run(q.RELINK_AFTER_SYMBOLS, keys=asked) if asked else []:
        was = held.symbols.get(r["key"])
        if r["key"] in keys or (was is not None and was[1] != r["kind"]):
            out |= {r["name"], f"{_path(r['key'])}\t{r['name']}", *r["subclasses"]}
    files = rows.files_changed
    after = {
        r["key"]: set(r["reexports"] or ())
        for r in (tx.run(q.RELINK_AFTER_FILES, keys=sorted(files)) if files else [])
    }
    for key in files:  # a file not rewritten re-exports what it did (its row is unchanged)
        for entry in held.reexports.get(key, set()) ^ after.get(key, set()):
            local = entry.split("\t", 1)[0]
            out |= {local, f"{_path(key)}\t{local}"}
    return {n for n in out if n and not n.endswith("\t")}


def lost_links(rows: Any) -> list[str]:
    """The calls of other repositories that were linked into a symbol this delta publish
    dropped (its ``XCALLS`` went with it): the re-link counts them as linked before, as the
    dependent's counts did (``repo<TAB>src<TAB>line<TAB>site``)."""
    held: Held = rows.held
    return sorted({c for k in rows.symbols_dropped for c in held.linked.get(k, ())})


def _path(key: str) -> str:
    """The file path of a File or Symbol key (``repo|path[|qn]``)."""
    return key.split("|", 2)[1] if key.count("|") >= 1 else ""


def aliases(tx: Tx, library: str, seeds: set[str]) -> set[str]:
    """The names the library's modules re-export the changed ``path<TAB>name`` seeds under,
    through any number of re-exports (``export {default as disc} from "./disc"``, ``from .m
    import T as U``, ``export * as ns``); ``*`` when a module re-exported whole changed."""
    todo = [tuple(s.split("\t", 1)) for s in seeds if "\t" in s]
    if not todo:
        return set()
    if any(name == "*" for _, name in todo):
        return {"*"}
    into: dict[tuple[str, str], list[tuple[str, str]]] = {}  # (path, member) -> (file, local)
    for r in tx.run(q.RELINK_REEXPORTS, repo=library):
        for entry in r["reexports"] or ():
            local, path, member = [*entry.split("\t", 2), "", ""][:3]
            into.setdefault((path, member), []).append((r["path"], local))
    out: set[str] = set()
    seen = set(todo)
    while todo and len(seen) < MAX_ALIASES:
        path, name = todo.pop()
        for file, local in [*into.get((path, name), ()), *into.get((path, "*"), ())]:
            alias = name if local == "*" else local  # export * from: the same name
            out.add(alias)
            if (file, alias) not in seen:
                seen.add((file, alias))
                todo.append((file, alias))
    return out


def record(
    tx: Tx, repo: str, everything: bool, names: set[str], lost: list[str] | None = None
) -> None:
    """Add what a publish of ``repo`` changed to its pending re-link (and the calls whose
    links it dropped, :func:`lost_links`; more than :data:`MAX_LOST` of them: everything is
    re-linked and counted again, the node stays small)."""
    if lost and len(lost) > MAX_LOST:
        everything, lost = True, []
    if everything or names or lost:
        tx.run(
            q.RELINK_RECORD, repo=repo, everything=everything, names=sorted(names), lost=lost or []
        ).single()


def dependents(tx: Tx, repo: str) -> list[str]:
    """The repositories whose links a change of ``repo`` can change."""
    return sorted({r["key"] for r in tx.run(q.DEPENDENTS, repo=repo)})


def relink_sources(tx: Tx, dependent: str, library: str) -> list[str]:
    """The dependent's symbols whose links a change of ``library`` can change: those with a
    site into a module it provides, and those linked into it now."""
    modules = _modules(tx, dependent, library)
    sites = sites_into(tx, dependent, modules)
    linked = tx.run(q.RELINK_LINKED, dependent=dependent, repo=library)
    return sorted({r["src"] for r in sites} | {r["src"] for r in linked})


def linked_by_name(tx: Tx, library: str, names: set[str]) -> dict[str, set[tuple[str, int]]]:
    """Per dependent, its sites (symbol key, line) linked now to a definition of ``library``
    named one of ``names`` (through the name index: what the change touched)."""
    out: dict[str, set[tuple[str, int]]] = {}
    plain = sorted(n for n in names if "\t" not in n)
    for r in tx.run(q.RELINK_LINKED_BY_NAME, names=plain, repo=library) if plain else []:
        out.setdefault(r["dependent"], set()).add((r["src"], r["line"]))
    return out


def relink_lines(
    tx: Tx,
    dependent: str,
    library: str,
    names: set[str],
    linked: set[tuple[str, int]] | None = None,
) -> set[tuple[str, int]]:
    """The dependent's sites (symbol key, line) whose link a change of ``library`` touching
    ``names`` can change: into a module it provides, with an identifier (``local``,
    ``rest``) among them, or ``linked`` now to a definition of such a name (read when not
    given). The sites are read through their modules, only those whose text holds a name."""
    if "*" in names:  # a module re-exported whole came or went (JS): any name may have
        every = tx.run(q.RELINK_LINKED, dependent=dependent, repo=library)
        into = sites_into(tx, dependent, _modules(tx, dependent, library))
        return {(r["src"], r["line"]) for r in [*into, *every]}
    if linked is None:
        linked = linked_by_name(tx, library, names).get(dependent, set())
    plain = sorted(n for n in names if "\t" not in n)
    modules = _modules(tx, dependent, library)
    found: Iterable[Any] = (
        tx.run(
            q.RELINK_SITES_NAMED, modules=modules, names=plain, prefix=external_key(dependent, "")
        )
        if plain and modules
        else []
    )
    out = set(linked)
    for r in found:
        tokens = _IDENT.findall(f"{r['local']}.{r['rest']}")
        if r["local"] == "*" and not r["rest"]:  # a JS namespace called: the default export
            tokens.append("default")
        if not names.isdisjoint(tokens):
            out.add((r["src"], r["line"]))
    return out


def _modules(tx: Tx, dependent: str, library: str) -> list[str]:
    """The dependent's external modules that ``library`` provides."""
    provided = [
        Provider(library, "", r["ecosystem"], tuple(r["modules"] or ()))
        for r in tx.run(q.LINK_PROVIDED, repo=library)
    ]
    found = tx.run(q.LINK_MODULES, repo=dependent).single(strict=True)["names"]
    return [m for m in found if provider_of(m, provided) is not None]


def _lost(entries: tuple[str, ...]) -> dict[str, frozenset[tuple[str, int, str]]]:
    """The recorded lost links (``repo<TAB>src<TAB>line<TAB>site``) per dependent."""
    out: dict[str, set[tuple[str, int, str]]] = {}
    for entry in entries:
        repo, src, line, site = [*entry.split("\t", 3), "", "", ""][:4]
        if line.lstrip("-").isdigit():
            out.setdefault(repo, set()).add((src, int(line), site))
    return {k: frozenset(v) for k, v in out.items()}


def relink_dependents(
    graph: Graph, library: str, *, everything: bool = False
) -> dict[str, LinkStats]:
    """Re-link every dependent of ``library`` after it published (what it changed, pending
    on its node) or was removed (``everything``): one transaction per dependent."""
    with graph.transaction(f"dependents of {library}") as tx:
        keys = dependents(tx, library)
        row = tx.run(q.RELINK_PENDING, repo=library).single()
    pending = Pending(
        everything or bool(row and row["everything"]),
        tuple(row["names"]) if row else (),
        (row["commit"] or "") if row else "",
        tuple(row["lost"]) if row else (),
    )
    if not pending.everything and not pending.names and not pending.lost:
        if keys and pending.commit:  # only the commit may have changed
            with graph.transaction(f"links into {library} at its commit") as tx:
                tx.run(
                    q.RELINK_STAMP_ALL, dependents=keys, repo=library, commit=pending.commit
                ).single()
        return {}
    names = None if pending.everything else set(pending.names)
    linked: dict[str, set[tuple[str, int]]] = {}
    if names is not None and keys:  # the names its modules re-export the changed ones under
        with graph.transaction(f"aliases in {library}") as tx:
            names |= aliases(tx, library, names)
            if "*" in names:  # a module re-exported whole came or went: every site
                names = None
            else:
                linked = linked_by_name(tx, library, names)
    lost = _lost(pending.lost)
    out: dict[str, LinkStats] = {}
    for key in keys:
        began = time.monotonic()
        with graph.transaction(f"relink {key} after {library}") as tx:
            if names is None:
                stats = link(tx, key, relink_sources(tx, key, library))
            else:
                gone = lost.get(key, frozenset())
                lines = relink_lines(tx, key, library, names, linked.get(key, set()))
                lines |= {(src, line) for src, line, _ in gone}
                stats = link(tx, key, lines=lines, lost=gone)
            if pending.commit:
                found = tx.run(q.RELINK_STAMP, dependent=key, repo=library, commit=pending.commit)
                rec = found.single()
                stats.stamped = int(rec["stamped"]) if rec else 0
        stats.duration_s = time.monotonic() - began
        out[key] = stats
    with graph.transaction(f"relinked after {library}") as tx:
        tx.run(
            q.RELINK_DONE,
            repo=library,
            names=list(pending.names),
            lost=list(pending.lost),
            everything=pending.everything,
        ).single()
    return out
