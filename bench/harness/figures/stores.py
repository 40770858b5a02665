"""Rows of the stores' benchmarks: graph (publish and queries), delta (publish of a change),
queue (retrieval is in ``bench.harness.figures.retrieval``).

Each ``figures_NAME`` reads the ``bench.harness.records`` lines that ``bench/bench_NAME.py`` prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.harness import records
from bench.harness.figures import Figure, load, missing_sizes, not_measured, num, ok, x

PUBLISH_TARGET = 20_000
PUBLISH_TARGET_FILES = 20_000  # the issue sets the throughput target for this size only

# -- graph -------------------------------------------------------------------------------------

QUERY_KINDS = ("def", "callers", "callees")


def _graph_publish(r: dict[str, Any], base: dict[str, Any]) -> list[Figure]:
    rate, base_rate = r["rows_per_s"], base["rows_per_s"]
    judged = r["files"] == PUBLISH_TARGET_FILES  # other sizes are context, not the target

    def throughput(name: str, value: int, baseline: str, ratio_to: int, at: Any) -> Figure:
        share = f"{value / PUBLISH_TARGET:.2f}x" + (" target" if judged else "")
        return Figure(
            name,
            f"{value:,} rows/s",
            baseline,
            f"{x(value, ratio_to)}; {share}",
            f">= {PUBLISH_TARGET:,} rows/s" if judged else "- (set for 20,000 files)",
            ok(value >= PUBLISH_TARGET) if judged else "",
            load(at),
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
    if num(r, "republish_rows_per_s"):
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
    if num(r, "resolution_rate"):
        figs.append(
            Figure(
                f"call resolution, {r['files']:,} files ({r.get('call_sites', '?'):,} call sites; "
                f"parse {r.get('parse_s')} s, resolve {r.get('resolve_s')} s)",
                f"{r['resolution_rate']:.1%} resolved",
                f"{base.get('resolution_rate', 0):.1%} at {base['files']:,} files",
                x(r["resolution_rate"], base.get("resolution_rate", 0)),
                "-",
            )
        )
    return figs


def _graph_queries(r: dict[str, Any], base: dict[str, Any]) -> list[Figure]:
    figs = []
    per_kind = f"{r['queries']} random names" if num(r, "queries") else "random names"
    for kind in QUERY_KINDS:
        p50, p99 = f"{kind}_p50_ms", f"{kind}_p99_ms"
        if not num(r, p50, p99):
            continue
        ratio = "-"
        if num(base, p50, p99):
            ratio = f"p50 {x(r[p50], base[p50])}, p99 {x(r[p99], base[p99])}"
        figs.append(
            Figure(
                f"graph query `{kind}` latency, {r['files']:,}-file repo ({per_kind})",
                f"p50 {r[p50]} ms, p99 {r[p99]} ms",
                f"p50 {base.get(p50)} ms, p99 {base.get(p99)} ms at {base['files']:,} files",
                ratio,
                "-",
                "",
                load(r.get("query_load")),
            )
        )
    if num(r, "mean_query_ms"):
        figs.append(
            Figure(
                f"graph query mean over all kinds, {r['files']:,}-file repo",
                f"{r['mean_query_ms']} ms",
                f"{base.get('mean_query_ms')} ms at {base['files']:,} files",
                x(r["mean_query_ms"], base.get("mean_query_ms") or 0),
                "-",
                "",
                load(r.get("query_load")),
            )
        )
    return figs


def figures_graph(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rows = sorted(
        (
            r
            for r in records.read(out, "graph.size")
            if num(r, "files", "nodes", "edges", "tx_s", "rows_per_s") and r["rows_per_s"] > 0
        ),
        key=lambda r: r["files"],
    )
    figs = []
    for r in rows:
        figs += _graph_publish(r, rows[0])
    for r in rows:
        figs += _graph_queries(r, rows[0])
    for n in missing_sizes([int(r["files"]) for r in rows], args):
        figs.append(
            not_measured(
                f"graph publish throughput and query latency, {n:,} files",
                f">= {PUBLISH_TARGET:,} rows/s",
                "asked for on the command line, no result in the output",
            )
        )
    return figs


# -- delta publish -----------------------------------------------------------------------------

DELTA_FIRST_TARGET = 30_000  # rows/s, first publish of 20,000 files
DELTA_ONE_FILE_TARGET_S = 2.0  # graph publish of a one-file change in 20,000 files


def figures_delta(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rows = [
        r
        for r in records.read(out, "delta.step")
        if num(r, "files", "step", "changed_files", "tx_s", "rows_written")
    ]
    first = next((r for r in rows if r["step"] == 0), None)
    if first is None:
        if args is None:
            return []
        return [
            not_measured(
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
            ok(rate >= DELTA_FIRST_TARGET) if judged else "",
            load(first.get("load")),
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
                f"time {x(r['tx_s'], first['tx_s'], 4)}, rows "
                f"{x(r['rows_written'], first['rows_written'], 4)}",
                f"<= {DELTA_ONE_FILE_TARGET_S} s" if one else "rows proportional to the change",
                ok(r["tx_s"] <= DELTA_ONE_FILE_TARGET_S) if one else "",
                load(r.get("load")),
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
                    ok(bool(r["parity_ok"])),
                )
            )
    return figs


# -- queue -----------------------------------------------------------------------------------


def figures_queue(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    rows = [r for r in records.read(out, "queue.summary") if num(r, "baseline_p50_ms")]
    if not rows or not rows[-1].get("latency"):
        return []
    r = rows[-1]
    b = r["baseline_p50_ms"]
    n = r["jobs"] if num(r, "jobs") else "?"
    figs = []
    for lat in r["latency"]:
        for p in ("p50", "p99"):
            v = lat[f"{p}_ms"]
            figs.append(
                Figure(
                    f"queue {lat['name']} latency {p} ({n} jobs queued)",
                    f"{v} ms",
                    f"{b} ms Bolt round trip (RETURN 1) p50",
                    x(v, b, 1),
                    "-",
                )
            )
    rt_per_s = 1000 / b if b else 0.0
    if num(r, "throughput_jobs_per_s", "measured_jobs"):
        thr = r["throughput_jobs_per_s"]
        figs.append(
            Figure(
                f"queue claim+complete throughput ({r['measured_jobs']} jobs)",
                f"{thr:.1f} jobs/s",
                f"{b} ms round trip = {rt_per_s:.0f} round trips/s",
                f"{rt_per_s / thr:.1f} round trips per job" if thr else "-",
                "-",
            )
        )
    if num(r, "enqueue_jobs_per_s"):
        enq = r["enqueue_jobs_per_s"]
        figs.append(
            Figure(
                f"queue enqueue throughput ({n} jobs)",
                f"{enq:.1f} jobs/s",
                f"{b} ms round trip = {rt_per_s:.0f} round trips/s",
                f"{rt_per_s / enq:.1f} round trips per job" if enq else "-",
                "-",
            )
        )
    return figs
