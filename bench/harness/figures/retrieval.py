"""Rows of the retrieval benchmark (``bench/search/bench_retrieval.py``): recall@5 and MRR@10 of
BM25, kNN and the hybrid on the own evaluation, the outside one (each half, each
repository, docstring queries and written questions apart) and the csn one (each half, each
language; its run is kept in ``bench/results/retrieval-csn.log``), and the paired bootstrap of
the hybrid against the best single retriever.

Targets (issue 20): hybrid recall@5 >= 0.75 on the outside test half, and the hybrid at
least as good as the best single retriever on every evaluation (judged on each evaluation's
headline slice: the own set, and the outside test half).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.harness import records
from bench.harness.figures import Figure, num, ok

OUTSIDE_TARGET = 0.75
MODES = ("bm25", "knn", "hybrid")


def _slices(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    """(eval, half, repo, kind) -> mode -> its row (the last one printed wins)."""
    out: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for r in rows:
        key = (str(r["eval"]), str(r["half"]), str(r["repo"]), str(r["kind"]))
        out.setdefault(key, {})[str(r["mode"])] = r
    return out


def _name(key: tuple[str, str, str, str], n: int) -> str:
    name, sub, repo, kind = key
    parts = [{"own": "own", "csn": "csn (held-out packages)"}.get(name, "outside")]
    if name in ("outside", "csn"):
        parts.append({"all": "both halves", "tune": "tuning half", "test": "test half"}[sub])
    if repo != "all":
        parts.append(repo)
    if kind not in ("all", "own"):
        kinds = {"docstring": "docstring queries", "question": "written questions"}
        parts.append(kinds.get(kind, kind))  # csn: the language
    return ", ".join(parts) + f" ({n} queries)"


def figures_retrieval(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rows = [r for r in records.read(out, "retrieval.eval") if num(r, "recall5", "mrr10", "n")]
    if not rows:
        return []
    boots = {
        (str(b["eval"]), str(b["half"])): b
        for b in records.read(out, "retrieval.bootstrap")
        if num(b, "diff", "lo", "hi")
    }
    figs: list[Figure] = []
    for key, modes in _slices(rows).items():
        if not all(m in modes for m in MODES):
            continue
        best_single = max(modes["bm25"]["recall5"], modes["knn"]["recall5"])
        headline = key[0] == "own" or (key[1] == "test" and key[2:] == ("all", "all"))
        for mode in MODES:
            r = modes[mode]
            target, verdict = "-", ""
            if mode == "hybrid" and headline:
                target = ">= best single" + (
                    f", >= {OUTSIDE_TARGET}" if key[0] == "outside" else ""
                )
                good = r["recall5"] >= best_single and (
                    key[0] != "outside" or r["recall5"] >= OUTSIDE_TARGET
                )
                verdict = ok(good)
            ratio = "-"
            boot = (
                boots.get((key[0], key[1])) if key[2:] in (("all", "all"), ("all", "own")) else None
            )
            if mode == "hybrid" and boot:
                ratio = (
                    f"{boot['diff']:+.3f} vs {boot['best']} "
                    f"(95 % CI {boot['lo']:+.3f} .. {boot['hi']:+.3f})"
                )
            figs.append(
                Figure(
                    f"{mode} recall@5 / MRR@10, {_name(key, int(r['n']))}",
                    f"{r['recall5']:.3f} / {r['mrr10']:.3f}",
                    f"{best_single:.3f} best single" if mode == "hybrid" else "-",
                    ratio,
                    target,
                    verdict,
                )
            )
    return figs
