"""Rows of ``bench.accuracy.bench_accuracy``: per repository, recall (and counting ambiguous
candidates), precision over the sites the oracle resolves inside the repository and over all
sites, and the wrong targets of the tiers that must have none; then each tier's precision.
A Java repository (javac's oracle, ``bench.accuracy.accuracy_java``) adds what the oracle said
of every site (in the repository, external, unknown) and the view that counts an edge to any
overload of the oracle's method as right.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.harness import records
from bench.harness.figures import Figure, not_measured, num, ok

RECALL_TARGET = 0.85
PRECISION_TARGET = 0.99
EXACT_TIERS = ("import", "module", "scope", "receiver")  # zero wrong targets allowed


def _p(v: Any) -> str:
    return f"{v:.3f}" if isinstance(v, int | float) else "-"


def _false(r: dict[str, Any]) -> str:
    """The false edges of the all-sites view by what the oracle said instead."""
    if not num(r, "false_external", "false_nondef", "false_none"):
        return f"{r.get('false_edges', 0):,} edges the oracle says are external or nothing"
    why = (
        "javac: a call it could not attribute, its dependencies not on the class path"
        if r.get("language") == "java"
        else "jedi: mostly pytest fixtures, see the verdicts"
    )
    return (
        f"{r['false_edges']:,} false edges: {r['false_external']:,} external, "
        f"{r['false_nondef']:,} not a definition, {r['false_none']:,} where the oracle found "
        f"nothing ({why})"
    )


def _java(r: dict[str, Any], name: str) -> list[Figure]:
    """javac's answer over all sites, and the view where any overload counts as right."""
    o = r.get("oracle_sites") or {}
    return [
        Figure(
            f"call sites javac attributes in the repository, {name}",
            f"{o.get('internal', 0):,}",
            f"{o.get('external', 0):,} external (JDK), {o.get('none', 0):,} unknown (not "
            f"attributed: a dependency missing), {o.get('nondef', 0):,} to a member the compiler "
            f"made; {r.get('oracle_chain_sites', 0):,} this()/super() left out",
            f"{r.get('oracle_files', 0):,} files",
            "-",
        ),
        Figure(
            f"recall / precision in repository, any overload right, {name}",
            f"{_p(r.get('recall_any_overload'))} / {_p(r.get('precision_in_repo_any_overload'))}",
            f"{r.get('wrong_any_overload', 0):,} wrong targets; "
            f"{_p(r.get('recall_ambiguous_any_overload'))} recall counting ambiguous candidates",
            "-",
            "-",
        ),
    ]


def _repo(r: dict[str, Any], tiers: list[dict[str, Any]]) -> list[Figure]:
    name = f"{r['repo']} ({r['language']}, {r.get('commit', '?')})"
    sites = f"{r['internal_sites']:,} call sites the oracle resolves in the repository"
    figs = [
        Figure(
            f"recall, {name}",
            _p(r["recall"]),
            f"{_p(r['recall_ambiguous'])} counting ambiguous candidates",
            sites,
            f">= {RECALL_TARGET}",
            ok(r["recall"] >= RECALL_TARGET),
        ),
        Figure(
            f"precision over sites the oracle resolves in the repository, {name}",
            _p(r["precision_in_repo"]),
            f"{r['correct']:,} right, {r['wrong']:,} wrong targets",
            "-",
            f">= {PRECISION_TARGET}",
            ok(r["precision_in_repo"] >= PRECISION_TARGET),
        ),
        Figure(
            f"precision over all sites, {name}",
            _p(r["precision_all"]),
            _false(r),
            "-",
            f">= {PRECISION_TARGET}",
            ok(r["precision_all"] >= PRECISION_TARGET),
        ),
    ]
    if r.get("language") == "java":
        figs += _java(r, name)
    exact = [t for t in tiers if t["tier"] in EXACT_TIERS]
    wrong = sum(t.get("wrong", 0) for t in exact)
    figs.append(
        Figure(
            f"wrong targets in the {'/'.join(EXACT_TIERS)} tiers, {name}",
            f"{wrong:,}",
            ", ".join(f"{t['tier']} {t.get('wrong', 0)}" for t in exact) or "-",
            "-",
            "0",
            ok(wrong == 0),
        )
    )
    for t in tiers:
        figs.append(
            Figure(
                f"tier {t['tier']}, {name}: precision in repository / all sites",
                f"{_p(t['precision_in_repo'])} / {_p(t['precision_all'])}",
                f"{t.get('correct', 0):,} right, {t.get('wrong', 0):,} wrong, "
                + f"{sum(t.get(k, 0) for k in ('false_external', 'false_nondef', 'false_none')):,}"
                + " false",
                f"{_p(t.get('recall_share'))} of the recall",
                "-",
            )
        )
    return figs


def figures_accuracy(out: str, args: Sequence[str] | None) -> list[Figure]:
    repos = [r for r in records.read(out, "accuracy.repo") if num(r, "internal_sites")]
    tiers = records.read(out, "accuracy.tier")
    figs: list[Figure] = []
    for r in repos:
        if not num(r, "recall", "precision_in_repo", "precision_all"):
            figs.append(not_measured(f"accuracy, {r.get('repo')}", "-", "no figures"))
            continue
        figs += _repo(r, [t for t in tiers if t.get("repo") == r["repo"]])
    if not figs and args is not None:  # asked for and printed nothing
        figs.append(not_measured("call resolution accuracy", "-", "no accuracy.repo records"))
    return figs
