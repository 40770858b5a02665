"""Run every benchmark and write ``bench/RESULTS.md``.

    python -m bench.run_all [--quick] [--only NAME,...] [--out bench/RESULTS.md] [--from-logs]

Each benchmark runs in its own subprocess against the stack named by ``SEMGRAPH_*`` (start a
private one: ``SEMGRAPH_STATE_DIR=... SEMGRAPH_BOLT_URI=... SEMGRAPH_ES_URL=...
semgraph services up``); its full output is kept in ``bench/results/NAME.log`` and its figures
are parsed into one table: value, the baseline measured in the same run, the ratio, the
target (met, **missed**, or **not measured** with the reason) and the command that reproduces
it, with the 1-minute load average when it started. The report starts with the machine
(cores, RAM, CPU model, load, Neo4j/Elasticsearch/Python versions). The side-by-side peers
section is read from ``bench/peers.json``, written by ``python -m bench.peers`` (not run here:
it installs the peers from PyPI).

``--from-logs`` re-renders the report from ``bench/results/NAME.log`` (NAME as in ``BENCHES``)
without running anything. A log may be the one this script writes, or one kept by hand: one or
more ``$ python -m bench.bench_NAME ARGS`` lines, each followed by that run's output, with
``#`` comment lines (``# rc N``, an ``uptime`` line for the load) and ``##``/``###`` headings
that name the runs; every run in the file becomes its own section of the report.

The default run uses the sizes the issue asks for (whole job at 1k/5k/20k files, graph at
1k/10k/20k files, a 5,000-file repository behind the webhook); on a loaded 2-core machine it
takes hours, almost all of it CPU embedding. ``--quick`` takes minutes (small repositories;
figures marked as quick).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
MIB = 2**20
MET = "met"
MISSED = "**missed**"
NOT_MEASURED = "**not measured**"
RSS_TARGET = 1.3
PUBLISH_TARGET = 20_000
PUBLISH_TARGET_FILES = 20_000  # the issue sets the throughput target for this size only
ACK_P99_TARGET_MS = 200.0
PUSH_P95_TARGET_S = 30.0  # the 5,000-file repository
PUSH_P95_TARGET_S_20K = 15.0  # a one-file change in 20,000 files (the graph-store issue)


@dataclass
class Figure:
    name: str
    value: str
    baseline: str
    ratio: str
    target: str
    verdict: str = ""
    load: str = ""  # 1-minute load average when this figure's measurement started, if printed


Parser = Callable[[str, Sequence[str] | None], list[Figure]]


@dataclass
class Bench:
    name: str
    module: str
    default: list[str]
    quick: list[str]
    parse: Parser
    timeout_s: int = 1800
    note: str = ""


@dataclass
class Outcome:
    bench: Bench
    args: list[str]
    rc: int | None  # None: a kept log that does not record the exit status
    seconds: float | None
    load_1m: float | None
    figures: list[Figure] = field(default_factory=list)
    error: str = ""
    command: str = ""
    label: str = ""  # the run's heading in a log that holds several runs
    notes: list[str] = field(default_factory=list)  # comment lines kept in the log

    def __post_init__(self) -> None:
        if not self.command:
            self.command = " ".join(["python -m", self.bench.module, *self.args])

    @property
    def measured(self) -> list[Figure]:
        return [f for f in self.figures if f.verdict != NOT_MEASURED]


def _ok(good: bool) -> str:
    return MET if good else MISSED


def _f(x: float, nd: int = 2) -> str:
    return f"{x:,.{nd}f}"


def _x(a: float, b: float, nd: int = 2) -> str:
    """``a / b`` as ``1.23x``; ``-`` when the baseline is zero."""
    return f"{a / b:.{nd}f}x" if b else "-"


def _load(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else ""


def _not_measured(name: str, target: str, why: str) -> Figure:
    return Figure(name, f"not measured: {why}", "-", "-", target, NOT_MEASURED)


def _arg(args: Sequence[str] | None, flag: str) -> str | None:
    """The value of ``--flag VALUE`` or ``--flag=VALUE`` in a command line."""
    items = list(args or [])
    for i, item in enumerate(items):
        if item == flag and i + 1 < len(items):
            return items[i + 1]
        if item.startswith(flag + "="):
            return item.split("=", 1)[1]
    return None


def _ints(text: str | None) -> list[int]:
    """``"1000,5000"`` -> ``[1000, 5000]``; an unreadable list -> ``[]``."""
    try:
        return [int(s) for s in (text or "").split(",") if s.strip()]
    except ValueError:
        return []


def _num(row: dict[str, Any], *keys: str) -> bool:
    return all(isinstance(row.get(k), int | float) and not isinstance(row[k], bool) for k in keys)


def _json_lines(out: str, *required: str) -> list[dict[str, Any]]:
    """The JSON objects printed one per line that carry every ``required`` number."""
    rows = []
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and _num(row, *required):
                rows.append(row)
    return rows


def _missing_sizes(
    measured: Sequence[int], args: Sequence[str] | None, started: Sequence[int] = ()
) -> list[int]:
    """Sizes the command asked for (``--sizes``) or the output started, with no result."""
    wanted = set(_ints(_arg(args, "--sizes"))) | set(started)
    return sorted(wanted - set(measured))


# -- parsers: one per benchmark, reading the lines the benchmark prints ----------------------
#
# Each takes the benchmark's stdout and its command-line arguments (None when unknown). Sizes
# asked for on the command line but absent from the output become "not measured" rows, so a
# run cut short shows what it did not measure.


_PARSE_RX = re.compile(
    r"^\s*(\d+) files:\s+([\d.]+) files/s \(\s*([\d.]+)/core over (\d+) cores\),\s+([\d.]+) "
    r"MB/s, parent peak RSS\s+([\d.]+) MiB, child peak RSS\s+([\d.]+) MiB, ([\d.]+)s, "
    r"failed (\d+)",
    re.M,
)


class _ParseRow(NamedTuple):
    n: int
    fps: float
    core: float
    cores: int
    mbs: float
    parent: float
    child: float
    s: float
    failed: int


def _parse_rss(rows: list[_ParseRow]) -> list[Figure]:
    base = rows[0]
    figs = []
    for key, who in (("parent", "worker (parent)"), ("child", "pool child")):
        for r in rows:
            value, first = getattr(r, key), getattr(base, key)
            ratio = value / first if first else float("inf")
            figs.append(
                Figure(
                    f"parse phase peak RSS, {who}, {r.n:,} files",
                    f"{_f(value, 1)} MiB",
                    f"{_f(first, 1)} MiB at {base.n:,} files",
                    f"{ratio:.3f}",
                    f"ratio <= {RSS_TARGET}",
                    _ok(ratio <= RSS_TARGET),
                )
            )
    return figs


def parse_parse(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rows = sorted(
        _ParseRow(
            int(m[1]),
            float(m[2]),
            float(m[3]),
            int(m[4]),
            float(m[5]),
            float(m[6]),
            float(m[7]),
            float(m[8]),
            int(m[9]),
        )
        for m in _PARSE_RX.finditer(out)
    )
    figs = [
        Figure(
            f"parse throughput, {r.n:,} files ({r.failed} failed, {r.s} s)",
            f"{_f(r.core, 1)} files/s/core ({_f(r.fps, 1)} files/s over {r.cores} cores, "
            f"{r.mbs} MB/s)",
            f"{_f(rows[0].core, 1)} files/s/core at {rows[0].n:,} files",
            _x(r.core, rows[0].core),
            ">= 100 files/s/core",
            _ok(r.core >= 100),
        )
        for r in rows
    ]
    figs += _parse_rss(rows) if rows else []
    for n in _missing_sizes([r.n for r in rows], args):
        figs.append(
            _not_measured(
                f"parse phase, {n:,} files",
                f">= 100 files/s/core; peak RSS ratio <= {RSS_TARGET}",
                "asked for on the command line, no result in the output",
            )
        )
    return figs


# memory ------------------------------------------------------------------------------------

# the job's phases, and the checkpoints bench_memory's RSS sampler marks, in the job's order
PHASE_ORDER = [
    "setup",
    "checkout",
    "parse",
    "resolve",
    "embed_index",
    "before_publish",
    "graph_publish",
    "alias_flip",
    "after_job",
]


def _ordered(phases: dict[str, Any]) -> list[tuple[str, float]]:
    known = [(k, float(phases[k])) for k in PHASE_ORDER if _num(phases, k)]
    rest = [(k, float(v)) for k, v in phases.items() if k not in PHASE_ORDER and _num(phases, k)]
    return known + rest


def _phase_split(phases: dict[str, Any], total: float) -> str:
    total = total or sum(v for _, v in _ordered(phases)) or 1.0
    return ", ".join(f"{k} {v:.1f}s ({v / total:.0%})" for k, v in _ordered(phases) if v >= 0.05)


def _memory_what(r: dict[str, Any]) -> str:
    chunks, embedded = r.get("chunks"), r.get("embedded")
    what = (
        f"{r['files']:,} files, {chunks:,} chunks" if _num(r, "chunks") else f"{r['files']:,} files"
    )
    if _num(r, "embedded"):
        what += f", {embedded:,} embedded"
    if r.get("small_files"):
        what += ", small files"
    if r.get("status", "succeeded") != "succeeded":
        what += f", job {r.get('status')}"
    return what


def _memory_rss(rows: list[dict[str, Any]]) -> list[Figure]:
    base = rows[0]
    figs = []
    for key, who in (("worker_peak_rss_bytes", "worker"), ("pool_peak_rss_bytes", "pool child")):
        for r in rows:
            if not _num(r, key) or not _num(base, key):
                continue
            ratio = r[key] / base[key] if base[key] else float("inf")
            figs.append(
                Figure(
                    f"whole job peak RSS, {who}, {_memory_what(r)}",
                    f"{_f(r[key] / MIB, 1)} MiB",
                    f"{_f(base[key] / MIB, 1)} MiB at {base['files']:,} files",
                    f"{ratio:.3f}",
                    f"ratio <= {RSS_TARGET}",
                    _ok(ratio <= RSS_TARGET),
                    _load(r.get("load_1m")),
                )
            )
    return figs


def _memory_phase_rss(r: dict[str, Any], base: dict[str, Any]) -> Figure | None:
    peaks, base_peaks = r.get("phase_peak_rss_bytes"), base.get("phase_peak_rss_bytes")
    if not isinstance(peaks, dict) or not peaks:
        return None
    base_peaks = dict(_ordered(base_peaks)) if isinstance(base_peaks, dict) else {}
    ordered = _ordered(peaks)
    ratios = [f"{k} {v / base_peaks[k]:.2f}x" for k, v in ordered if base_peaks.get(k)]
    return Figure(
        f"peak RSS by phase, worker, {r['files']:,} files",
        ", ".join(f"{k} {v / MIB:,.0f} MiB" for k, v in ordered),
        ", ".join(f"{k} {v / MIB:,.0f} MiB" for k, v in base_peaks.items())
        + f" at {base['files']:,} files",
        ", ".join(ratios) or "-",
        "-",
        "",
        _load(r.get("load_1m")),
    )


def _memory_time(r: dict[str, Any], base: dict[str, Any]) -> Figure:
    phases = r.get("phases_s") if isinstance(r.get("phases_s"), dict) else {}
    wall = float(r.get("wall_s") or 0.0)
    return Figure(
        f"end-to-end job by phase, {_memory_what(r)}",
        f"{_f(wall, 1)} s: {_phase_split(phases or {}, wall)}",
        f"{_f(float(base.get('wall_s') or 0.0), 1)} s at {base['files']:,} files",
        f"{_x(wall, float(base.get('wall_s') or 0.0))} for {r['files'] / base['files']:.1f}x files",
        "-",
        "",
        _load(r.get("load_1m")),
    )


_MEMORY_START = re.compile(r"^# (\d+) files: start (\S+) UTC, load ([\d.]+)", re.M)


def parse_memory(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rows = sorted(
        (r for r in _json_lines(out, "files", "worker_peak_rss_bytes") if r["files"] > 0),
        key=lambda r: r["files"],
    )
    started = {int(m[1]): (m[2], m[3]) for m in _MEMORY_START.finditer(out)}
    figs = _memory_rss(rows) if rows else []
    for r in rows:
        phase = _memory_phase_rss(r, rows[0])
        figs += [phase] if phase else []
        figs.append(_memory_time(r, rows[0]))
    for n in _missing_sizes([int(r["files"]) for r in rows], args, list(started)):
        why = "asked for on the command line, never started"
        if n in started:
            when, load = started[n]
            why = (
                f"the job started at {when} UTC (load {load}) but the output has no result "
                "for it (failed, stopped, or still running)"
            )
        figs.append(
            _not_measured(
                f"whole job peak RSS, worker and pool child, {n:,} files",
                f"ratio <= {RSS_TARGET}",
                why,
            )
        )
    return figs


# embed, reindex ----------------------------------------------------------------------------

_EMBED_RX = re.compile(
    r"raw encode ([\d.]+)s, embedding phase ([\d.]+)s .*?unchanged re-run embedding phase "
    r"([\d.]+)s(?: \(lookup [\d.]+s, hit rate (\d+)%\))?"
)


def parse_embed(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    reps = [(float(m[1]), float(m[2]), float(m[3]), m[4]) for m in _EMBED_RX.finditer(out)]
    if not reps:
        return []
    head = re.search(r"(\d+) files, (\d+) chunks, model (\S+) on (\S+)", out)
    rate = re.search(r"texts/s raw encode: ([\d.]+)", out)
    raw = min(r[0] for r in reps)
    phase = min(r[1] for r in reps)
    reuse = min(r[2] for r in reps)
    hits = sorted({r[3] for r in reps if r[3] is not None})
    what = f"{head[2]} chunks of {head[1]} files, {head[4]}" if head else "same texts"
    best = f"best of {len(reps)} repeats"
    # the bench's own ratios are computed before rounding: prefer them to the rounded seconds
    printed = re.search(r"ratio embedding phase / raw model.encode: ([\d.]+)", out)
    ratio = float(printed[1]) if printed else (phase / raw if raw else float("inf"))
    again = re.search(r"ratio unchanged re-run embedding phase / first: ([\d.]+)", out)
    speed = re.search(r"speedup of the embedding phase by reuse: ([\d.]+)x", out)
    reuse_ratio = float(again[1]) if again else (reuse / phase if phase else float("inf"))
    faster = float(speed[1]) if speed else (phase / reuse if reuse else float("inf"))
    return [
        Figure(
            f"embedding phase vs raw model.encode ({what}; {best})",
            f"{_f(phase)} s (all: {', '.join(_f(r[1]) for r in reps)})",
            f"{_f(raw)} s raw model.encode"
            + (f" ({rate[1]} texts/s)" if rate else "")
            + f" (all: {', '.join(_f(r[0]) for r in reps)})",
            f"{ratio:.3f}",
            "ratio <= 1.15",
            _ok(ratio <= 1.15),
        ),
        Figure(
            "embedding phase of unchanged content (every vector reused"
            + (f", hit rate {'/'.join(hits)}%" if hits else "")
            + f"; {best})",
            f"{_f(reuse)} s",
            f"{_f(phase)} s first embedding phase",
            f"{reuse_ratio:.4f} ({faster:.1f}x faster)",
            "-",
        ),
    ]


def _phases_after(out: str, header: str) -> str:
    """The indented ``    phase   1.23 s`` lines right after the line starting with header."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(header):
            found = []
            for nxt in lines[i + 1 :]:
                m = re.match(r"^\s{4}(\w+)\s+([\d.]+) s$", nxt)
                if not m:
                    break
                found.append((m[1], float(m[2])))
            total = sum(v for _, v in found) or 1.0
            return ", ".join(f"{k} {v:.1f}s ({v / total:.0%})" for k, v in found)
    return ""


