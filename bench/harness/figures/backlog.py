"""Rows of ``bench/fleet/bench_backlog.py``: an organisation's first day, a backlog of public
repositories first-indexed by 1 and by 2 workers in the same run.

Reads the ``backlog.source``, ``backlog.mode`` and ``backlog.summary`` records of
``bench.harness.records``. The issue gives no target: the rows report, and the one verdict is
whether 2 workers finish the backlog faster than 1 (wall time ratio < 1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from bench.harness import records
from bench.harness.figures import Figure, arg, count, load, not_measured, num, ok

FASTER = "< 1 (2 workers faster than 1)"


def _backlog(out: str) -> str:
    sources = records.read(out, "backlog.source")
    if not sources:
        return ""
    regs = Counter(str(s.get("registry")) for s in sources)
    langs = Counter(str(s.get("language")) for s in sources)
    sizes = sorted(int(s["files"]) for s in sources if num(s, "files"))
    span = f"{sizes[0]}-{sizes[-1]} files" if sizes else ""
    return (
        f"{len(sources)} repositories ({', '.join(f'{n} {r}' for r, n in regs.most_common())}; "
        f"{', '.join(f'{n} {lang}' for lang, n in langs.most_common())}; {span})"
    )


def _workers(m: dict[str, Any]) -> str:
    machine = m.get("machine") or {}
    return ", ".join(
        f"{w.get('name')} {w.get('peak_rss_mib')} MiB, {w.get('cpu_s')} s CPU"
        for w in machine.get("workers") or []
    )


def _mode_figures(m: dict[str, Any], base: dict[str, Any] | None) -> list[Figure]:
    name = f"{m['mode']} ({m['workers']} worker{'s' if m['workers'] != 1 else ''})"
    size = f"{m.get('repos')} repositories, {count(m.get('files'))} files, "
    size += f"{count(m.get('chunks'))} chunks"
    at = load(m.get("load_1m_start"))
    other = base is not None and base is not m
    wall = Figure(
        f"backlog first index, {name}: wall time ({size})",
        f"{m['wall_s']:.1f} s",
        f"{base['wall_s']:.1f} s with {base['mode']}" if other and base else "-",
        f"{m['wall_s'] / base['wall_s']:.2f}x" if other and base and base["wall_s"] else "-",
        "-",
        "",
        at,
    )
    p2s = Figure(
        f"backlog, {name}: push-to-searchable p50 / p95 (claim wait p50 / p95)",
        f"{m['p50_s']:.1f} / {m['p95_s']:.1f} s "
        f"({m.get('claim_wait_p50_s')} / {m.get('claim_wait_p95_s')} s)",
        f"{base['p50_s']:.1f} / {base['p95_s']:.1f} s with {base['mode']}"
        if other and base
        else "-",
        f"p95 {m['p95_s'] / base['p95_s']:.2f}x" if other and base and base["p95_s"] else "-",
        "-",
        "",
        at,
    )
    machine = m.get("machine") or {}
    res = Figure(
        f"backlog, {name}: peak RSS and CPU per worker; machine",
        _workers(m) or "-",
        f"machine {machine.get('machine_busy_pct')} % busy ({machine.get('cores')} cores), "
        f"load mean {machine.get('load_1m_mean')} max {machine.get('load_1m_max')}",
        "-",
        "-",
        "",
        at,
    )
    limit = Figure(f"backlog, {name}: what limits it", str(m.get("limit")), "-", "-", "-")
    return [wall, p2s, res, limit]


def figures_backlog(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    modes = [
        m
        for m in records.read(out, "backlog.mode")
        if num(m, "wall_s", "p50_s", "p95_s", "workers") and m.get("mode")
    ]
    one = next((m for m in modes if m["workers"] == 1), None)
    figs: list[Figure] = []
    what = _backlog(out)
    if what and modes:
        figs.append(Figure("backlog: the repositories enqueued at once", what, "-", "-", "-"))
    for m in modes:
        figs += _mode_figures(m, one)
    for s in records.read(out, "backlog.summary"):
        if not num(s, "ratio", "wall_s", "baseline_wall_s"):
            continue
        figs.append(
            Figure(
                f"backlog wall time, {s.get('mode')} / {s.get('baseline')} (same run, "
                f"{s.get('repos')} repositories)",
                f"{s['wall_s']:.1f} s",
                f"{s['baseline_wall_s']:.1f} s with {s.get('baseline')}",
                f"{s['ratio']:.2f}x",
                FASTER,
                ok(s["ratio"] < 1),
                load(one.get("load_1m_start")) if one else "",
            )
        )
    seen = {str(m["mode"]) for m in modes}
    wanted = (arg(args, "--modes") or "any,any+any").split(",") if args is not None else []
    for mode in wanted:
        if mode not in seen:
            figs.append(not_measured(f"backlog first index, {mode}: wall time", "-", "no result"))
    return figs
