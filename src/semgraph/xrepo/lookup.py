"""Lookups in a provider's graph that the cross-repository link (:mod:`semgraph.xrepo.link`)
shares between languages: definitions by qualified name, and a module's re-exports
(``File.reexports``, ``exported<TAB>path<TAB>member``; member ``*``: all of that module, as
JS/TS ``export * from``) followed to the definition they name; and which of the files a
site's definition may be in (npm, Maven, crates: :func:`probe_files`) the provider has."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from semgraph.db import Tx
from semgraph.resolve.symtab import file_key
from semgraph.xrepo import queries as q

REEXPORT_HOPS = 4  # files followed: ``export {default as x} from`` takes two in one package
MAX_STARS = 32  # ``export * from`` modules tried for one name at one hop


@dataclass(frozen=True)
class Site:
    """One external call site of the dependent (a ``CALLS_EXTERNAL`` row): its symbol, line,
    module and the ``local.rest`` it calls."""

    src: str
    line: int
    module: str
    local: str
    rest: str


#: a file a site's definition may be in: (its path, the name to look for there, the members
#: after it)
Probe = tuple[str, str, list[str]]


def by_qn(tx: Tx, wanted: dict[int, tuple[str, str]]) -> dict[int, list[str]]:
    """site -> the keys of the symbols of ``(repo, qualified name)``."""
    rows = [{"i": i, "repo": repo, "qn": qn} for i, (repo, qn) in wanted.items()]
    if not rows:
        return {}
    return {r["i"]: sorted(r["keys"]) for r in tx.run(q.LINK_BY_QN, rows=rows) if r["keys"]}


def reexport(entries: list[str] | None, name: str) -> tuple[str, str] | None:
    """(path, member) a module re-exports as ``name``, from its ``File.reexports``."""
    for entry in entries or ():
        local, path, member = entry.split("\t", 2)
        if local == name:
            return path, member
    return None


def _stars(entries: list[str] | None) -> list[str]:
    """The modules a module re-exports whole (``export * from "./w"``)."""
    found = (e.split("\t", 2) for e in entries or ())
    return sorted(path for local, path, member in found if local == "*" and member == "*")


def follow(tx: Tx, start: dict[int, tuple[str, str, str]]) -> dict[int, tuple[str, int]]:
    """site -> (the qualified name of the top-level definition each (repo, path, member)
    names, the files moved to: 0 when the file defines it), following re-exports up to
    :data:`REEXPORT_HOPS` files; a name a module neither defines nor re-exports by name is
    looked for in the modules it re-exports whole, in path order (the first that has it)."""
    out: dict[int, tuple[str, int]] = {}
    todo = {i: [(*v, 0)] for i, v in start.items()}
    for _ in range(REEXPORT_HOPS):
        asked: list[tuple[int, str, str, str, int]] = []  # row -> (site, repo, path, ...)
        rows = []
        for i, found in sorted(todo.items()):
            for repo, path, member, moves in found[:MAX_STARS]:
                rows.append({"i": len(asked), "file": file_key(repo, path), "name": member})
                asked.append((i, repo, path, member, moves))
        if not rows:
            break
        nxt: dict[int, list[tuple[str, str, str, int]]] = {}
        for r in sorted(tx.run(q.LINK_MEMBER, rows=rows), key=lambda r: r["i"]):
            i, repo, path, member, moves = asked[r["i"]]
            if i in out:
                continue
            defs = [qn for key, qn in r["found"] if key is not None]
            if defs:  # the top-level one
                out[i] = (min(defs, key=lambda qn: (qn.count("."), qn)), moves)
                continue
            hop_to = reexport(r["reexports"], member)
            if hop_to is not None and hop_to[1] != "*":
                nxt.setdefault(i, []).append((repo, *hop_to, moves + (hop_to[0] != path)))
            elif hop_to is None and member != "default":  # `export *` carries no default
                more = [(repo, p, member, moves + 1) for p in _stars(r["reexports"])]
                nxt.setdefault(i, []).extend(more)
        todo = {i: v for i, v in nxt.items() if i not in out}
    return out


def probe_files(
    tx: Tx, sites: dict[int, tuple[Any, Any]], probes: Callable[[Any, Any], Iterable[Probe]]
) -> list[tuple[int, int, Probe]]:
    """(site, rank, probe) of each of the ``probes`` of a site (``probes(site, provider)``, the
    likeliest first) whose file the provider's graph has, in the order asked (``rank``: the
    probe's place among its site's)."""
    asked: list[tuple[int, int, Probe]] = []
    rows = []
    for i, (s, p) in sites.items():
        for rank, probe in enumerate(probes(s, p)):
            rows.append({"i": len(asked), "key": file_key(p.repo, probe[0])})
            asked.append((i, rank, probe))
    present = {r["i"] for r in tx.run(q.LINK_FILES, rows=rows)} if rows else set()
    return [a for n, a in enumerate(asked) if n in present]


def first_per_site(present: list[tuple[int, int, Probe]]) -> dict[int, Probe]:
    """Each site's likeliest probe of those :func:`probe_files` found."""
    out: dict[int, Probe] = {}
    for i, _, probe in present:
        out.setdefault(i, probe)
    return out


def link_qualified(tx: Tx, sites: dict[int, tuple[Any, Any]]) -> dict[int, tuple[list[str], str]]:
    """site -> (definition keys, "definition") for languages whose qualified names are their
    namespaces' (PHP: ``use Monolog\\Handler\\StreamHandler; new StreamHandler()`` is
    ``Monolog.Handler.StreamHandler``): the module, the name and the members after it."""
    wanted = {
        i: (p.repo, ".".join([s.module.replace("\\", "."), s.local, *filter(None, [s.rest])]))
        for i, (s, p) in sites.items()
        if s.local
    }
    return {i: (keys, "definition") for i, keys in by_qn(tx, wanted).items()}
