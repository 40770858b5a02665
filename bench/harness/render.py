"""The report, ``bench/RESULTS.md``: a summary of the targets, the machine, one section per
run with its rows, the notes, and the side-by-side peers read from ``bench/peers.json``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from bench.harness.figures import MET, MISSED, NOT_MEASURED, Outcome

ROOT = Path(__file__).resolve().parents[2]


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
        return (
            "## Side by side with peers\n\n"
            "Not measured yet: run `python -m bench.firstindex.peers`.\n"
        )
    data = json.loads(path.read_text())
    lines = [
        "## Side by side with peers",
        "",
        f"Measured by `python -m bench.firstindex.peers` on {data['measured_at']} against the "
        f"Bolt server {data['bolt']} (Neo4j, the same server for every tool; the graph is "
        f"emptied before each run). Versions: "
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
