"""Rows of the indexing job's benchmarks: parse, memory (the whole job), embed, reindex.

Each ``figures_NAME`` reads the ``bench.harness.records`` lines that ``bench/bench_NAME.py`` prints.
Over 300 lines because the whole job has many rows (peak RSS per process, per phase, time per
phase); the four builders share the phase order and nothing else, and could be split by
benchmark if this grows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.harness import records
from bench.harness.figures import (
    MIB,
    RSS_TARGET,
    Figure,
    f,
    load,
    missing_sizes,
    not_measured,
    num,
    ok,
    x,
)

# -- parse -----------------------------------------------------------------------------------

PARSE_FIELDS = (
    "files",
    "files_per_s",
    "per_core",
    "cores",
    "mb_per_s",
    "parent_peak_rss_mib",
    "child_peak_rss_mib",
    "seconds",
    "failed",
)


def _parse_rss(rows: list[dict[str, Any]]) -> list[Figure]:
    base = rows[0]
    figs = []
    for key, who in (
        ("parent_peak_rss_mib", "worker (parent)"),
        ("child_peak_rss_mib", "pool child"),
    ):
        for r in rows:
            value, first = r[key], base[key]
            ratio = value / first if first else float("inf")
            figs.append(
                Figure(
                    f"parse phase peak RSS, {who}, {r['files']:,} files",
                    f"{f(value, 1)} MiB",
                    f"{f(first, 1)} MiB at {base['files']:,} files",
                    f"{ratio:.3f}",
                    f"ratio <= {RSS_TARGET}",
                    ok(ratio <= RSS_TARGET),
                )
            )
    return figs


def figures_parse(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rows = sorted(
        (r for r in records.read(out, "parse.size") if num(r, *PARSE_FIELDS)),
        key=lambda r: r["files"],
    )
    figs = [
        Figure(
            f"parse throughput, {r['files']:,} files ({r['failed']} failed, {r['seconds']} s)",
            f"{f(r['per_core'], 1)} files/s/core ({f(r['files_per_s'], 1)} files/s over "
            f"{r['cores']} cores, {r['mb_per_s']} MB/s)",
            f"{f(rows[0]['per_core'], 1)} files/s/core at {rows[0]['files']:,} files",
            x(r["per_core"], rows[0]["per_core"]),
            ">= 100 files/s/core",
            ok(r["per_core"] >= 100),
        )
        for r in rows
    ]
    figs += _parse_rss(rows) if rows else []
    for n in missing_sizes([r["files"] for r in rows], args):
        figs.append(
            not_measured(
                f"parse phase, {n:,} files",
                f">= 100 files/s/core; peak RSS ratio <= {RSS_TARGET}",
                "asked for on the command line, no result in the output",
            )
        )
    return figs


# -- memory ----------------------------------------------------------------------------------

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
    known = [(k, float(phases[k])) for k in PHASE_ORDER if num(phases, k)]
    rest = [(k, float(v)) for k, v in phases.items() if k not in PHASE_ORDER and num(phases, k)]
    return known + rest


def _phase_split(phases: dict[str, Any], total: float) -> str:
    total = total or sum(v for _, v in _ordered(phases)) or 1.0
    return ", ".join(f"{k} {v:.1f}s ({v / total:.0%})" for k, v in _ordered(phases) if v >= 0.05)


def _memory_what(r: dict[str, Any]) -> str:
    chunks, embedded = r.get("chunks"), r.get("embedded")
    what = (
        f"{r['files']:,} files, {chunks:,} chunks" if num(r, "chunks") else f"{r['files']:,} files"
    )
    if num(r, "embedded"):
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
            if not num(r, key) or not num(base, key):
                continue
            ratio = r[key] / base[key] if base[key] else float("inf")
            figs.append(
                Figure(
                    f"whole job peak RSS, {who}, {_memory_what(r)}",
                    f"{f(r[key] / MIB, 1)} MiB",
                    f"{f(base[key] / MIB, 1)} MiB at {base['files']:,} files",
                    f"{ratio:.3f}",
                    f"ratio <= {RSS_TARGET}",
                    ok(ratio <= RSS_TARGET),
                    load(r.get("load_1m")),
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
        load(r.get("load_1m")),
    )


def _memory_time(r: dict[str, Any], base: dict[str, Any]) -> Figure:
    phases = r.get("phases_s") if isinstance(r.get("phases_s"), dict) else {}
    wall = float(r.get("wall_s") or 0.0)
    return Figure(
        f"end-to-end job by phase, {_memory_what(r)}",
        f"{f(wall, 1)} s: {_phase_split(phases or {}, wall)}",
        f"{f(float(base.get('wall_s') or 0.0), 1)} s at {base['files']:,} files",
        f"{x(wall, float(base.get('wall_s') or 0.0))} for {r['files'] / base['files']:.1f}x files",
        "-",
        "",
        load(r.get("load_1m")),
    )


def figures_memory(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rows = sorted(
        (
            r
            for r in records.read(out, "memory.size")
            if num(r, "files", "worker_peak_rss_bytes") and r["files"] > 0
        ),
        key=lambda r: r["files"],
    )
    started = {
        int(s["files"]): s for s in records.read(out, "memory.start") if num(s, "files", "load_1m")
    }
    figs = _memory_rss(rows) if rows else []
    for r in rows:
        phase = _memory_phase_rss(r, rows[0])
        figs += [phase] if phase else []
        figs.append(_memory_time(r, rows[0]))
    for n in missing_sizes([int(r["files"]) for r in rows], args, list(started)):
        why = "asked for on the command line, never started"
        if n in started:
            s = started[n]
            why = (
                f"the job started at {s.get('start_utc')} UTC (load {s['load_1m']:.2f}) but the "
                "output has no result for it (failed, stopped, or still running)"
            )
        figs.append(
            not_measured(
                f"whole job peak RSS, worker and pool child, {n:,} files",
                f"ratio <= {RSS_TARGET}",
                why,
            )
        )
    return figs


# -- embed -----------------------------------------------------------------------------------


def figures_embed(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    reps = [r for r in records.read(out, "embed.repeat") if num(r, "raw_s", "phase_s", "reuse_s")]
    if not reps:
        return []
    # logs before issue 20 have one backend (torch) and no backend field
    names = list(dict.fromkeys(str(r.get("backend") or "torch") for r in reps))
    figs: list[Figure] = []
    for name in names:
        figs += _embed_backend(
            out, name, [r for r in reps if (r.get("backend") or "torch") == name]
        )
    pairs = records.read(out, "embed.backends")
    if pairs and num(pairs[-1], "phase_speedup", "raw_speedup"):
        pair = pairs[-1]
        figs.append(
            Figure(
                "embedding phase, torch fp32 / OpenVINO int8 (same texts, same run)",
                f"{pair['phase_speedup']:.2f}x",
                f"raw call {pair['raw_speedup']:.2f}x",
                f"{pair['phase_speedup']:.2f}",
                "ratio >= 5",
                ok(pair["phase_speedup"] >= 5),
            )
        )
    return figs


def _embed_backend(out: str, name: str, reps: list[dict[str, Any]]) -> list[Figure]:
    heads = [h for h in records.read(out, "embed.texts") if (h.get("backend") or "torch") == name]
    head = heads[-1] if heads else None
    summaries = [
        s for s in records.read(out, "embed.summary") if (s.get("backend") or "torch") == name
    ]
    summary = summaries[-1] if summaries else {}
    raw = min(r["raw_s"] for r in reps)
    phase = min(r["phase_s"] for r in reps)
    reuse = min(r["reuse_s"] for r in reps)
    hits = sorted({str(r["hit_rate_pct"]) for r in reps if num(r, "hit_rate_pct")})
    what = f"{head['chunks']} chunks of {head['files']} files, {head['device']}" if head else ""
    if head and head.get("source"):
        what += f", {head['source']}"
    what = f"{name}: " + (what or "same texts")
    best = f"best of {len(reps)} repeats"
    call = "raw model.encode" if name == "torch" else f"raw {name} call"
    # the bench's own ratios are computed before rounding: prefer them to the rounded seconds
    ratio = summary["ratio"] if num(summary, "ratio") else (phase / raw if raw else float("inf"))
    reuse_ratio = (
        summary["reuse_ratio"]
        if num(summary, "reuse_ratio")
        else (reuse / phase if phase else float("inf"))
    )
    faster = (
        summary["speedup"]
        if num(summary, "speedup")
        else (phase / reuse if reuse else float("inf"))
    )
    rate = f" ({summary['texts_per_s']:.1f} texts/s)" if num(summary, "texts_per_s") else ""
    return [
        Figure(
            f"embedding phase vs {call} ({what}; {best})",
            f"{f(phase)} s (all: {', '.join(f(r['phase_s']) for r in reps)})",
            f"{f(raw)} s {call}" + rate + f" (all: {', '.join(f(r['raw_s']) for r in reps)})",
            f"{ratio:.3f}",
            "ratio <= 1.15",
            ok(ratio <= 1.15),
        ),
        Figure(
            f"{name}: embedding phase of unchanged content (every vector reused"
            + (f", hit rate {'/'.join(hits)}%" if hits else "")
            + f"; {best})",
            f"{f(reuse)} s",
            f"{f(phase)} s first embedding phase",
            f"{reuse_ratio:.4f} ({faster:.1f}x faster)",
            "-",
        ),
    ]


# -- reindex ---------------------------------------------------------------------------------


def _phases(run: dict[str, Any]) -> str:
    """``[[phase, seconds], ...]`` as ``phase 1.2s (10%)``, shares of their sum."""
    found = [(str(p[0]), float(p[1])) for p in run.get("phases_s") or [] if len(p) == 2]
    total = sum(v for _, v in found) or 1.0
    return ", ".join(f"{k} {v:.1f}s ({v / total:.0%})" for k, v in found)


def figures_reindex(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    runs = {r.get("run"): r for r in records.read(out, "reindex.run") if num(r, "seconds")}
    repos = records.read(out, "reindex.repo")
    ratios = records.read(out, "reindex.ratios")
    printed = ratios[-1] if ratios else {}
    first, noop, forced = runs.get("first"), runs.get("unchanged"), runs.get("forced")
    if not first:
        return []
    t1 = first["seconds"]
    repo = repos[-1] if repos else None
    what = f"{repo['files']} files, {repo['chunks']} chunks, {repo['nodes']} nodes" if repo else ""
    figs = [
        Figure(
            f"first index, end to end by phase ({what}; status {first.get('status')})",
            f"{f(t1)} s: {_phases(first)}",
            "-",
            "-",
            "-",
        )
    ]
    if noop:
        t0 = noop["seconds"]
        speedup = (  # the bench's ratio is computed before rounding
            printed["first_over_unchanged"]
            if num(printed, "first_over_unchanged")
            else (t1 / t0 if t0 else float("inf"))
        )
        figs.append(
            Figure(
                f"reindex of unchanged content (same commit, status {noop.get('status')})",
                f"{f(t0)} s",
                f"{f(t1)} s first index",
                f"first/unchanged {speedup:.1f}x",
                ">= 10x faster",
                ok(speedup >= 10),
            )
        )
    else:
        figs.append(not_measured("reindex of unchanged content", ">= 10x faster", "no line"))
    if forced:
        tf = forced["seconds"]
        again = (
            printed["first_over_forced"]
            if num(printed, "first_over_forced")
            else (t1 / tf if tf else 0)
        )
        figs.append(
            Figure(
                f"forced reindex of unchanged content (status {forced.get('status')}, reused "
                f"{forced.get('reused')}, embedded {forced.get('embedded')})",
                f"{f(tf)} s: {_phases(forced)}",
                f"{f(t1)} s first index",
                f"first/forced {again:.1f}x",
                "-",
            )
        )
    return figs
