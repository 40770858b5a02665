"""A dependent's cross-repository counts: each of its external calls is *linked*
(an ``XCALLS`` edge), else *ambiguous* (a module several live repositories provide), else
*unmatched* (every module it may be in has a provider; none defines it), else *unprovided*.
The totals are set on its ``:Repository`` (``xrepo_linked`` ...).

A full count (:func:`count_all`) reads every external call site of the dependent; a
library's re-link counts only the calls it touched (:func:`count_lines`), before and after,
and adds the difference (:func:`add_counts`): its cost follows the change, not the
dependent's size. The calls whose links the library's publish itself dropped (a definition
removed, its ``XCALLS`` with it) were counted linked by the dependent's last count: the
re-link is told them (``lost``) and counts them linked before. A full count makes those
records stale, and clears them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from semgraph.db import Tx
from semgraph.xrepo import queries as q

CLASSES = ("linked", "ambiguous", "unprovided", "unmatched")


@dataclass(frozen=True)
class Provider:
    repo: str
    commit: str
    ecosystem: str
    modules: tuple[str, ...]
    exports: tuple[str, ...] = ()  # npm: ``subpath<TAB>file`` entries


def provider_of(module: str, providers: list[Provider]) -> Provider | None:
    for p in providers:
        for m in p.modules:
            if p.ecosystem == "go":
                if module == m or module.startswith(m + "/"):
                    return p
            elif module == m or module.startswith((m + ".", m + "/", m + "\\")):
                return p
    return None


def is_ambiguous(module: str, ambiguous: set[str]) -> bool:
    return any(module == m or module.startswith((m + ".", m + "/", m + "\\")) for m in ambiguous)


def classify(
    modules: list[str], linked: bool, providers: list[Provider], ambiguous: set[str]
) -> str:
    """The class of one call (its rows' distinct modules: an open site has several)."""
    if linked:
        return "linked"
    if any(is_ambiguous(m, ambiguous) for m in modules):
        return "ambiguous"
    if all(provider_of(m, providers) is not None for m in modules):
        return "unmatched"
    return "unprovided"  # an open site none of whose indexed providers has it


def count_all(
    tx: Tx, repo: str, providers: list[Provider], ambiguous: set[str], stats: Any
) -> None:
    """Count every external call of ``repo`` and set its totals (on ``stats`` too)."""
    found: Counter[str] = Counter()
    for r in tx.run(q.LINK_COUNT_SITES, repo=repo):
        found[classify(r["modules"], r["linked"], providers, ambiguous)] += r["n"]
    _set(stats, found)
    totals: dict[str, Any] = {c: found[c] for c in CLASSES}
    tx.run(q.LINK_COUNTS, repo=repo, prefix=repo + "\t", **totals).single()


def count_lines(
    tx: Tx,
    lines: Iterable[tuple[str, int]],
    providers: list[Provider],
    ambiguous: set[str],
    lost: frozenset[tuple[str, int, str]] = frozenset(),
) -> Counter[str]:
    """The classes of the calls on ``lines`` (``(symbol key, line)``); a call in ``lost``
    (``(symbol key, line, site)``) counts as linked."""
    rows = [{"src": src, "line": line} for src, line in sorted(lines)]
    found: Counter[str] = Counter()
    for r in tx.run(q.LINK_COUNT_LINES, rows=rows) if rows else []:
        was = r["linked"] or (r["src"], r["line"], r["site"]) in lost
        found[classify(r["modules"], was, providers, ambiguous)] += r["n"]
    return found


def add_counts(tx: Tx, repo: str, before: Counter[str], after: Counter[str], stats: Any) -> bool:
    """Add ``after - before`` to the totals of ``repo`` (on ``stats`` too); False when it
    has none yet (never counted: the caller counts in full)."""
    delta: dict[str, Any] = {c: after[c] - before[c] for c in CLASSES}
    rec = tx.run(q.LINK_COUNTS_ADD, repo=repo, **delta).single()
    if rec is None or not rec["counted"]:
        return False
    _set(stats, Counter({c: rec[c] for c in CLASSES}))
    return True


def _set(stats: Any, found: Counter[str]) -> None:
    stats.linked, stats.ambiguous = found["linked"], found["ambiguous"]
    stats.unprovided, stats.unmatched = found["unprovided"], found["unmatched"]
