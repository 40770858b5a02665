"""Rows of the fleet benchmarks (issue 26): head-of-line with lanes (``bench_lanes``) and a
one-file push on a cold host against a warm one (``bench_coldhost``)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from bench.harness import records
from bench.harness.figures import MET, MISSED, Figure, count, f, load, not_measured, num

LANES_TARGET_S = 15.0  # p95 push-to-searchable of the small repositories, with lanes


def figures_lanes(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    modes = [r for r in records.read(out, "lanes.mode") if num(r, "p50_s", "p95_s")]
    summaries = records.read(out, "lanes.summary")
    if args is None and not modes:
        return []
    figs = [
        Figure(
            f"small repositories' push-to-searchable, workers {r.get('lanes')}",
            f"p50 {f(r['p50_s'], 1)} s, p95 {f(r['p95_s'], 1)} s",
            str(r["large"]) if r.get("large") else f"large jobs hold a worker {r.get('hold_s')} s",
            "-",
            f"p95 <= {LANES_TARGET_S:g} s" if "small" in str(r.get("lanes")) else "-",
            (MET if r["p95_s"] <= LANES_TARGET_S else MISSED)
            if "small" in str(r.get("lanes"))
            else "",
        )
        for r in modes
    ]
    for s in summaries:
        if num(s, "p95_any_s", "p95_lanes_s", "ratio"):
            figs.append(
                Figure(
                    "p95, both workers any / one any + one small (same run)",
                    f"{f(s['p95_lanes_s'], 1)} s with lanes",
                    f"{f(s['p95_any_s'], 1)} s without",
                    f"{f(s['ratio'], 1)}x",
                    "-",
                )
            )
    if not modes:
        figs.append(not_measured("push-to-searchable with lanes", "p95 <= 15 s", "no lanes.mode"))
    return figs


def figures_coldhost(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rounds = [r for r in records.read(out, "coldhost.round") if isinstance(r.get("phases"), dict)]
    if args is None and not rounds:
        return []
    figs: list[Figure] = []
    for files in sorted({int(r.get("files") or 0) for r in rounds}, reverse=True):
        cold = [r for r in rounds if r.get("files") == files and r.get("host") == "cold"]
        warm = [r for r in rounds if r.get("files") == files and r.get("host") == "warm"]
        if not cold or not warm:
            continue
        for phase in cold[0]["phases"]:
            c, w = _median(cold, phase), _median(warm, phase)
            if c is None or w is None:
                continue
            figs.append(
                Figure(
                    f"one-file push at {count(files)} files, {phase}: cold host",
                    f"{f(c)} s",
                    f"warm host {f(w)} s",
                    f"{f(c / w, 1)}x" if w > 0 else "-",
                    "-",
                    "",
                    load(cold[0].get("load")),
                )
            )
    for d in records.read(out, "coldhost.disk"):
        figs.append(
            Figure(
                f"a warm host's caches of one repository at {count(d.get('files'))} files",
                f"{count(d.get('total'))} bytes",
                f"{d.get('per_file')} bytes per file",
                "-",
                "-",
            )
        )
    if not figs:
        figs.append(not_measured("cold host / warm host", "-", "no paired coldhost.round"))
    return figs


def _median(rows: list[dict[str, Any]], phase: str) -> float | None:
    values = [r["phases"][phase] for r in rows if isinstance(r["phases"].get(phase), int | float)]
    return statistics.median(values) if values else None
