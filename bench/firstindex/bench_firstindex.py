"""The whole first index of this repository, end to end, in one run: semgraph with the torch
embedding path, semgraph with its default (fast) path, and CodeGraphContext (issue 20).

    python -m bench.firstindex.bench_firstindex [--source /work/main] [--tools torch,default,cgc]
                                     [--rounds 1] [--skip-install]

NOT part of the test suite. The repository is ``--source`` at HEAD as a one-commit git
snapshot (the working tree is not read). Every run is a first index: semgraph's runs each
index their own copy of the snapshot (another path, so another repository key: no live
index, parse cache, mirror or work tree to reuse) after the graph, every search index and
the shared vector store are deleted; CodeGraphContext (installed from PyPI into its own
environment as ``bench.firstindex.peers`` does) gets an empty graph on the same Bolt server.

A semgraph run is a fresh process (``--one``) running the job ``semgraph index`` runs
(``Reindex``: checkout, parse pool, resolve, embedding + staging index, graph publish, alias
flip) under ``/usr/bin/time -v``: wall time is the whole process (interpreter start, imports
and the model load included), peak RSS per phase is an ``RssSampler`` marked at the job's
checkpoints as in ``bench_memory``. The OpenVINO export of the default path is built before
the runs (a once-per-machine cost, measured and printed as ``export_s``). The load average
is printed before each run. Records: ``firstindex.repo``, ``firstindex.run`` per run and
``firstindex.summary`` (torch / default: target >= 3; semgraph default / CodeGraphContext:
target <= 1).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness.records import emit

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = {"torch": "torch", "default": "auto"}
# today's torch path (before issue 20): torch fp32 at the model's own 256 tokens; the default
# path keeps every default (OpenVINO int8, embedding_max_tokens 128)
MAX_TOKENS = {"torch": "0"}


def one(repo: str) -> dict[str, Any]:
    """The job on ``repo`` in this process (the ``--one`` child)."""
    from semgraph.config import load_settings
    from semgraph.db import connect_graph, connect_search
    from semgraph.graph.schema import SCHEMA
    from semgraph.indexer.pipeline import Reindex
    from semgraph.indexer.request import ReindexRequest
    from semgraph.memory import RssSampler

    settings = load_settings()
    started = time.perf_counter()
    with (
        connect_graph(settings) as graph,
        contextlib.closing(connect_search(settings)) as es,
        RssSampler(interval_s=0.005, first_phase="setup") as sampler,
    ):
        graph.ensure_schema(SCHEMA)
        result = Reindex(
            settings, graph, es, ReindexRequest(source=repo), checkpoint=sampler.mark
        ).run()
        sampler.mark("after_job")
    index = result.stats.get("index", {})
    return {
        "status": result.status,
        "job_s": round(time.perf_counter() - started, 2),
        "phases_s": result.phases_s,
        "files": index.get("files"),
        "chunks": index.get("chunks"),
        "embedded": index.get("embedded"),
        "store_reused": index.get("store_reused"),
        "backend": settings.embedding_backend,
        "worker_peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "pool_peak_rss_bytes": result.stats.get("parse", {}).get("child_peak_rss_bytes", 0),
        "phase_peak_rss_bytes": sampler.peaks,
    }


def _fresh_search() -> None:
    from bench.firstindex.peers import wipe_search
    from semgraph.config import load_settings
    from semgraph.db import connect_search
    from semgraph.search.vectorstore import store_name

    wipe_search()
    settings = load_settings()
    with contextlib.closing(connect_search(settings)) as es:
        es.options(ignore_status=404).indices.delete(index=store_name(settings.search_index_prefix))


def _export(env: dict[str, str]) -> float:
    """Build (or find) the default path's model export before the runs; seconds taken."""
    code = (
        "from semgraph.config import load_settings; from semgraph.search.embed import Embedder; "
        "Embedder(load_settings()).embed(['def warm():\\n    return 1'])"
    )
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    return round(time.perf_counter() - started, 2)


def run_semgraph(tool: str, repo: Path, driver: Any, logs: Path) -> dict[str, Any]:
    from bench.firstindex.peers import timed, wipe

    wipe(driver)
    _fresh_search()
    env = {
        **os.environ,
        "SEMGRAPH_EMBEDDING_BACKEND": BACKENDS[tool],
        "SEMGRAPH_LOG_LEVEL": "WARNING",
    }
    if tool in MAX_TOKENS:
        env["SEMGRAPH_EMBEDDING_MAX_TOKENS"] = MAX_TOKENS[tool]
    cmd = [sys.executable, "-m", "bench.firstindex.bench_firstindex", "--one", str(repo)]
    r = timed(cmd, env, ROOT, logs / f"firstindex-{tool}.log")
    row: dict[str, Any] = {"wall_s": r["wall_s"], "peak_rss_mib": r["peak_rss_mib"], "rc": r["rc"]}
    if r["rc"] == 0:
        row.update(json.loads(r["stdout"].strip().splitlines()[-1]))
    else:
        row["error"] = r["stderr"][-600:]
    return row


