"""Rows of the report for the resolver's benchmarks (issue 25): ``bench_resolve`` (full-resolve
CPU of the pre-typed resolver, today's and this tree's, side by side), ``bench_incremental``
(incremental against full resolve per scenario, with equality) and ``bench_push_resolve`` (the
job's parse and resolve phases of a one-function push).

These benchmarks print plain JSON lines (no ``record`` key), read here as they are; a run cut
short (no summary line, a scenario or tree asked for and not printed) shows what it did not
measure, and is never judged met on the part it did.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from bench.harness.figures import (
    MET,
    NOT_MEASURED,
    Figure,
    arg,
    count,
    f,
    load,
    not_measured,
    num,
    ok,
    x,
)
from bench.harness.records import json_lines

RESOLVE_TARGET = 1.5  # this tree's full resolve CPU / the pre-typed resolver's, on sympy
TREES = ("pre-typed", "today", "after")
PUSH_RESOLVE_TARGET_S = 1.0  # CPU seconds of the resolve phase of a one-function push


def _partial(verdict: str, why: str) -> str:
    """A target a partial run would meet is not met: it was not measured in full."""
    return NOT_MEASURED if verdict == MET and why else verdict


def figures_resolve(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rows = json_lines(out)
    head = next((r for r in rows if "spills" in r), {})
    runs = [r for r in rows if isinstance(r.get("tree"), str) and num(r, "cpu_s")]
    checks = [r for r in rows if "check" in r and num(r, "differences")]
    if args is None and not runs:
        return []
    summary = next((r for r in rows if "cpu_s_min" in r), None)
    repo = str(head.get("repo") or arg(args, "--repo") or "sympy")
    asked = (arg(args, "--trees") or ",".join(TREES)).split(",") if args is not None else []
    rounds = int(arg(args, "--rounds") or 2) if args is not None else 0
    cpu: dict[str, list[float]] = {}
    last: dict[str, dict[str, Any]] = {}
    for r in runs:
        cpu.setdefault(r["tree"], []).append(float(r["cpu_s"]))
        last[r["tree"]] = r
    cut = "" if summary else "partial: the run ended before its summary line"
    if not cut and rounds and any(len(v) < rounds for v in cpu.values()):
        cut = f"partial: fewer than the {rounds} rounds asked for"
    where, at = f" ({repo})", load(head.get("load"))
    figs: list[Figure] = []
    for tree in [*asked, *(t for t in cpu if t not in asked)]:
        if tree not in cpu:
            figs.append(not_measured(f"full resolve CPU, {tree}{where}", "-", cut or "no run"))
            continue
        v, r = cpu[tree], last[tree]
        rss = f", peak RSS {r['peak_rss_mib']} MiB" if num(r, "peak_rss_mib") else ""
        figs.append(
            Figure(
                f"full resolve CPU, {tree}{where}",
                f"{f(min(v))} s best of {len(v)}, median {f(statistics.median(v))} s{rss}",
                f"{count(r.get('resolved'))} of {count(r.get('calls'))} call sites resolved",
                "-",
                "-",
                "",
                at,
            )
        )
    name = f"full resolve CPU, after / pre-typed, best of the rounds{where}"
    if "after" in cpu and "pre-typed" in cpu:
        a, p = min(cpu["after"]), min(cpu["pre-typed"])
        med = statistics.median(cpu["after"]) / statistics.median(cpu["pre-typed"])
        sympy = repo == "sympy"
        figs.append(
            Figure(
                name,
                f"{f(a)} s (medians: {med:.2f}x)" + (f"; {cut}" if cut else ""),
                f"pre-typed {f(p)} s",
                x(a, p, 3),
                f"<= {RESOLVE_TARGET}x" if sympy else "- (the target is sympy's)",
                _partial(ok(a / p <= RESOLVE_TARGET), cut) if sympy else "",
                at,
            )
        )
    elif "after" in asked and "pre-typed" in asked:
        figs.append(not_measured(name, f"<= {RESOLVE_TARGET}x", cut or "a tree did not run"))
    if "today" in cpu and "after" in cpu:
        t, a = min(cpu["today"]), min(cpu["after"])
        figs.append(
            Figure(
                f"full resolve CPU, today / after{where}",
                f"{f(t)} s",
                f"after {f(a)} s",
                x(t, a),
                "-",
                "",
                at,
            )
        )
    if checks:
        diffs = sum(int(c["differences"]) for c in checks)
        figs.append(
            Figure(
                f"--check: today's and this tree's resolutions, differences{where}",
                f"{diffs} in {len(checks)} round(s)" + (f"; {cut}" if cut else ""),
                "every table, count and bundle digest",
                "-",
                "0",
                _partial(ok(diffs == 0), cut),
                at,
            )
        )
    elif args is not None and "--check" in args:
        figs.append(not_measured(f"--check: differences{where}", "0", cut or "no check printed"))
    return figs


def figures_incremental(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rows = [r for r in json_lines(out) if isinstance(r.get("run"), str) or "summary" in r]
    full = next((r for r in rows if r.get("run") == "full" and num(r, "cpu_s")), None)
    done = [r for r in rows if r.get("run") not in (None, "full") and num(r, "cpu_s")]
    summary = next((r["summary"] for r in rows if isinstance(r.get("summary"), dict)), None)
    if args is None and full is None and not done:
        return []
    figs: list[Figure] = []
    if full is not None:
        figs.append(
            Figure(
                "full resolve CPU (the cache the increments start from)",
                f"{f(full['cpu_s'])} s",
                f"{full['code_files']:,} code files" if num(full, "code_files") else "-",
                "-",
                "-",
                "",
            )
        )
    for r in done:
        figs.append(_scenario(r, full))
    told: dict[str, Any] = summary or {}
    fit = told.get("fit")
    if isinstance(fit, dict) and num(fit, "fixed_cpu_s", "cpu_s_per_file"):
        figs.append(
            Figure(
                "fit: incremental CPU = fixed + per re-resolved file; break-even with full",
                f"{fit['fixed_cpu_s']} s + {fit['cpu_s_per_file']} s per file",
                f"full {told.get('full_cpu_s')} s, {told.get('code_files')} code files",
                f"break-even {told.get('break_even_files')} files "
                f"({told.get('break_even_fraction')})",
                "-",
                "",
            )
        )
    seen = {str(r["run"]) for r in done}
    only = [s for s in (arg(args, "--only") or "").split(",") if s]
    why = "no result in the output: the run ended before it"
    figs += [
        not_measured(f"{s}: incremental resolve", "equal to full", why)
        for s in only
        if s not in seen
    ]
    if summary is None and not only and (full is not None or args is not None):
        figs.append(
            not_measured(
                "scenarios after the last one printed",
                "equal to full",
                "the run ended before its summary line (stopped or cut short)",
            )
        )
    return figs


def _scenario(r: dict[str, Any], full: dict[str, Any] | None) -> Figure:
    """One scenario: incremental CPU against the full resolve of the same edit, and equal."""
    base = r.get("full_cpu_s") if num(r, "full_cpu_s") else (full or {}).get("cpu_s")
    how = str(r.get("mode", "?")) + (f": {r['reason']}" if r.get("reason") else "")
    value = f"{f(r['cpu_s'], 3)} s, {r.get('files_resolved', '?')} file(s) resolved again ({how})"
    diffs = r.get("differences")
    checked = isinstance(diffs, list)
    if checked and diffs:
        value += f"; **{len(diffs)} difference line(s)** from the full resolve"
    return Figure(
        f"{r['run']}: incremental resolve CPU, equal to a full resolve of the same edit",
        value,
        f"full resolve {f(base)} s" if isinstance(base, int | float) else "-",
        x(r["cpu_s"], base, 3) if isinstance(base, int | float) else "-",
        "differences == []" if checked else "- (run without --check)",
        ok(not diffs) if checked else "",
    )


def figures_push_resolve(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rows = json_lines(out)
    runs = {str(r["run"]): r for r in rows if isinstance(r.get("run"), str) and num(r, "wall_s")}
    if args is None and not runs:
        return []
    at = next((load(r["load"]) for r in rows if set(r) == {"load"}), "")
    first, push = runs.get("resolve-first"), runs.get("resolve-push")
    target = f"<= {PUSH_RESOLVE_TARGET_S:g} s CPU"
    name = "resolve phase of a one-function push (CPU)"
    figs: list[Figure] = []
    if push is not None and num(push, "cpu_s"):
        how = str(push.get("mode", "?")) + (f": {push['reason']}" if push.get("reason") else "")
        base = first.get("cpu_s") if first is not None and num(first, "cpu_s") else None
        figs.append(
            Figure(
                name,
                f"{f(push['cpu_s'])} s CPU ({f(push['wall_s'])} s wall; {how}, "
                f"{push.get('files_resolved', '?')} file(s) resolved again)",
                f"the first, full resolve {f(base)} s CPU" if base is not None else "-",
                x(push["cpu_s"], base, 3) if base is not None else "-",
                target,
                ok(push["cpu_s"] <= PUSH_RESOLVE_TARGET_S),
                at,
            )
        )
    else:
        figs.append(not_measured(name, target, "no resolve-push line in the output"))
    parse, parse_first = runs.get("parse-push"), runs.get("parse-first")
    name = "parse phase of a one-function push (wall, through the parse cache)"
    if parse is not None:
        figs.append(
            Figure(
                name,
                f"{f(parse['wall_s'])} s",
                f"the first parse {f(parse_first['wall_s'])} s" if parse_first else "-",
                x(parse["wall_s"], parse_first["wall_s"], 3) if parse_first else "-",
                "-",
                "",
                at,
            )
        )
    else:
        figs.append(not_measured(name, "-", "no parse-push line in the output"))
    return figs
