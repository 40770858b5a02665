"""Running one benchmark: its subprocess, its kept log, and the machine it ran on.

Each benchmark runs in its own subprocess against the stack named by ``SEMGRAPH_*``; its full
output is kept in ``bench/results/NAME.log`` (the form ``bench.harness.logs`` reads back) and its
figures are read from the JSON lines it printed (``bench.harness.records``).
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

from bench.harness.figures import Bench, Outcome
from bench.harness.logs import STDERR_MARK, finish

ROOT = Path(__file__).resolve().parents[2]


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
    out = finish(Outcome(bench, list(args), rc, seconds, load), stdout, stderr, args)
    print(f"[run_all]   -> rc {rc}, {seconds:.0f} s, {len(out.measured)} figures", flush=True)
    return out