def run_cgc(repo: Path, driver: Any, logs: Path, bolt: str) -> dict[str, Any]:
    from bench.firstindex.peers import PEERS, base_env, counts, timed, wipe

    wipe(driver)
    shutil.rmtree(PEERS / "home" / ".codegraphcontext", ignore_errors=True)
    env = base_env() | {
        "DEFAULT_DATABASE": "neo4j",
        "NEO4J_URI": bolt,
        "NEO4J_USERNAME": "neo4j",
        "NEO4J_PASSWORD": "unused-auth-off",
    }
    cmd = [str(PEERS / "cgc" / "bin" / "cgc"), "index", str(repo)]
    r = timed(cmd, env, repo, logs / "firstindex-cgc.log")
    got = counts(driver)
    return {
        "wall_s": r["wall_s"],
        "peak_rss_mib": r["peak_rss_mib"],
        "rc": r["rc"],
        "nodes": got["nodes"],
        "edges": got["edges"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--source", type=Path, default=ROOT)
    parser.add_argument("--tools", default="torch,default,cgc")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--skip-install", action="store_true")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return

    from neo4j import GraphDatabase

    from bench.firstindex.bench_reuse import snapshot
    from bench.firstindex.peers import CGC_SPECS, PEERS, ensure_venv, wipe
    from semgraph.config import load_settings

    tools = [t for t in args.tools.split(",") if t]
    if "cgc" in tools and not args.skip_install:
        PEERS.mkdir(parents=True, exist_ok=True)
        ensure_venv("cgc", shutil.which("python3.11") or sys.executable, CGC_SPECS)
    settings = load_settings()
    logs = PEERS / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="semgraph-bench-firstindex-") as tmp:
        base = Path(tmp) / "repo"
        commit = snapshot(args.source, "", base)
        files = len(
            subprocess.run(
                ["git", "ls-files"], cwd=base, capture_output=True, text=True
            ).stdout.splitlines()
        )
        export_s = (
            _export({**os.environ, "SEMGRAPH_EMBEDDING_BACKEND": "auto"})
            if "default" in tools
            else None
        )
        emit(
            "firstindex.repo",
            source=f"{args.source.name} @{commit}",
            files=files,
            export_s=export_s,
            cgc=_cgc_version() if "cgc" in tools else None,
            cpus=os.cpu_count(),
        )
        rows: dict[str, list[dict[str, Any]]] = {t: [] for t in tools}
        with GraphDatabase.driver(settings.bolt_uri) as driver:
            for rnd in range(args.rounds):
                for tool in tools:
                    load = os.getloadavg()
                    print(
                        f"# {tool} round {rnd}: load " + " ".join(f"{x:.2f}" for x in load),
                        flush=True,
                    )
                    if tool == "cgc":
                        row = run_cgc(base, driver, logs, settings.bolt_uri)
                    else:
                        copy = Path(tmp) / f"{tool}-{rnd}"
                        shutil.copytree(base, copy, symlinks=True)
                        row = run_semgraph(tool, copy, driver, logs)
                    row = {"tool": tool, "round": rnd, "load_1m": round(load[0], 2), **row}
                    rows[tool].append(row)
                    emit("firstindex.run", **row)
                    print(_human(row), flush=True)
            wipe(driver)  # the peer's constraints would break semgraph's schema on this server
    best = {
        t: min(r["wall_s"] for r in rs if r["rc"] == 0)
        for t, rs in rows.items()
        if any(r["rc"] == 0 for r in rs)
    }
    summary: dict[str, Any] = {f"{t}_s": s for t, s in best.items()}
    if "torch" in best and "default" in best:
        summary["torch_over_default"] = round(best["torch"] / best["default"], 2)
    if "cgc" in best and "default" in best:
        summary["default_over_cgc"] = round(best["default"] / best["cgc"], 2)
    emit("firstindex.summary", **summary)
    print("\n" + ", ".join(f"{k} {v}" for k, v in summary.items()))


def _cgc_version() -> str:
    from bench.firstindex.peers import PEERS, sh

    proc = sh([str(PEERS / "cgc" / "bin" / "pip"), "show", "codegraphcontext"])
    found = [
        ln.split(":", 1)[1].strip() for ln in proc.stdout.splitlines() if ln.startswith("Version:")
    ]
    return found[0] if found else "not installed"


def _human(row: dict[str, Any]) -> str:
    mib = 2**20
    text = (
        f"{row['tool']}: {row['wall_s']} s wall, peak RSS {row['peak_rss_mib']} MiB, rc {row['rc']}"
    )
    if "phases_s" in row:
        text += f"; {row['chunks']} chunks, {row['embedded']} embedded; " + ", ".join(
            f"{k} {v:.1f}s" for k, v in row["phases_s"].items()
        )
        text += "\n    phase peak RSS: " + ", ".join(
            f"{k} {v / mib:.0f} MiB" for k, v in row.get("phase_peak_rss_bytes", {}).items()
        )
    if "nodes" in row:
        text += f"; {row['nodes']} nodes, {row['edges']} edges"
    return text


if __name__ == "__main__":
    main()
