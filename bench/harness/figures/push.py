"""Rows of the report for what a push costs besides resolution: ``bench_pushphases`` (the
job's phases of a one-file push, slow paths against shortcuts), ``bench_sharedelta`` (a delta
published from a host that never published the repository, issue 26) and ``bench_cli``
(command-line start-up, issue 27), read from their ``bench.harness.records`` lines."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from bench.harness import records
from bench.harness.figures import Figure, arg, count, f, load, not_measured, num, ok, x

PUSH_P95_TARGET_S_20K = 10.0  # issue 25 item 4: one-file push p95 at 20,000 files
SHAREDELTA_TARGET_S = 2.0  # issue 26: the graph phase of a one-file delta from a fresh host
CLI_ARGV = {
    "help": "semgraph --help",
    "group_help": "semgraph graph --help",
    "jobs_help": "semgraph jobs --help",
    "callers": "semgraph graph callers parse_repository",
    "jobs_list": "semgraph jobs list",
    "index_noop": "semgraph index REPO (unchanged commit)",
}


def _medians(rows: list[dict[str, Any]], get: str) -> dict[str, float]:
    """The median of ``get`` per variant."""
    by: dict[str, list[float]] = {}
    for r in rows:
        if num(r, get):
            by.setdefault(str(r.get("variant")), []).append(float(r[get]))
    return {v: statistics.median(vals) for v, vals in by.items()}


def _after_before(name: str, med: dict[str, float], at: str = "", nd: int = 2) -> Figure:
    """``after`` against ``before`` of the same run (either alone where only one ran)."""
    a, b = med.get("after"), med.get("before")
    return Figure(
        name,
        f"{f(a, nd)} s" if a is not None else "-",
        f"before {f(b, nd)} s" if b is not None else "-",
        x(a, b) if a is not None and b is not None else "-",
        "-",
        "",
        at,
    )


def _steps(rows: list[dict[str, Any]]) -> list[Figure]:
    """The parse phase alone and its steps, and the staging read, after against before."""
    figs: list[Figure] = []
    parses = [r for r in rows if r.get("record") == "pushphases.parse"]
    if parses:
        n, k = parses[0].get("reused"), max(r.get("repeat", 0) for r in parses) + 1
        at = str(parses[0].get("load", "")).split(" ")[0]
        figs.append(
            _after_before(
                f"parse phase alone, every file unchanged ({count(n)} files, median of {k})",
                _medians(parses, "seconds"),
                at,
            )
        )
        names = [s for r in parses for s in (r.get("steps") or {})]
        for step in dict.fromkeys(names):
            vals = [{**r, "step_s": (r.get("steps") or {}).get(step)} for r in parses]
            figs.append(_after_before(f"  parse step: {step}", _medians(vals, "step_s"), nd=3))
    reads = [r for r in rows if r.get("record") == "pushphases.staging_read"]
    if reads:
        figs.append(
            _after_before(
                "staging index's read of the changed file", _medians(reads, "seconds"), nd=3
            )
        )
    return figs


def figures_pushphases(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    kinds = ("parse", "staging_read", "first", "round", "summary")
    rows = [r for k in kinds for r in records.read(out, f"pushphases.{k}")]
    if args is None and not rows:
        return []
    figs = _steps(rows)
    for r in (r for r in rows if r["record"] == "pushphases.first" and num(r, "seconds")):
        phases = ", ".join(f"{p} {v:.1f}" for p, v in (r.get("phases_s") or {}).items())
        figs.append(
            Figure(
                f"first index (stand-in vectors), {count(r.get('files'))} files",
                f"{f(r['seconds'], 1)} s",
                phases or "-",
                "-",
                "-",
                "",
                str(r.get("load", "")).split(" ")[0],
            )
        )
    pushes = [
        r for r in rows if r["record"] == "pushphases.round" and r.get("status") == "succeeded"
    ]
    job_kinds = ("pushphases.first", "pushphases.round", "pushphases.summary")
    files = next((r["files"] for r in rows if r["record"] in job_kinds and num(r, "files")), None)
    if files is None:  # --rounds 0: the steps' repository
        files = next((r["reused"] for r in rows if num(r, "reused")), None)
    if pushes:
        k = len({r.get("round") for r in pushes})
        names = [p for r in pushes for p in (r.get("rows") or {}) if not p.startswith(" ")]
        for phase in dict.fromkeys(names):
            vals = [{**r, "phase_s": (r.get("rows") or {}).get(phase)} for r in pushes]
            figs.append(
                _after_before(
                    f"one-file push at {files or 0:,} files: {phase} (median of {k} rounds)",
                    _medians(vals, "phase_s"),
                )
            )
    figs += _push_summary(rows, args, files)
    return figs


def _push_summary(
    rows: list[dict[str, Any]], args: Sequence[str] | None, files: int | None
) -> list[Figure]:
    """The job's p50 / p95 per variant, judged at 20,000 files."""
    sums = {str(r.get("variant")): r for r in rows if r["record"] == "pushphases.summary"}
    big = files is not None and files >= 20_000
    target = f"p95 <= {PUSH_P95_TARGET_S_20K:g} s" + ("" if big else " (at 20,000 files)")
    name = f"one-file push, whole job p50 / p95 ({files or 0:,} files)"
    rounds = int(arg(args, "--rounds") or 3) if args is not None else 0
    if "after" not in sums:
        if sums or rounds:
            return [not_measured(name, target, "no summary of the `after` rounds in the output")]
        if big:
            why = "not run: --rounds 0 (the parse and staging steps only)"
            return [not_measured(f"one-file push at {files:,} files", target, why)]
        return []
    a, b = sums["after"], sums.get("before")
    p95 = a.get("p95_s")
    return [
        Figure(
            name + f", {a.get('rounds')} rounds",
            f"{f(a.get('p50_s', 0))} / {f(p95 or 0)} s",
            f"before {f(b.get('p50_s', 0))} / {f(b.get('p95_s', 0))} s" if b else "-",
            x(p95 or 0, b.get("p95_s", 0)) if b else "-",
            target if big else f"- ({target})",
            ok(isinstance(p95, int | float) and p95 <= PUSH_P95_TARGET_S_20K) if big else "",
        )
    ]