def parse_reindex(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    first = re.search(r"^first index\s+([\d.]+) s\s+status=(\w+)", out, re.M)
    noop = re.search(r"^unchanged\s+([\d.]+) s\s+status=(\w+)", out, re.M)
    forced = re.search(
        r"^forced\s+([\d.]+) s\s+status=(\w+) embedded=(\d+) reused=(\d+)", out, re.M
    )
    repo = re.search(r"^repository: (\d+) files, (\w+) chunks, (\d+) nodes", out, re.M)
    if not first:
        return []
    t1 = float(first[1])
    what = f"{repo[1]} files, {repo[2]} chunks, {repo[3]} nodes" if repo else ""
    figs = [
        Figure(
            f"first index, end to end by phase ({what}; status {first[2]})",
            f"{_f(t1)} s: {_phases_after(out, 'first index')}",
            "-",
            "-",
            "-",
        )
    ]
    if noop:
        t0 = float(noop[1])
        printed = re.search(r"ratio first/unchanged = ([\d.]+)x", out)  # before rounding
        speedup = float(printed[1]) if printed else (t1 / t0 if t0 else float("inf"))
        figs.append(
            Figure(
                f"reindex of unchanged content (same commit, status {noop[2]})",
                f"{_f(t0)} s",
                f"{_f(t1)} s first index",
                f"first/unchanged {speedup:.1f}x",
                ">= 10x faster",
                _ok(speedup >= 10),
            )
        )
    else:
        figs.append(_not_measured("reindex of unchanged content", ">= 10x faster", "no line"))
    if forced:
        tf = float(forced[1])
        fp = re.search(r"ratio first/forced\s+= ([\d.]+)x", out)
        figs.append(
            Figure(
                f"forced reindex of unchanged content (status {forced[2]}, reused {forced[4]}, "
                f"embedded {forced[3]})",
                f"{_f(tf)} s: {_phases_after(out, 'forced')}",
                f"{_f(t1)} s first index",
                f"first/forced {float(fp[1]) if fp else t1 / tf if tf else 0:.1f}x",
                "-",
            )
        )
    return figs


# graph -------------------------------------------------------------------------------------

QUERY_KINDS = ("def", "callers", "callees")


def _graph_publish(r: dict[str, Any], base: dict[str, Any]) -> list[Figure]:
    rate, base_rate = r["rows_per_s"], base["rows_per_s"]
    judged = r["files"] == PUBLISH_TARGET_FILES  # other sizes are context, not the target

    def throughput(name: str, value: int, baseline: str, ratio_to: int, load: Any) -> Figure:
        share = f"{value / PUBLISH_TARGET:.2f}x" + (" target" if judged else "")
        return Figure(
            name,
            f"{value:,} rows/s",
            baseline,
            f"{_x(value, ratio_to)}; {share}",
            f">= {PUBLISH_TARGET:,} rows/s" if judged else "- (set for 20,000 files)",
            _ok(value >= PUBLISH_TARGET) if judged else "",
            _load(load),
        )

    figs = [
        throughput(
            f"graph publish throughput, {r['files']:,} files ({r['nodes'] + r['edges']:,} "
            f"nodes+edges, one transaction of {r['tx_s']} s)",
            rate,
            f"{base_rate:,} rows/s at {base['files']:,} files",
            base_rate,
            r.get("publish_load"),
        )
    ]
    if _num(r, "republish_rows_per_s"):
        figs.append(
            throughput(
                f"graph re-publish over itself (re-index), {r['files']:,} files "
                f"(one transaction of {r.get('republish_tx_s')} s)",
                r["republish_rows_per_s"],
                f"{rate:,} rows/s first publish of the same size",
                rate,
                r.get("republish_load"),
            )
        )
    if _num(r, "resolution_rate"):
        figs.append(
            Figure(
                f"call resolution, {r['files']:,} files ({r.get('call_sites', '?'):,} call sites; "
                f"parse {r.get('parse_s')} s, resolve {r.get('resolve_s')} s)",
                f"{r['resolution_rate']:.1%} resolved",
                f"{base.get('resolution_rate', 0):.1%} at {base['files']:,} files",
                _x(r["resolution_rate"], base.get("resolution_rate", 0)),
                "-",
            )
        )
    return figs


def _graph_queries(r: dict[str, Any], base: dict[str, Any]) -> list[Figure]:
    figs = []
    per_kind = f"{r['queries']} random names" if _num(r, "queries") else "random names"
    for kind in QUERY_KINDS:
        p50, p99 = f"{kind}_p50_ms", f"{kind}_p99_ms"
        if not _num(r, p50, p99):
            continue
        ratio = "-"
        if _num(base, p50, p99):
            ratio = f"p50 {_x(r[p50], base[p50])}, p99 {_x(r[p99], base[p99])}"
        figs.append(
            Figure(
                f"graph query `{kind}` latency, {r['files']:,}-file repo ({per_kind})",
                f"p50 {r[p50]} ms, p99 {r[p99]} ms",
                f"p50 {base.get(p50)} ms, p99 {base.get(p99)} ms at {base['files']:,} files",
                ratio,
                "-",
                "",
                _load(r.get("query_load")),
            )
        )
    if _num(r, "mean_query_ms"):
        figs.append(
            Figure(
                f"graph query mean over all kinds, {r['files']:,}-file repo",
                f"{r['mean_query_ms']} ms",
                f"{base.get('mean_query_ms')} ms at {base['files']:,} files",
                _x(r["mean_query_ms"], base.get("mean_query_ms") or 0),
                "-",
                "",
                _load(r.get("query_load")),
            )
        )
    return figs


def parse_graph(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rows = sorted(
        (
            r
            for r in _json_lines(out, "files", "nodes", "edges", "tx_s", "rows_per_s")
            if r["rows_per_s"] > 0
        ),
        key=lambda r: r["files"],
    )
    figs = []
    for r in rows:
        figs += _graph_publish(r, rows[0])
    for r in rows:
        figs += _graph_queries(r, rows[0])
    for n in _missing_sizes([int(r["files"]) for r in rows], args):
        figs.append(
            _not_measured(
                f"graph publish throughput and query latency, {n:,} files",
                f">= {PUBLISH_TARGET:,} rows/s",
                "asked for on the command line, no result in the output",
            )
        )
    return figs


# delta publish -----------------------------------------------------------------------------

DELTA_FIRST_TARGET = 30_000  # rows/s, first publish of 20,000 files
DELTA_ONE_FILE_TARGET_S = 2.0  # graph publish of a one-file change in 20,000 files


def parse_delta(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rows = _json_lines(out, "files", "step", "changed_files", "tx_s", "rows_written")
    first = next((r for r in rows if r["step"] == 0), None)
    if first is None:
        if args is None:
            return []
        return [
            _not_measured(
                "graph publish, first and delta",
                f">= {DELTA_FIRST_TARGET:,} rows/s",
                "asked for on the command line, no result in the output",
            )
        ]
    judged = first["files"] == PUBLISH_TARGET_FILES
    rate = first["rows_written"] / first["tx_s"] if first["tx_s"] else 0.0
    figs = [
        Figure(
            f"first publish throughput, {first['files']:,} files "
            f"({first['rows_written']:,} rows in one transaction of {first['tx_s']} s)",
            f"{rate:,.0f} rows/s",
            "-",
            f"{rate / DELTA_FIRST_TARGET:.2f}x target",
            f">= {DELTA_FIRST_TARGET:,} rows/s" if judged else "- (set for 20,000 files)",
            _ok(rate >= DELTA_FIRST_TARGET) if judged else "",
            _load(first.get("load")),
        )
    ]
    for r in rows:
        if r["step"] == 0:
            continue
        one = r["changed_files"] == 1 and judged
        share = r["changed_files"] / r["files"]
        figs.append(
            Figure(
                f"graph publish of a {r['changed_files']:,}-file change ({share:.1%}) in "
                f"{r['files']:,} files ({r.get('mode')}; resolve phase "
                f"{r.get('resolve_s')} s apart)",
                f"{r['tx_s']} s, {r['rows_written']:,} rows written "
                f"({r['rows_written'] / r['changed_files']:,.1f} per changed file)",
                f"first publish {first['tx_s']} s, {first['rows_written']:,} rows",
                f"time {_x(r['tx_s'], first['tx_s'], 4)}, rows "
                f"{_x(r['rows_written'], first['rows_written'], 4)}",
                f"<= {DELTA_ONE_FILE_TARGET_S} s" if one else "rows proportional to the change",
                _ok(r["tx_s"] <= DELTA_ONE_FILE_TARGET_S) if one else "",
                _load(r.get("load")),
            )
        )
        if "parity_ok" in r:
            figs.append(
                Figure(
                    f"parity after the last step: live graph against the model's rows "
                    f"({r.get('parity_rows', 0):,} rows, {r.get('parity_s')} s)",
                    "equal" if r["parity_ok"] else "DIFFERENT",
                    "-",
                    "-",
                    "equal",
                    _ok(bool(r["parity_ok"])),
                )
            )
    return figs


# queue -------------------------------------------------------------------------------------


def parse_queue(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    base = re.search(r"baseline round trip p50\s+([\d.]+) ms", out)
    thr = re.search(r"claim\+complete throughput\s+([\d.]+) jobs/s\s+\((\d+) jobs\)", out)
    enq = re.search(r"enqueue throughput\s+([\d.]+) jobs/s", out)
    queued = re.search(r"queued jobs\s+(\d+)", out)
    lat = re.findall(r"^(claim|claim\+complete)\s+p50\s+([\d.]+) ms.*?p99\s+([\d.]+) ms", out, re.M)
    if not (base and lat):
        return []
    b = float(base[1])
    n = queued[1] if queued else "?"
    figs = []
    for name, p50, p99 in lat:
        for p, v in (("p50", float(p50)), ("p99", float(p99))):
            figs.append(
                Figure(
                    f"queue {name} latency {p} ({n} jobs queued)",
                    f"{v} ms",
                    f"{b} ms Bolt round trip (RETURN 1) p50",
                    _x(v, b, 1),
                    "-",
                )
            )
    rt_per_s = 1000 / b if b else 0.0
    if thr:
        figs.append(
            Figure(
                f"queue claim+complete throughput ({thr[2]} jobs)",
                f"{thr[1]} jobs/s",
                f"{b} ms round trip = {rt_per_s:.0f} round trips/s",
                f"{rt_per_s / float(thr[1]):.1f} round trips per job" if float(thr[1]) else "-",
                "-",
            )
        )
    if enq:
        figs.append(
            Figure(
                f"queue enqueue throughput ({n} jobs)",
                f"{enq[1]} jobs/s",
                f"{b} ms round trip = {rt_per_s:.0f} round trips/s",
                f"{rt_per_s / float(enq[1]):.1f} round trips per job" if float(enq[1]) else "-",
                "-",
            )
        )
    return figs


# webhook -----------------------------------------------------------------------------------

# "..., 50 concurrent:" (before --client) or "..., 50 concurrent, raw client:"
_BURST_HEAD = re.compile(r"^burst of (\d+) deliveries, (\d+) concurrent(?:, (\w+) client)?:\s*$")
_SERVER_PHASE = re.compile(
    r"^\s+(ack \(server\)|body|check|batch_wait|commit)\s+mean\s+([\d.]+) ms\s+"
    r"p99 <=\s+(.+?)\s+\(n (\d+)\)"
)


def _blocks(out: str, head: re.Pattern[str]) -> list[tuple[re.Match[str], str]]:
    """Each line matching ``head`` with the indented lines that follow it."""
    found: list[tuple[re.Match[str], list[str]]] = []
    body: list[str] | None = None
    for line in out.splitlines():
        if m := head.match(line):
            body = []
            found.append((m, body))
        elif body is not None and line[:1].isspace():
            body.append(line)
        elif line.strip():
            body = None  # an unindented line ends the block
    return [(m, "\n".join(lines)) for m, lines in found]


def _server_split(block: str) -> str:
    parts = [
        f"{m[1]} mean {m[2]} ms (p99 <= {m[3]}, n {m[4]})"
        for m in map(_SERVER_PHASE.match, block.splitlines())
        if m
    ]
    commits = re.search(r"(\d+) group commits, mean ([\d.]+) deliveries each", block)
    if commits:
        parts.append(f"{commits[1]} group commits of {commits[2]} deliveries on average")
    return "; ".join(parts)


def _burst_figures(m: re.Match[str], block: str) -> list[Figure]:
    what = f"burst of {m[1]} deliveries, {m[2]} concurrent" + (f", {m[3]} client" if m[3] else "")
    target = f"p99 <= {ACK_P99_TARGET_MS:.0f} ms"
    ack = re.search(r"ack latency\s+p50 ([\d.]+) ms\s+p95 ([\d.]+) ms\s+p99 ([\d.]+) ms", block)
    base = re.search(r"baseline GET /healthz\s+p50 ([\d.]+) ms\s+p99 ([\d.]+) ms", block)
    if not (ack and base):
        return [_not_measured(f"webhook ack latency ({what})", target, "no latency line")]
    load = re.search(r"load average at start ([\d.]+)", block)
    warm = re.search(r"warm-up (\d+) deliveries", block)
    name = what + (f", after {warm[1]} unmeasured" if warm else "")
    p50, p95, p99 = float(ack[1]), float(ack[2]), float(ack[3])
    b50, b99 = float(base[1]), float(base[2])
    at = load[1] if load else ""
    figs = [
        Figure(
            f"webhook ack latency p50 ({name})",
            f"{p50} ms",
            f"{b50} ms GET /healthz p50",
            _x(p50, b50),
            "-",
            "",
            at,
        ),
        Figure(
            f"webhook ack latency p95 ({name})",
            f"{p95} ms",
            "- (the bench times no GET /healthz p95)",
            "-",
            "-",
            "",
            at,
        ),
        Figure(
            f"webhook ack latency p99 ({name})",
            f"{p99} ms",
            f"{b99} ms GET /healthz p99",
            _x(p99, b99),
            target,
            _ok(p99 <= ACK_P99_TARGET_MS),
            at,
        ),
    ]
    client = re.search(
        r"client mean ([\d.]+) ms = server ack mean ([\d.]+) ms \+ (-?[\d.]+) ms outside", block
    )
    if client:
        split = _server_split(block)
        figs.append(
            Figure(
                f"webhook ack time inside the server handler ({what})",
                f"{client[2]} ms server mean, {client[3]} ms outside the handler"
                + (f"; {split}" if split else ""),
                f"{client[1]} ms client-seen mean",
                f"{float(client[2]) / float(client[1]):.2f} of the client mean in the handler"
                if float(client[1])
                else "-",
                "-",
                "",
                at,
            )
        )
    return figs


_FIRST_INDEX = re.compile(
    r"^(first full index|re-index of the kept repository) of (\d+) files: ([\d.]+) s\s*$"
)
_ROUND = re.compile(r"^\s+round (\d+): ([\d.]+) s\s*$")
_PUSH = re.compile(
    r"one-file change in a (\d+)-file repository \((\d+) rounds\):\s+p50 ([\d.]+) s\s+"
    r"p95 ([\d.]+) s\s+max ([\d.]+) s.*?baseline (?:first full index|re-index of the kept "
    r"repository) through the same path: ([\d.]+) s",
    re.S,
)


def _job_lines(
    out: str,
) -> tuple[tuple[str, str, str, str] | None, list[tuple[str, str, str]]]:
    """The first index (number of files, seconds, job line, what it was: a first full index
    or a re-index of a kept repository) and each round (round, seconds, job line)."""
    lines = out.splitlines()
    first: tuple[str, str, str, str] | None = None
    rounds: list[tuple[str, str, str]] = []
    for i, line in enumerate(lines):
        job = lines[i + 1].strip() if i + 1 < len(lines) else ""
        job = job if job.startswith(("job ", "no run")) else ""
        if m := _FIRST_INDEX.match(line):
            first = (m[2], m[3], job, m[1])
        elif m := _ROUND.match(line):
            rounds.append((m[1], m[2], job))
    return first, rounds


def _push_figures(out: str, skip: bool) -> list[Figure]:
    first, rounds = _job_lines(out)
    push = _PUSH.search(out)
    figs = []
    base_s = float(push[6]) if push else float(first[1]) if first else 0.0
    files = push[1] if push else first[0] if first else "?"
    target_s = PUSH_P95_TARGET_S_20K if files != "?" and int(files) >= 20_000 else PUSH_P95_TARGET_S
    target = f"p95 <= {target_s:.0f} s"
    base_what = first[3] if first else "first full index"
    if first:
        figs.append(
            Figure(
                f"{first[3]} through the webhook, {int(first[0]):,}-file repo (baseline)",
                f"{first[1]} s" + (f" ({first[2]})" if first[2] else ""),
                "-",
                "-",
                "-",
            )
        )
    for n, secs, job in rounds:
        figs.append(
            Figure(
                f"push-to-searchable, round {n}, one-file change, {files}-file repo",
                f"{secs} s" + (f" ({job})" if job else ""),
                f"{base_s} s {base_what} (same path)",
                f"{float(secs) / base_s:.3f}" if base_s else "-",
                "-",
            )
        )
    if push:
        what = f"one-file change, {push[1]}-file repo ({push[2]} rounds)"
        for p, v in (("p50", push[3]), ("p95", push[4]), ("max", push[5])):
            good = float(v) <= target_s
            figs.append(
                Figure(
                    f"push-to-searchable {p}, {what}",
                    f"{v} s",
                    f"{push[6]} s {base_what} (same path)",
                    f"{float(v) / base_s:.3f}" if base_s else "-",
                    target if p == "p95" else "-",
                    _ok(good) if p == "p95" else "",
                )
            )
    elif not skip:
        why = f"{len(rounds)} round(s) finished, no summary" if first else "no result"
        figs.append(_not_measured("push-to-searchable p95, one-file change", target, why))
    return figs


def parse_webhook(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    figs: list[Figure] = []
    seen = []
    for m, block in _blocks(out, _BURST_HEAD):
        seen.append(int(m[2]))
        figs += _burst_figures(m, block)
    if args is not None and "--skip-burst" not in args:
        wanted = _ints(_arg(args, "--concurrency") or "50")
        for c in wanted:
            if c not in seen:
                figs.append(
                    _not_measured(
                        f"webhook ack latency p99 (burst of {_arg(args, '--burst') or 500} "
                        f"deliveries, {c} concurrent)",
                        f"p99 <= {ACK_P99_TARGET_MS:.0f} ms",
                        "no result in the output",
                    )
                )
    if args is None and not figs and not _PUSH.search(out) and not _job_lines(out)[0]:
        return []
    return figs + _push_figures(out, skip=args is None or "--skip-push" in args)


# retrieval ---------------------------------------------------------------------------------


def parse_retrieval(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rec = dict(re.findall(r"recall@\d+ (\w+)\s*: ([\d.]+)", out))
    counts = dict(re.findall(r"recall@\d+ (\w+)\s*: [\d.]+ \((\d+/\d+)\)", out))
    head = re.search(r"(\d+) files, (\d+) chunks, (\d+) queries, k=(\d+)", out)
    if not rec:
        return []
    what = f"{head[3]} queries on src/semgraph, k={head[4]}" if head else ""
    bm25 = float(rec.get("bm25", 0))
    best = max(float(v) for v in rec.values())
    figs = [
        Figure(
            f"recall@k {mode} ({what})",
            rec[mode] + (f" ({counts[mode]})" if mode in counts else ""),
            f"{rec.get('bm25', '-')} BM25 alone",
            _x(float(rec[mode]), bm25),
            "hybrid >= each alone" if mode == "hybrid" else "-",
            _ok(float(rec[mode]) >= best) if mode == "hybrid" else "",
        )
        for mode in ("bm25", "knn", "hybrid")
        if mode in rec
    ]
    indexed = re.search(r"indexed in ([\d.]+)s", out)
    if indexed and head:
        figs.append(
            Figure(
                f"retrieval index build, embedding + bulk ({head[2]} chunks of {head[1]} files)",
                f"{indexed[1]} s",
                "-",
                "-",
                "-",
            )
        )
    return figs


BENCHES = [
    Bench(
        "parse",
        "bench.bench_parse",
        ["--sizes", "1000,5000,20000"],
        ["--sizes", "500,2000"],
        parse_parse,
        note="Parse phase only (pool + spill), each size in a fresh process; parent peak RSS is "
        "sampled at every window, child peak RSS is reported by each pool child.",
    ),
    Bench(
        "memory",
        "bench.bench_memory",
        ["--sizes", "1000,5000,20000", "--small-files"],
        ["--sizes", "100,300", "--small-files"],
        parse_memory,
        timeout_s=3 * 3600,
        note="The whole job (checkout, parse pool + spill, resolve, embedding + staging index, "
        "one graph transaction, alias flip) in a fresh process per size, against the "
        "issue's sizes of 1k/5k/20k files; the baseline is the smallest size of the same run "
        "and the worker's peak RSS includes the embedding model. The repositories are "
        "generated with `--small-files` (one or two short functions per file, so one or two "
        "chunks per file): embedding runs on the CPU here at tens of chunks per second at best, "
        "and the default generator's ~13 chunks per file would make the 20k-file job about "
        "260k chunks, many hours; small files keep the file count (what the parse windows, "
        "spill, resolution and graph publish scale with) at 1k/5k/20k while the embedding "
        "stays feasible. The files AND chunks (and how many were embedded) of each size are "
        "read from the benchmark's output and named in each row, so the ratio is against "
        "both. `peak RSS by phase` is an RSS sampler marked at the job's checkpoints.",
    ),
    Bench("reindex", "bench.bench_reindex", ["--files", "100"], ["--files", "30"], parse_reindex),
    Bench(
        "embed",
        "bench.bench_embed",
        ["--files", "20", "--repeats", "2"],
        ["--files", "8", "--repeats", "1"],
        parse_embed,
    ),
    Bench(
        "graph",
        "bench.bench_graph",
        ["--sizes", "1000,10000,20000", "--queries", "200"],
        ["--sizes", "200,1000", "--queries", "50"],
        parse_graph,
        timeout_s=3600,
        note="Per size, a synthetic repository is parsed, resolved and published to the Bolt "
        "server in ONE transaction (rows = nodes + edges; target >= 20,000/s), then "
        "`definitions`/`callers`/`callees` run on random names (the issue's query latency is "
        "the 10,000-file row). Baseline: the smallest size of the same run. Neo4j 5 community "
        "here; Memgraph in production.",
    ),
    Bench(
        "delta",
        "bench.bench_delta",
        ["--files", "20000", "--changes", "1,1%,10%", "--parity"],
        ["--files", "100", "--changes", "1,1%,10%", "--parity"],
        parse_delta,
        timeout_s=3600,
        note="A synthetic repository (default generator) is parsed, resolved and published in "
        "ONE transaction (the first publish: throughput target >= 30,000 rows/s at 20,000 "
        "files); then, as successive deltas, 1 file, 1 % and 10 % of the files are changed in "
        "the parsed model (symbols move two lines, a new function calls one of the file's "
        "names), resolved again and published. Each delta's transaction time (the job's "
        "graph_publish phase; target <= 2 s for one file in 20,000) and rows written are "
        "ratios to the first publish of the same run; parity compares the live graph with the "
        "model after the last step.",
    ),
    Bench(
        "queue",
        "bench.bench_queue",
        ["--jobs", "2000", "--measure", "500"],
        ["--jobs", "300", "--measure", "150"],
        parse_queue,
    ),
    Bench(
        "webhook",
        "bench.bench_webhook",
        ["--burst", "500", "--concurrency", "50,8", "--files", "5000", "--rounds", "5"],
        ["--burst", "100", "--concurrency", "8", "--files", "100", "--rounds", "2"],
        parse_webhook,
        timeout_s=2 * 3600,
        note="A real `semgraph serve` and `semgraph worker`. Ack latency: one burst of signed "
        "pushes per concurrency, each after an unmeasured warm-up; every 202 is sent after the "
        "job is committed; baseline `GET /healthz` through the same client and concurrency; "
        "the server's own split comes from its `/metrics` histograms (p99 as a bucket bound). "
        "Push-to-searchable: one new file committed and pushed per round into a synthetic "
        "repository of small files (one or two functions each; CPU embedding makes the "
        "baseline first index of the default generator's files take hours), timed until "
        "`GET /search` finds it; baseline the first full index through the same path.",
    ),
    Bench("retrieval", "bench.bench_retrieval", [], [], parse_retrieval),
]


# -- machine ---------------------------------------------------------------------------------


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def machine() -> dict[str, str]:
    cpu = re.search(r"^model name\s*:\s*(.+)$", _read("/proc/cpuinfo"), re.M)
    mem = re.search(r"^MemTotal:\s+(\d+) kB", _read("/proc/meminfo"), re.M)
    info = {
        "cores available": str(len(os.sched_getaffinity(0))),
        "CPU": cpu[1] if cpu else platform.processor(),
        "RAM": f"{int(mem[1]) / 2**20:.1f} GiB" if mem else "?",
        "load average at start (1/5/15 min)": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
        "OS": platform.platform(),
        "Python": platform.python_version(),
    }
    for pkg in ("neo4j", "elasticsearch", "torch", "sentence-transformers", "tree-sitter"):
        try:
            from importlib.metadata import version

            info[f"{pkg} (Python package)"] = version(pkg)
        except Exception:
            info[f"{pkg} (Python package)"] = "not installed"
    try:
        from semgraph.config import load_settings
        from semgraph.db import connect_graph, connect_search

        settings = load_settings()
        with connect_graph(settings) as graph:
            comps = graph.query("bench versions", "CALL dbms.components()")
            info["graph server"] = ", ".join(
                f"{c['name']} {'/'.join(c['versions'])} {c.get('edition', '')}" for c in comps
            )
        es = connect_search(settings)
        try:
            nodes = es.nodes.info(node_id="_local", metric="_none")  # as `semgraph doctor`
            node = next(iter(nodes["nodes"].values()))
            info["Elasticsearch server"] = f"{node['version']} ({node.get('build_flavor', '')})"
        finally:
            es.close()
    except Exception as exc:  # the report still says what it could not read
        info["servers"] = f"not reachable: {exc}"
    return info


# -- run and report --------------------------------------------------------------------------

STDERR_MARK = "----- stderr (tail) -----"


def _last_error(stderr: str, stdout: str, rc: int | None) -> str:
    """Why a run failed: the last stderr line of a failed run; where the log records no exit
    status, the last line of a traceback in it."""
    err_lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    if rc:
        return (err_lines[-1] if err_lines else f"exit {rc}")[:300]
    if rc == 0:  # a traceback a successful run logged and survived is not its failure
        return ""
    text = stderr + "\n" + stdout
    if "Traceback (most recent call last)" in text:
        tail = text.rsplit("Traceback (most recent call last)", 1)[1].splitlines()
        last = [ln for ln in tail if ln.strip() and not ln[:1].isspace()]
        return (last[-1] if last else "a traceback in the log")[:300]
    return ""


def _finish(out: Outcome, stdout: str, stderr: str, args: Sequence[str] | None) -> Outcome:
    """Parse the figures and say why a run did not measure, without ever raising; ``args``
    None: the command line is not known, so no size is expected."""
    out.error = _last_error(stderr, stdout, out.rc)
    try:
        out.figures = out.bench.parse(stdout, args)
    except Exception as exc:  # a report with the reason beats no report
        out.error = out.error or f"could not parse the output: {exc!r}"
    if not out.measured and not out.error:
        out.error = "no figures found in the output"
    return out


def run_bench(bench: Bench, quick: bool, logs: Path) -> Outcome:
    args = bench.quick if quick else bench.default
    load = os.getloadavg()[0]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    print(f"[run_all] {bench.name}: python -m {bench.module} {' '.join(args)}", flush=True)
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", bench.module, *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=bench.timeout_s,
        )
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc = 124
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        stderr = f"timed out after {bench.timeout_s} s"
    seconds = time.monotonic() - started
    (logs / f"{bench.name}.log").write_text(
        f"$ python -m {bench.module} {' '.join(args)}\n# load {load:.2f}, rc {rc}, "
        f"{seconds:.1f} s\n{stdout}\n{STDERR_MARK}\n{stderr[-4000:]}"
    )
    out = _finish(Outcome(bench, list(args), rc, seconds, load), stdout, stderr, args)
    print(f"[run_all]   -> rc {rc}, {seconds:.0f} s, {len(out.measured)} figures", flush=True)
    return out


# -- reading kept logs (--from-logs) ---------------------------------------------------------

_RUN_ALL_META = re.compile(r"^# load ([\d.]+), rc (-?\d+), ([\d.]+) s$")
_RC = re.compile(r"^# rc (-?\d+)\s*$")
_UPTIME_LOAD = re.compile(r"load average:\s*([\d.]+)")
_ANY_LOAD = re.compile(r"\bload ([\d.]+)")


@dataclass
class _Run:
    """One ``$ command`` of a kept log and what followed it."""

    command: str
    label: str
    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rc: int | None = None
    seconds: float | None = None
    load: float | None = None

    def comment(self, line: str) -> None:
        if m := _RUN_ALL_META.match(line):
            self.load, self.rc, self.seconds = float(m[1]), int(m[2]), float(m[3])
        elif m := _RC.match(line):
            self.rc = int(m[1])
        else:
            if self.load is None and (m := _UPTIME_LOAD.search(line) or _ANY_LOAD.search(line)):
                self.load = float(m[1])
            if not re.match(r"^# \d+ files: start ", line):  # bench_memory's own progress line
                self.notes.append(line[1:].strip())


def _split_runs(text: str) -> tuple[list[str], list[_Run]]:
    """The comment lines before the first command, and each ``$ command`` with its output."""
    preamble: list[str] = []
    runs: list[_Run] = []
    headings: dict[int, str] = {}
    for line in text.splitlines():
        if line.startswith("$ "):
            label = " / ".join(headings[k] for k in sorted(headings))
            runs.append(_Run(line[2:].strip(), label))
        elif re.match(r"^#{2,6} ", line):
            level = len(line) - len(line.lstrip("#"))
            headings = {k: v for k, v in headings.items() if k < level}
            headings[level] = line.lstrip("#").strip()
        elif not runs:
            if line.startswith("#"):
                preamble.append(line[1:].strip())
        elif line.startswith("# "):
            runs[-1].comment(line)
            runs[-1].lines.append(line)  # a benchmark may print comment lines itself
        else:
            runs[-1].lines.append(line)
    return preamble, runs


def _args_of(command: str, module: str) -> list[str] | None:
    """The arguments after ``-m bench.bench_x`` (or ``bench/bench_x.py``); None: other command."""
    words = command.split()
    for i, word in enumerate(words):
        if word == module or word.endswith("/" + module.replace(".", "/") + ".py"):
            return words[i + 1 :]
    return None


def outcomes_from_log(bench: Bench, logs: Path) -> list[Outcome]:
    """Every run kept in ``logs/NAME.log`` (``--from-logs``: re-render without re-running);
    a missing or unreadable log is one outcome that says so."""
    path = logs / f"{bench.name}.log"
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        why = "no log" if isinstance(exc, FileNotFoundError) else f"unreadable log ({exc})"
        out = Outcome(bench, list(bench.default), None, None, None)
        out.command = f"(not run: {why} at {path})"
        out.error = f"{why}: {path}"
        return [out]
    preamble, runs = _split_runs(text)
    if not runs:
        out = Outcome(bench, [], None, None, None, notes=preamble)
        out.command = f"(no `$ python -m {bench.module}` line in {path})"
        return [_finish(out, text, "", None)]
    outcomes = []
    for i, run in enumerate(runs):
        body = "\n".join(run.lines)
        stdout, _, stderr = body.partition(f"\n{STDERR_MARK}\n")
        if body.startswith(STDERR_MARK + "\n"):
            stdout, stderr = "", body[len(STDERR_MARK) + 1 :]
        args = _args_of(run.command, bench.module)
        out = Outcome(
            bench,
            args or [],
            run.rc,
            run.seconds,
            run.load,
            command=run.command,
            label=run.label if len(runs) > 1 or run.label else "",
            notes=(preamble if i == 0 else []) + run.notes,
        )
        outcomes.append(_finish(out, stdout, stderr, args))
    return outcomes


# -- the report ------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _summary(outcomes: list[Outcome]) -> list[str]:
    def where(o: Outcome) -> str:
        return f"{o.bench.name}" + (f" ({o.label})" if o.label else "")

    figs = [(o, f) for o in outcomes for f in o.figures]
    missed = [
        f"{where(o)}: {f.name} ({f.value}; target {f.target})"
        for o, f in figs
        if f.verdict == MISSED
    ]
    unmeasured = [f"{where(o)}: {f.name} ({f.value})" for o, f in figs if f.verdict == NOT_MEASURED]
    failed = [f"{where(o)}: {o.error}" for o in outcomes if o.error]
    met = sum(1 for _, f in figs if f.verdict == MET)
    lines = [
        f"**Targets:** {met} met, {len(missed)} missed, {len(unmeasured)} not measured"
        + (f"; {len(failed)} run(s) failed or incomplete." if failed else ".")
    ]
    lines += [f"- missed: {_cell(m)}" for m in missed]
    lines += [f"- not measured: {_cell(m)}" for m in unmeasured]
    lines += [f"- failed or incomplete: {_cell(m)}" for m in failed]
    return lines


def _section(o: Outcome) -> list[str]:
    title = f"### {o.bench.name}" + (f" — {o.label}" if o.label else "")
    took = "time not recorded" if o.seconds is None else f"{o.seconds:.0f} s"
    load = "load not recorded" if o.load_1m is None else f"load {o.load_1m:.2f} at start"
    status = "exit status not recorded" if o.rc is None else (f"exit {o.rc}" if o.rc else "")
    lines = [
        title,
        "",
        f"Command: `{o.command}` — " + ", ".join(filter(None, [took, load, status])),
    ]
    lines += [""]
    if o.bench.note:
        lines += [o.bench.note, ""]
    if o.notes:
        lines += ["From the log:", "", *(f"- {_cell(n)}" for n in o.notes if n), ""]
    if o.error:
        lines += [f"**Not measured / failed:** `{_cell(o.error)}`", ""]
    if o.figures:
        lines += [
            "| figure | value | baseline (same run) | ratio | target | | load |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {_cell(f.name)} | {_cell(f.value)} | {_cell(f.baseline)} | {_cell(f.ratio)} "
            f"| {_cell(f.target)} | {f.verdict} | {f.load} |"
            for f in o.figures
        ]
        lines += [""]
    return lines


def render(
    info: dict[str, str],
    outcomes: list[Outcome],
    quick: bool,
    total_s: float,
    peers: str,
    logs: str = "bench/results",
    *,
    from_logs: bool = False,
) -> str:
    loads = [o.load_1m for o in outcomes if o.load_1m is not None]
    loads += [float(f.load) for o in outcomes for f in o.figures if f.load]
    cores = int(info["cores available"]) if info.get("cores available", "").isdigit() else 0
    loaded = cores > 0 and any(x > cores * 0.75 for x in loads)
    written = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    how = (
        f"Re-rendered by `python -m bench.run_all --from-logs` from the logs in `{logs}/` "
        f"(written {written}; the machine table was recorded when a run started at "
        f"{info.get('run started', '?')}; each section names its own command and load)"
        if from_logs
        else f"Measured by `python -m bench.run_all{' --quick' if quick else ''}`, run started "
        f"{info.get('run started', '?')}, written {written}; raw output of each benchmark is in "
        f"`{logs}/`"
    )
    lines = [
        "# Benchmark results",
        "",
        f"{how}. {total_s / 60:.1f} min of benchmarks"
        + (" (where the logs record it)" if from_logs else "")
        + ". Every ratio is against a baseline "
        "measured in the same run of the same benchmark.",
        "",
    ]
    if quick:
        lines += ["**Quick run**: small sizes; use the default run for the report.", ""]
    if loaded:
        lines += [
            f"**Figures were taken on a loaded {cores}-core machine** shared with other engineers' "
            f"test runs: the 1-minute load average ranged {min(loads):.1f}-{max(loads):.1f} while "
            "benchmarks and their sizes started (column `load`, else the command's line). "
            "Throughput and latency figures are therefore pessimistic and noisy; ratios within "
            "one benchmark are the more reliable reading.",
            "",
        ]
    lines += [*_summary(outcomes), ""]
    lines += ["## Machine", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {_cell(v)} |" for k, v in info.items()]
    lines += [
        "",
        "Every command runs from the repository root with the stack's environment, e.g. "
        "`SEMGRAPH_STATE_DIR=/var/tmp/semgraph-bench SEMGRAPH_BOLT_URI=bolt://127.0.0.1:17707 "
        "SEMGRAPH_ES_URL=http://127.0.0.1:19207 HF_HUB_OFFLINE=1`.",
        "",
        "## Figures",
        "",
    ]
    for o in outcomes:
        lines += _section(o)
    notes = ROOT / "bench" / "NOTES.md"
    if notes.exists() and not quick:
        lines += [notes.read_text().strip(), ""]
    lines += [peers]
    return "\n".join(lines) + "\n"


def _peer_cell(run: dict[str, Any], key: str) -> str:
    v = run.get(key)
    return "-" if v is None else (f"{v:,}" if isinstance(v, int) else str(v))


def render_peers(path: Path) -> str:
    if not path.exists():
        return "## Side by side with peers\n\nNot measured yet: run `python -m bench.peers`.\n"
    data = json.loads(path.read_text())
    lines = [
        "## Side by side with peers",
        "",
        f"Measured by `python -m bench.peers` on {data['measured_at']} against the Bolt server "
        f"{data['bolt']} (Neo4j, the same server for every tool; the graph is emptied before "
        f"each run). Versions: "
        + ", ".join(f"{k} {v}" for k, v in data["versions"].items())
        + ". Peak RSS is GNU time's maximum resident set size: the largest single process of "
        "the tool's process tree. Call pairs = distinct caller-callee pairs among call edges; "
        "confident = without semgraph's `tier=ambiguous` edges (one per candidate of a call "
        "with several candidates) and codegraphcontext's `HEURISTIC_CALLS`.",
        "",
    ]
    for label, repo in data["repos"].items():
        lines += [
            f"### {label}",
            "",
            f"Load average at start: {repo['load_1m_at_start']:.2f}",
            "",
            "| tool | wall s | peak RSS MiB | nodes | edges | call edges | call pairs "
            "| confident call pairs | notes |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for run in repo["runs"]:
            note = ""
            if run.get("rc"):
                note = f"exit {run['rc']}: {run.get('error', '')}"
                if run.get("probe"):
                    note += f"; pymgclient probe: {run['probe']}"
            if run.get("graph_only_s") is not None:
                note = (
                    f"checkout+parse+resolve+graph publish {run['graph_only_s']} s of the total; "
                    "the rest is embedding + search index"
                )
            lines.append(
                "| "
                + " | ".join(
                    _cell(x)
                    for x in (
                        run["tool"],
                        _peer_cell(run, "wall_s"),
                        _peer_cell(run, "peak_rss_mib"),
                        _peer_cell(run, "nodes"),
                        _peer_cell(run, "edges"),
                        _peer_cell(run, "call_edges"),
                        _peer_cell(run, "call_pairs"),
                        _peer_cell(run, "confident_call_pairs"),
                        note,
                    )
                )
                + " |"
            )
        lines += ["", "Edge types and call edges by kind:", ""]
        lines += [
            f"- {run['tool']}: "
            + ", ".join(f"{k} {v:,}" for k, v in run.get("edge_types", {}).items())
            + "; calls: "
            + ", ".join(f"{k} {v:,}" for k, v in run.get("calls_by_kind", {}).items())
            for run in repo["runs"]
            if run.get("rc") == 0
        ]
        lines += ["", "Commands (run in the repository's directory):", ""]
        lines += [f"- {run['tool']}: `{run['command']}`" for run in repo["runs"]]
        lines += [""]
    notes = ROOT / "bench" / "PEERS_NOTES.md"
    if notes.exists():
        lines += [notes.read_text().strip(), ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated benchmark names")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS.md")
    parser.add_argument("--peers", type=Path, default=ROOT / "bench" / "peers.json")
    parser.add_argument("--logs", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument(
        "--from-logs", action="store_true", help="re-render from bench/results/*.log, run nothing"
    )
    args = parser.parse_args(argv)
    wanted = {s for s in args.only.split(",") if s}
    unknown = wanted - {b.name for b in BENCHES}
    if unknown:
        raise SystemExit(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    logs = args.logs
    logs.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    if args.from_logs:  # the machine of the run, never the one re-rendering it
        try:
            info = json.loads((logs / "machine.json").read_text())
        except (OSError, ValueError) as exc:
            info = {"machine": f"not recorded: no readable machine.json in {logs} ({exc})"}
    else:
        info = {"run started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), **machine()}
        (logs / "machine.json").write_text(json.dumps(info, indent=1) + "\n")
    selected = [b for b in BENCHES if not wanted or b.name in wanted]
    if args.from_logs:
        outcomes = [o for b in selected for o in outcomes_from_log(b, logs)]
        args.quick = any(o.args == o.bench.quick and o.args != o.bench.default for o in outcomes)
        total_s = sum(o.seconds or 0.0 for o in outcomes)
    else:
        outcomes = [run_bench(b, args.quick, logs) for b in selected]
        total_s = time.monotonic() - started
    shown = str(logs.relative_to(ROOT)) if logs.is_relative_to(ROOT) else str(logs)
    peers = render_peers(args.peers)
    report = render(info, outcomes, args.quick, total_s, peers, shown, from_logs=args.from_logs)
    args.out.write_text(report)
    print(f"[run_all] wrote {args.out} in {(time.monotonic() - started) / 60:.1f} min")
    failed = [o.bench.name for o in outcomes if o.rc or o.error]
    if failed:
        print(f"[run_all] not measured or failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
