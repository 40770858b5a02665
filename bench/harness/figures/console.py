"""Rows of ``bench/interfaces/bench_console.py``: each console page's p50/p95 time and size, against
the JSON API call (or ``GET /healthz``) timed in the same run. Reads ``console.page``."""

from __future__ import annotations

from collections.abc import Sequence

from bench.harness import records
from bench.harness.figures import Figure, arg, not_measured, num, ok, x

TARGET_P95_MS = 300.0


def figures_console(out: str, args: Sequence[str] | None) -> list[Figure]:
    rows = records.read(out, "console.page")
    target = f"p95 <= {TARGET_P95_MS:.0f} ms"
    if not rows:
        if args is None:  # a kept log's record lines only: nothing to say it is missing
            return []
        files = arg(args, "--files") or "20000"
        return [not_measured(f"console pages ({files} files)", target, "no console.page line")]
    figs = []
    for r in rows:
        if not num(r, "p50_ms", "p95_ms", "bytes", "baseline_p95_ms"):
            figs.append(not_measured(f"console {r.get('page')}", target, "incomplete line"))
            continue
        scale = f"{r.get('files')} files, {r.get('jobs')} jobs"
        name = f"console {r['page']} ({scale}): p95, size {r['bytes']:,} B"
        figs.append(
            Figure(
                name,
                f"{r['p95_ms']} ms (p50 {r['p50_ms']})",
                f"{r['baseline_p95_ms']} ms {r['baseline']} p95",
                x(r["p95_ms"], r["baseline_p95_ms"]),
                target,
                ok(r["p95_ms"] <= TARGET_P95_MS and r.get("status") == 200),
                str(r.get("load_1m", "")),
            )
        )
    return figs