def figures_sharedelta(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    grow = [r for r in records.read(out, "sharedelta.grow") if num(r, "tx_s")]
    ones = [r for r in records.read(out, "sharedelta.one_file") if num(r, "tx_s")]
    if args is None and not grow and not ones:
        return []
    first = next((r for r in grow if r.get("mode") == "first"), None)
    figs = [
        Figure(
            f"publish at {count(r.get('files'))} files ({r.get('mode')}, one transaction)",
            f"{f(r['tx_s'])} s",
            f"{count(r.get('rows_written'))} rows written",
            "-",
            "-",
            "",
            load(r.get("load")),
        )
        for r in grow
    ]
    for r in records.read(out, "sharedelta.bytes")[-1:]:
        figs.append(
            Figure(
                f"published state in the graph at {count(r.get('files'))} files",
                f"{r.get('bytes_per_file')} bytes per file",
                f"{count(r.get('state_bytes'))} bytes for {count(r.get('graph_rows'))} graph rows",
                f"{r.get('bytes_per_graph_row')} bytes per graph row",
                "-",
                "",
            )
        )
    for r in records.read(out, "sharedelta.read")[-1:]:
        figs.append(
            Figure(
                "reading every file's bundle digest",
                f"median {r.get('median_s')} s",
                f"max {r.get('max_s')} s of {r.get('repeats')}",
                "-",
                "-",
                "",
            )
        )
    target = f"<= {SHAREDELTA_TARGET_S:g} s, a delta"
    for r in ones:
        who = "empty state dir, never published it" if r.get("empty_state_dir") else "publisher"
        fell = f", fell back: {r['delta_fallback']}" if r.get("delta_fallback") else ""
        figs.append(
            Figure(
                f"one-file change by host {r.get('host')} ({who}): graph phase",
                f"{f(r['tx_s'], 3)} s ({r.get('mode')}{fell}; reading the state "
                f"{r.get('state_read_s')} s; {r.get('rows_written')} rows written)",
                f"the first publish {f(first['tx_s'])} s" if first else "-",
                x(r["tx_s"], first["tx_s"], 4) if first else "-",
                target,
                ok(r["tx_s"] <= SHAREDELTA_TARGET_S and r.get("mode") == "delta"),
                load(r.get("load")),
            )
        )
    fresh = [r["tx_s"] for r in ones if r.get("empty_state_dir")]
    own = [r["tx_s"] for r in ones if not r.get("empty_state_dir")]
    if fresh and own:
        b, a = statistics.median(fresh), statistics.median(own)
        figs.append(
            Figure(
                "graph phase, fresh host / publishing host (medians)",
                f"{f(b, 3)} s",
                f"{f(a, 3)} s",
                x(b, a),
                "-",
                "",
            )
        )
    if not fresh:
        why = "no one-file change by a host with an empty state dir in the output"
        figs.append(not_measured("one-file change from a fresh host: graph phase", target, why))
    return figs


def figures_cli(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    cmds = [r for r in records.read(out, "cli.command") if num(r, "median_s")]
    if args is None and not cmds:
        return []
    summary = next(iter(records.read(out, "cli.summary")[-1:]), {})
    base, at = summary.get("python_pass_median_s"), load(summary.get("load"))
    before = {str(r.get("command")): r for r in cmds if r.get("variant") == "before"}
    now = [r for r in cmds if r.get("variant") != "before"]
    figs: list[Figure] = []
    for r in now:
        cmd = str(r.get("command"))
        name = f"`{CLI_ARGV.get(cmd, cmd)}` wall time, median of {summary.get('repeats', '?')}"
        tgt = r.get("target_s")
        target = f"<= {tgt:g} s" if isinstance(tgt, int | float) else "-"
        if r.get("exit_codes") not in ([0], None):
            figs.append(not_measured(name, target, f"exit codes {r.get('exit_codes')}"))
            continue
        old = before.get(cmd)
        figs.append(
            Figure(
                name,
                f"{f(r['median_s'], 3)} s (CPU {r.get('cpu_median_s')} s; "
                f"min {r.get('min_s')}, max {r.get('max_s')})",
                f"before {f(old['median_s'], 3)} s" if old else f"python -c pass {base} s",
                x(r["median_s"], old["median_s"] if old else base or 0, 3),
                target,
                ok(r["median_s"] <= tgt) if isinstance(tgt, int | float) else "",
                at,
            )
        )
    if base is not None:
        figs.append(Figure("`python -c pass` (the floor)", f"{base} s", "-", "-", "-", "", at))
    if not now:
        why = "no cli.command record in the output"
        figs.append(not_measured("`semgraph --help` wall time", "<= 0.3 s", why))
    return figs
