"""Rows of the report for ``bench_replay`` (issue 25, "Real history"): the last N first-parent
commits of a real repository pushed one at a time through the job, every step's resolution
checked against a full resolve of the same tree, and ``semgraph check --graph-parity`` after
the last push.

A replay stopped before its summary is summarised here from its steps
(``bench.push.replay_stats.summarize``) and marked partial: its parity target is then missed (a
failure is a failure) or not measured, never met.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from bench.harness import records
from bench.harness.figures import (
    MET,
    MISSED,
    NOT_MEASURED,
    Figure,
    arg,
    f,
    load,
    not_measured,
    num,
    x,
)
from bench.push.replay_stats import summarize

PARITY_TARGET = "0 failures, every push"
TIMES = (
    ("job_s", "whole job, wall"),
    ("job_cpu_s", "whole job, CPU"),
    ("resolve_s", "resolve phase, wall"),
    ("resolve_cpu_s", "resolve phase, CPU"),
)


def _partial(
    summary: dict[str, Any], steps: list[dict[str, Any]], printed: bool, asked: int | None
) -> str:
    """Why the figures cover less than the replay asked for ("" when they cover it all)."""
    if summary.get("partial_log"):
        return f"summary of a partial log ({summary['partial_log']})"
    if not printed:
        of = f" of {asked}" if asked else ""
        return f"partial: {summary.get('pushes', 0)}{of} pushes, the run stopped before its summary"
    if asked and summary.get("pushes", 0) < asked:
        return f"partial: {summary.get('pushes')} of {asked} pushes"
    return ""


def _baseline(key: str, steps: list[dict[str, Any]]) -> float | None:
    """What the same run measured to compare a push with: the first index for the job, the
    step's own check (a full resolve of the same tree) for the resolve phase."""
    pushes = [s for s in steps if s.get("step", 0) > 0 and s.get("outcome") == "succeeded"]
    if key.startswith("job"):
        first = next((s for s in steps if s.get("step") == 0), None)
        if first is not None and first.get("outcome") == "succeeded" and num(first, key):
            return float(first[key])
        return None
    get = "full_resolve_s" if key == "resolve_s" else "check_cpu_s"
    vals = [float(s[get]) for s in pushes if num(s, get)]
    return statistics.median(vals) if vals else None


def _times(summary: dict[str, Any], steps: list[dict[str, Any]], at: str) -> list[Figure]:
    base_name = {
        "job_s": "the first index (step 0)",
        "job_cpu_s": "the first index (step 0)",
        "resolve_s": "the step's full resolve (p50)",
        "resolve_cpu_s": "the step's check, CPU (p50)",
    }
    figs = []
    for key, label in TIMES:
        if not num(summary, f"{key}_p50", f"{key}_p95"):
            continue
        p50, base = summary[f"{key}_p50"], _baseline(key, steps)
        figs.append(
            Figure(
                f"per push, {label}: p50 / p95 over {summary.get('pushes')} pushes",
                f"{f(p50)} / {f(summary[f'{key}_p95'])} s",
                f"{base_name[key]} {f(base)} s" if base is not None else "-",
                f"p50 {x(p50, base)}" if base is not None else "-",
                "-",
                "",
                at,
            )
        )
    for mode, d in (summary.get("by_mode") or {}).items():
        if num(d, "resolve_cpu_s_p50", "resolve_cpu_s_p95", "job_s_p50"):
            figs.append(
                Figure(
                    f"per push, resolve phase CPU p50 / p95, {mode} resolves ({d.get('pushes')})",
                    f"{f(d['resolve_cpu_s_p50'])} / {f(d['resolve_cpu_s_p95'])} s",
                    f"whole job wall p50 {f(d['job_s_p50'])} s",
                    "-",
                    "-",
                    "",
                    at,
                )
            )
    return figs


def _parity_rows(summary: dict[str, Any] | None, why: str, at: str) -> list[Figure]:
    name = "every push's resolution equal to a full resolve of the same tree"
    if summary is None:
        return [not_measured(name, PARITY_TARGET, why or "no replay.step in the output")]
    fails = int(summary.get("parity_failures") or 0)
    steps = summary.get("parity_failed_steps") or []
    modes = ", ".join(f"{m} {n}" for m, n in (summary.get("modes") or {}).items())
    value = f"{fails} failure(s) in {summary.get('pushes', 0)} pushes" + (
        f" (steps {', '.join(map(str, steps))})" if steps else ""
    )
    verdict = MISSED if fails else (NOT_MEASURED if why else MET)
    falls = summary.get("not_incremental") or {}
    return [
        Figure(name, value + (f"; {why}" if why else ""), "-", "-", PARITY_TARGET, verdict, at),
        Figure(
            "resolve modes over the pushes",
            modes or "-",
            "; ".join(f"{k} ({n})" for k, n in falls.items()) or "-",
            "-",
            "-",
            "",
            at,
        ),
    ]


def _graph_parity(parity: list[dict[str, Any]], why: str, wanted: bool) -> list[Figure]:
    name = "`semgraph check --graph-parity` after the last push"
    if not parity:
        return (
            [not_measured(name, "equal", why or "no replay.parity in the output")] if wanted else []
        )
    p = parity[-1]
    report: dict[str, Any] = p["report"] if isinstance(p.get("report"), dict) else {}
    live, model = report.get("live_rows"), report.get("model_rows")
    good = p.get("rc") == 0 and report.get("ok") is True
    value = (
        f"{live:,} live rows, {model:,} in the model"
        if num(report, "live_rows", "model_rows")
        else f"rc {p.get('rc')}, no report"
    )
    extra = f"; only live {report.get('only_live')}, only model {report.get('only_model')}"
    return [Figure(name, value + extra, "-", "-", "equal", MET if good else MISSED)]


def figures_replay(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    repo = next(iter(records.read(out, "replay.repo")[-1:]), {})
    steps = records.read(out, "replay.step")
    parity = records.read(out, "replay.parity")
    sums = records.read(out, "replay.summary")
    if args is None and not (steps or parity or sums):
        return []
    summarizing = args is not None and arg(args, "--summarize") is not None
    asked = repo.get("pushes") if num(repo, "pushes") else None
    if asked is None and args is not None and not summarizing:
        asked = int(arg(args, "--commits") or 200)
    summary = sums[-1] if sums else (summarize(steps) if steps else None)
    why = _partial(summary, steps, bool(sums), asked) if summary is not None else ""
    if summary is None and args is not None and not parity:
        why = "no replay.step in the output"
    at = load(repo.get("load_1m"))
    figs: list[Figure] = []
    if summary is not None or (args is not None and not parity):
        figs += _parity_rows(summary, why, at)
    if summary is not None:
        figs += _times(summary, steps, at)
    figs += _graph_parity(parity, why, wanted=args is not None and not summarizing)
    return figs
