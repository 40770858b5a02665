"""Rows of the report for ``bench_reuse`` (a fork's first index from the shared vector store)
and ``bench_firstindex`` (the whole first index: torch, the default path, CodeGraphContext)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.harness import records
from bench.harness.figures import MIB, Figure, f, load, num, ok, x


def figures_reuse(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    runs = {str(r.get("repo")): r for r in records.read(out, "reuse.run") if num(r, "chunks")}
    sums = [s for s in records.read(out, "reuse.summary") if num(s, "store_share_pct")]
    if not sums or "origin" not in runs or "fork" not in runs:
        return []
    s, o, k = sums[-1], runs["origin"], runs["fork"]
    return [
        Figure(
            "fork's first index: chunks whose vector came from the shared store",
            f"{s['fork_store_reused']:,} of {s['fork_chunks']:,} ({s['store_share_pct']:.1f} %)",
            f"{k.get('embedded')} embedded; the changed files hold {_changed(s)} chunks",
            f"{s['store_share_pct'] / 100:.3f}",
            "embedded <= the changed files' chunks",
            ok(num(s, "fork_changed_chunks") and s["fork_embedded"] <= s["fork_changed_chunks"]),
            load(k.get("load_1m")),
        ),
        Figure(
            "fork's embedding phase / the origin's (same run)",
            f"{f(k['embed_index_s'])} s",
            f"{f(o['embed_index_s'])} s (origin: {o['chunks']:,} chunks, all embedded)",
            x(k["embed_index_s"], o["embed_index_s"], 3),
            "< 1",
            ok(k["embed_index_s"] < o["embed_index_s"]),
            load(o.get("load_1m")),
        ),
    ]


def _changed(summary: dict[str, Any]) -> str:
    return str(summary.get("fork_changed_chunks", "(not recorded)"))


def _phase_rss(row: dict[str, Any]) -> str:
    peaks = row.get("phase_peak_rss_bytes") or {}
    return ", ".join(f"{p} {v / MIB:.0f}" for p, v in peaks.items() if isinstance(v, int))


def figures_firstindex(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    runs = [r for r in records.read(out, "firstindex.run") if num(r, "wall_s") and r.get("rc") == 0]
    best: dict[str, dict[str, Any]] = {}
    for r in runs:
        tool = str(r.get("tool"))
        if tool not in best or r["wall_s"] < best[tool]["wall_s"]:
            best[tool] = r
    figs: list[Figure] = []
    for tool, r in best.items():
        extra = f"{r.get('chunks')} chunks, {r.get('embedded')} embedded" if "chunks" in r else ""
        if "nodes" in r:
            extra = f"{r['nodes']:,} nodes, {r['edges']:,} edges"
        figs.append(
            Figure(
                f"first index, {tool}: wall time and peak RSS (MiB) per phase",
                f"{f(r['wall_s'], 1)} s, peak {r.get('peak_rss_mib')} MiB",
                extra,
                _phase_rss(r) or "-",
                "-",
                "",
                load(r.get("load_1m")),
            )
        )
    if "torch" in best and "default" in best:
        t, d = best["torch"]["wall_s"], best["default"]["wall_s"]
        figs.append(
            Figure(
                "whole first index, torch path / default path (same run)",
                f"{f(d, 1)} s",
                f"torch {f(t, 1)} s",
                x(t, d),
                "ratio >= 3",
                ok(t / d >= 3),
                load(best["default"].get("load_1m")),
            )
        )
    if "cgc" in best and "default" in best:
        c, d = best["cgc"]["wall_s"], best["default"]["wall_s"]
        figs.append(
            Figure(
                "whole first index, semgraph default / CodeGraphContext (same run)",
                f"{f(d, 1)} s",
                f"CodeGraphContext {f(c, 1)} s",
                x(d, c),
                "ratio <= 1",
                ok(d <= c),
                load(best["cgc"].get("load_1m")),
            )
        )
    return figs
