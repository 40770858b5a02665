"""Run every benchmark and write ``bench/RESULTS.md``.

    python -m bench.run_all [--quick] [--only NAME,...] [--out bench/RESULTS.md]

Each benchmark runs in its own subprocess against the stack named by ``SEMGRAPH_*`` (start a
private one: ``SEMGRAPH_STATE_DIR=... SEMGRAPH_BOLT_URI=... SEMGRAPH_ES_URL=...
semgraph services up``); its full output is kept in ``bench/results/NAME.log`` and its figures
are parsed into one table: value, the baseline measured in the same run, the ratio, the
target and the command that reproduces it, with the 1-minute load average when it started.
The report starts with the machine (cores, RAM, CPU model, load, Neo4j/Elasticsearch/Python
versions). The side-by-side peers section is read from ``bench/peers.json``, written by
``python -m bench.peers`` (not run here: it installs the peers from PyPI).

The default run is sized to finish in about 25 minutes on a 2-core machine; ``--quick`` in a
few minutes (smaller repositories; figures marked as quick).
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MIB = 2**20


@dataclass
class Figure:
    name: str
    value: str
    baseline: str
    ratio: str
    target: str
    verdict: str = ""


@dataclass
class Bench:
    name: str
    module: str
    default: list[str]
    quick: list[str]
    parse: Callable[[str], list[Figure]]
    timeout_s: int = 1800
    note: str = ""


@dataclass
class Outcome:
    bench: Bench
    args: list[str]
    rc: int
    seconds: float
    load_1m: float
    figures: list[Figure] = field(default_factory=list)
    error: str = ""

    @property
    def command(self) -> str:
        return " ".join(["python -m", self.bench.module, *self.args])


def _ok(good: bool) -> str:
    return "met" if good else "**missed**"


def _f(x: float, nd: int = 2) -> str:
    return f"{x:,.{nd}f}"


# -- parsers: one per benchmark, reading the lines the benchmark prints ----------------------


def parse_parse(out: str) -> list[Figure]:
    rx = re.compile(
        r"^\s*(\d+) files:\s+([\d.]+) files/s \(\s*([\d.]+)/core over (\d+) cores\),\s+([\d.]+) "
        r"MB/s, parent peak RSS\s+([\d.]+) MiB, child peak RSS\s+([\d.]+) MiB, ([\d.]+)s, "
        r"failed (\d+)",
        re.M,
    )
    rows = [
        {
            "n": int(m[1]),
            "fps": float(m[2]),
            "core": float(m[3]),
            "parent": float(m[6]),
            "child": float(m[7]),
            "failed": int(m[9]),
        }
        for m in rx.finditer(out)
    ]
    if not rows:
        return []
    base = rows[0]
    figs = []
    for r in rows:
        figs.append(
            Figure(
                f"parse throughput, {r['n']:,} files",
                f"{_f(r['core'], 1)} files/s/core ({_f(r['fps'], 1)} files/s)",
                f"{_f(base['core'], 1)} files/s/core at {base['n']:,} files",
                f"{r['core'] / base['core']:.2f}x",
                ">= 100 files/s/core",
                _ok(r["core"] >= 100),
            )
        )
    for key, who in (("parent", "worker (parent)"), ("child", "pool child")):
        for r in rows:
            ratio = r[key] / base[key]
            figs.append(
                Figure(
                    f"parse phase peak RSS, {who}, {r['n']:,} files",
                    f"{_f(r[key], 1)} MiB",
                    f"{_f(base[key], 1)} MiB at {base['n']:,} files",
                    f"{ratio:.3f}",
                    "ratio <= 1.3",
                    _ok(ratio <= 1.3),
                )
            )
    return figs


def _json_lines(out: str) -> list[dict[str, Any]]:
    rows = []
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


def parse_memory(out: str) -> list[Figure]:
    rows = _json_lines(out)
    if not rows:
        return []
    base = rows[0]
    figs = []
    for key, who in (("worker_peak_rss_bytes", "worker"), ("pool_peak_rss_bytes", "pool child")):
        for r in rows:
            ratio = r[key] / max(base[key], 1)
            figs.append(
                Figure(
                    f"whole job peak RSS, {who}, {r['files']:,} files ({r['chunks']} chunks, "
                    f"{r.get('embedded')} embedded)",
                    f"{_f(r[key] / MIB, 1)} MiB",
                    f"{_f(base[key] / MIB, 1)} MiB at {base['files']:,} files",
                    f"{ratio:.3f}",
                    "ratio <= 1.3",
                    _ok(ratio <= 1.3),
                )
            )
    order = ["checkout", "parse", "resolve", "embed_index", "graph_publish", "alias_flip"]
    for r in rows:
        r["phases_s"] = dict(
            sorted(
                r["phases_s"].items(),
                key=lambda kv: (kv[0] not in order, order.index(kv[0]) if kv[0] in order else 0),
            )
        )
        total = sum(r["phases_s"].values()) or 1.0
        split = ", ".join(
            f"{k} {v:.1f}s ({v / total:.0%})" for k, v in r["phases_s"].items() if v >= 0.05
        )
        figs.append(
            Figure(
                f"end-to-end job by phase, {r['files']:,} files",
                f"{_f(r['wall_s'], 1)} s: {split}",
                f"{_f(base['wall_s'], 1)} s at {base['files']:,} files",
                f"{r['wall_s'] / base['wall_s']:.2f}x for {r['files'] / base['files']:.1f}x files",
                "-",
            )
        )
    return figs


def parse_embed(out: str) -> list[Figure]:
    reps = re.findall(
        r"raw encode ([\d.]+)s, embedding phase ([\d.]+)s .*?unchanged re-run embedding phase "
        r"([\d.]+)s",
        out,
    )
    head = re.search(r"(\d+) files, (\d+) chunks", out)
    if not reps:
        return []
    raw = min(float(r[0]) for r in reps)
    phase = min(float(r[1]) for r in reps)
    reuse = min(float(r[2]) for r in reps)
    what = f"{head[2]} chunks of {head[1]} files" if head else "same texts"
    return [
        Figure(
            f"embedding phase vs raw model.encode ({what})",
            f"{_f(phase)} s",
            f"{_f(raw)} s raw model.encode",
            f"{phase / raw:.3f}",
            "ratio <= 1.15",
            _ok(phase / raw <= 1.15),
        ),
        Figure(
            "embedding phase of unchanged content (every vector reused)",
            f"{_f(reuse)} s",
            f"{_f(phase)} s first embedding phase",
            f"{reuse / phase:.4f} ({phase / reuse:.1f}x faster)",
            "-",
        ),
    ]


def parse_reindex(out: str) -> list[Figure]:
    first = re.search(r"^first index\s+([\d.]+) s", out, re.M)
    noop = re.search(r"^unchanged\s+([\d.]+) s\s+status=(\w+)", out, re.M)
    forced = re.search(
        r"^forced\s+([\d.]+) s\s+status=(\w+) embedded=(\d+) reused=(\d+)", out, re.M
    )
    repo = re.search(r"^repository: (\d+) files, (\w+) chunks, (\d+) nodes", out, re.M)
    if not (first and noop and forced):
        return []
    t1, t0, tf = float(first[1]), float(noop[1]), float(forced[1])
    what = f"{repo[1]} files, {repo[2]} chunks" if repo else ""
    phases = re.findall(r"^\s{4}(\w+)\s+([\d.]+) s$", out.split("unchanged")[0], re.M)
    split = ", ".join(f"{k} {float(v):.1f}s ({float(v) / t1:.0%})" for k, v in phases)
    return [
        Figure(
            f"first index, end to end by phase ({what})",
            f"{_f(t1)} s: {split}",
            "-",
            "-",
            "-",
        ),
        Figure(
            f"reindex of unchanged content (same commit, status {noop[2]})",
            f"{_f(t0)} s",
            f"{_f(t1)} s first index",
            f"first/unchanged {t1 / t0:.1f}x",
            ">= 10x faster",
            _ok(t1 / t0 >= 10),
        ),
        Figure(
            f"forced reindex of unchanged content (reused {forced[4]}, embedded {forced[3]})",
            f"{_f(tf)} s",
            f"{_f(t1)} s first index",
            f"first/forced {t1 / tf:.1f}x",
            "-",
        ),
    ]


def parse_graph(out: str) -> list[Figure]:
    rows = _json_lines(out)
    if not rows:
        return []
    base = rows[0]
    figs = []
    for r in rows:
        figs.append(
            Figure(
                f"graph publish throughput, {r['files']:,} files "
                f"({r['nodes'] + r['edges']:,} rows, one transaction)",
                f"{r['rows_per_s']:,} rows/s",
                f"{base['rows_per_s']:,} rows/s at {base['files']:,} files",
                f"{r['rows_per_s'] / base['rows_per_s']:.2f}x; "
                f"{r['rows_per_s'] / 20000:.2f}x target",
                ">= 20,000 rows/s",
                _ok(r["rows_per_s"] >= 20000),
            )
        )
    last = rows[-1]
    for kind in ("def", "callers", "callees"):
        for p in (50, 99):
            key = f"{kind}_p{p}_ms"
            figs.append(
                Figure(
                    f"graph query `{kind}` p{p}, {last['files']:,}-file repo",
                    f"{last[key]} ms",
                    f"{base[key]} ms at {base['files']:,} files",
                    f"{last[key] / base[key]:.2f}x",
                    "-",
                )
            )
    return figs


def parse_queue(out: str) -> list[Figure]:
    base = re.search(r"baseline round trip p50\s+([\d.]+) ms", out)
    thr = re.search(r"claim\+complete throughput\s+([\d.]+) jobs/s\s+\((\d+) jobs\)", out)
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
                    f"{v / b:.1f}x",
                    "-",
                )
            )
    if thr:
        figs.append(
            Figure(
                f"queue claim+complete throughput ({thr[2]} jobs)",
                f"{thr[1]} jobs/s",
                f"{b} ms round trip = {1000 / b:.0f} round trips/s",
                f"{1000 / b / float(thr[1]):.1f} round trips per job",
                "-",
            )
        )
    return figs


def parse_webhook(out: str) -> list[Figure]:
    figs = []
    ack = re.search(
        r"ack latency\s+p50 ([\d.]+) ms\s+p95 ([\d.]+) ms\s+p99 ([\d.]+) ms.*?"
        r"baseline GET /healthz\s+p50 ([\d.]+) ms\s+p99 ([\d.]+) ms",
        out,
        re.S,
    )
    burst = re.search(r"burst of (\d+) deliveries, (\d+) concurrent", out)
    if ack:
        what = f"{burst[1]} deliveries, {burst[2]} concurrent" if burst else "burst"
        p99, b99 = float(ack[3]), float(ack[5])
        figs += [
            Figure(
                f"webhook ack latency p50 ({what})",
                f"{ack[1]} ms",
                f"{ack[4]} ms GET /healthz p50",
                f"{float(ack[1]) / float(ack[4]):.2f}x",
                "-",
            ),
            Figure(
                f"webhook ack latency p99 ({what})",
                f"{ack[3]} ms",
                f"{ack[5]} ms GET /healthz p99",
                f"{p99 / b99:.2f}x",
                "p99 <= 200 ms",
                _ok(p99 <= 200),
            ),
        ]
    push = re.search(
        r"one-file change in a (\d+)-file repository \((\d+) rounds\):\s+p50 ([\d.]+) s\s+"
        r"p95 ([\d.]+) s\s+max ([\d.]+) s.*?first full index through the same path: ([\d.]+) s",
        out,
        re.S,
    )
    if push:
        first = float(push[6])
        for p, v in (("p50", float(push[3])), ("p95", float(push[4]))):
            figs.append(
                Figure(
                    f"push-to-searchable {p}, one-file change, {push[1]}-file repo "
                    f"({push[2]} rounds)",
                    f"{v} s",
                    f"{first} s first full index (same path)",
                    f"{v / first:.2f}",
                    "p95 <= 30 s" if p == "p95" else "-",
                    _ok(v <= 30) if p == "p95" else "",
                )
            )
    return figs


def parse_retrieval(out: str) -> list[Figure]:
    rec = dict(re.findall(r"recall@\d+ (\w+)\s*: ([\d.]+)", out))
    head = re.search(r"(\d+) files, (\d+) chunks, (\d+) queries, k=(\d+)", out)
    if not rec:
        return []
    what = f"{head[3]} queries on src/semgraph, k={head[4]}" if head else ""
    bm25 = float(rec.get("bm25", 0)) or 1e-9
    return [
        Figure(
            f"recall@k {mode} ({what})",
            rec[mode],
            f"{rec.get('bm25')} BM25 alone",
            f"{float(rec[mode]) / bm25:.2f}x",
            "hybrid >= each alone" if mode == "hybrid" else "-",
            _ok(float(rec[mode]) >= max(float(v) for v in rec.values()))
            if mode == "hybrid"
            else "",
        )
        for mode in ("bm25", "knn", "hybrid")
        if mode in rec
    ]


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
        ["--sizes", "50,100,200"],
        ["--sizes", "20,40"],
        parse_memory,
        note="The whole job (checkout, parse, resolve, embed + staging, graph, alias flip) in a "
        "fresh process per size. CPU-only embedding runs at tens of chunks/s on this machine, so "
        "the whole job is measured at small sizes only; the parse phase at 1k/5k/20k files is "
        "in the parse rows.",
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
        ["--sizes", "500,2000", "--queries", "100"],
        ["--sizes", "200,500", "--queries", "50"],
        parse_graph,
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
        ["--burst", "300", "--files", "100", "--rounds", "3"],
        ["--burst", "100", "--files", "30", "--rounds", "2"],
        parse_webhook,
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
        f"{seconds:.1f} s\n{stdout}\n----- stderr (tail) -----\n{stderr[-4000:]}"
    )
    out = Outcome(bench, args, rc, seconds, load)
    if rc != 0:
        lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
        out.error = (lines[-1] if lines else f"exit {rc}")[:300]
    try:
        out.figures = bench.parse(stdout)
    except Exception as exc:
        out.error = out.error or f"could not parse the output: {exc!r}"
    if rc == 0 and not out.figures and not out.error:
        out.error = "no figures found in the output"
    print(f"[run_all]   -> rc {rc}, {seconds:.0f} s, {len(out.figures)} figures", flush=True)
    return out


def outcome_from_log(bench: Bench, logs: Path) -> Outcome | None:
    """Rebuild an outcome from a kept log (``--from-logs``: re-render without re-running)."""
    path = logs / f"{bench.name}.log"
    if not path.exists():
        return None
    text = path.read_text()
    head, _, rest = text.partition("\n")
    meta, _, body = rest.partition("\n")
    stdout, _, stderr = body.partition("\n----- stderr (tail) -----\n")
    m = re.match(r"# load ([\d.]+), rc (-?\d+), ([\d.]+) s", meta)
    if not m:
        return None
    args = head.split(bench.module, 1)[1].split() if bench.module in head else []
    out = Outcome(bench, args, int(m[2]), float(m[3]), float(m[1]))
    if out.rc != 0:
        lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
        out.error = (lines[-1] if lines else f"exit {out.rc}")[:300]
    out.figures = bench.parse(stdout)
    if out.rc == 0 and not out.figures:
        out.error = "no figures found in the output"
    return out


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(
    info: dict[str, str],
    outcomes: list[Outcome],
    quick: bool,
    total_s: float,
    peers: str,
    logs: str = "bench/results",
) -> str:
    loads = [o.load_1m for o in outcomes]
    cores = int(info.get("cores available", "1"))
    loaded = any(x > cores * 0.75 for x in loads)
    lines = [
        "# Benchmark results",
        "",
        f"Measured by `python -m bench.run_all{' --quick' if quick else ''}`, run started "
        f"{info.get('run started', '?')}, {total_s / 60:.1f} min of benchmarks; written "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
        "Every ratio is against a baseline measured in the same run; raw output of each "
        f"benchmark is in `{logs}/`.",
        "",
    ]
    if quick:
        lines += ["**Quick run**: small sizes; use the default run for the report.", ""]
    if loaded:
        lines += [
            f"**Figures were taken on a loaded {cores}-core machine** shared with other engineers' "
            f"test runs: the 1-minute load average ranged {min(loads):.1f}-{max(loads):.1f} while "
            "benchmarks started (column `load`). Throughput and latency figures are therefore "
            "pessimistic and noisy; ratios within one benchmark are the more reliable reading.",
            "",
        ]
    missed = [
        f"{f.name} ({f.value}; target {f.target})"
        for o in outcomes
        for f in o.figures
        if f.verdict == "**missed**"
    ]
    met = sum(1 for o in outcomes for f in o.figures if f.verdict == "met")
    failed = [f"{o.bench.name}: {o.error}" for o in outcomes if o.error]
    lines += [f"**Targets:** {met} met, {len(missed)} missed."]
    lines += [f"- missed: {_cell(m)}" for m in missed]
    lines += [f"- not measured: {_cell(m)}" for m in failed]
    lines += [""]
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
        lines += [f"### {o.bench.name}", ""]
        lines += [
            f"Command: `{o.command}` — {o.seconds:.0f} s, load {o.load_1m:.2f} at start"
            + (f", exit {o.rc}" if o.rc else ""),
            "",
        ]
        if o.bench.note:
            lines += [o.bench.note, ""]
        if o.error:
            lines += [f"**Not measured / failed:** `{_cell(o.error)}`", ""]
        if o.figures:
            lines += [
                "| figure | value | baseline (same run) | ratio | target | |",
                "|---|---|---|---|---|---|",
            ]
            lines += [
                f"| {_cell(f.name)} | {_cell(f.value)} | {_cell(f.baseline)} | {_cell(f.ratio)} "
                f"| {_cell(f.target)} | {f.verdict} |"
                for f in o.figures
            ]
            lines += [""]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated benchmark names")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS.md")
    parser.add_argument("--peers", type=Path, default=ROOT / "bench" / "peers.json")
    parser.add_argument("--logs", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument(
        "--from-logs", action="store_true", help="re-render from bench/results/*.log, run nothing"
    )
    args = parser.parse_args()
    wanted = {s for s in args.only.split(",") if s}
    unknown = wanted - {b.name for b in BENCHES}
    if unknown:
        raise SystemExit(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    logs = args.logs
    logs.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    if args.from_logs and (logs / "machine.json").exists():
        info = json.loads((logs / "machine.json").read_text())
    else:
        info = {"run started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), **machine()}
        (logs / "machine.json").write_text(json.dumps(info, indent=1) + "\n")
    selected = [b for b in BENCHES if not wanted or b.name in wanted]
    if args.from_logs:
        outcomes = [o for b in selected if (o := outcome_from_log(b, logs)) is not None]
        args.quick = any(o.args == o.bench.quick and o.args != o.bench.default for o in outcomes)
    else:
        outcomes = [run_bench(b, args.quick, logs) for b in selected]
    total_s = sum(o.seconds for o in outcomes) if args.from_logs else time.monotonic() - started
    shown = str(logs.relative_to(ROOT)) if logs.is_relative_to(ROOT) else str(logs)
    report = render(info, outcomes, args.quick, total_s, render_peers(args.peers), shown)
    args.out.write_text(report)
    print(f"[run_all] wrote {args.out} in {(time.monotonic() - started) / 60:.1f} min")
    failed = [o.bench.name for o in outcomes if o.rc != 0 or o.error]
    if failed:
        print(f"[run_all] not measured or failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
