"""A cold host against a warm one (issue 26, item 3): the same kind of one-file push, run by
the product's job on a host that has never seen the repository (an empty state directory: no
mirror, work tree, parse cache or resolution) and on the host that ran the previous jobs,
alternating in one run, phase by phase; and what a warm host keeps on its disk per repository.

    python -m bench.fleet.bench_coldhost --repo /var/tmp/coldhost/repo-5k --files 5000 --rounds 2

``--repo`` is a repository made by ``bench.synth.generate`` (``--small`` files by default: one
or two short functions each, so a 20,000-file first publish fits a small test stack's
transaction cap; ``--dense`` for the default generator), kept between invocations. When the
stack named by ``SEMGRAPH_*`` has not indexed it, host A (the settings' own state directory)
runs its first index with stand-in document vectors (:class:`bench.synth.vectors.HashVectors`,
as ``bench.push.bench_pushphases``). Each round then appends one function to one existing Python
file, commits, and runs the job once per host, each host on a commit of its own, in the
order cold, warm: ``cold`` a new empty state directory (removed after its job), ``warm`` host
A. Both read the same shared stores, so both publish a delta and clone the live search index;
what differs is what is on the host's disk. The embedding model is the real one (loaded once,
outside the timed jobs) and its OpenVINO export cache (``SEMGRAPH_MODELS_DIR``) is shared: a
new host's first model export is a one-time cost per host, not per repository, and is not
counted here.

Prints the phase table (median seconds over the rounds, and cold / warm), each job's resolve
mode and parse reuse, then host A's cache entries of the repository in bytes allocated on
disk (mirror, work tree, parse cache, resolution): what a worker's volume holds per
repository. JSON records
``coldhost.*``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.harness.records import emit
from bench.push.bench_pushphases import _change, _job, _load

HOSTS = ("cold", "warm")


def _du(path: Path) -> int:
    """Bytes allocated on disk under ``path`` (blocks, as ``du``: a small file takes one)."""
    if path.is_file():
        return path.stat().st_blocks * 512
    total = 0
    for root, dirs, names in os.walk(path):
        for name in [*dirs, *names]:
            with contextlib.suppress(OSError):
                total += (Path(root) / name).lstat().st_blocks * 512
    return total


def _row(result: Any, seconds: float) -> dict[str, Any]:
    parse = result.stats.get("parse", {})
    resolve = result.stats.get("resolve_incremental", {})
    publish = result.stats.get("publish", {})
    return {
        "phases": {"job (wall)": round(seconds, 3), **dict(result.phases_s)},
        "resolve_mode": resolve.get("mode"),
        "files_resolved": resolve.get("files_resolved"),
        "files_reused": parse.get("files_reused"),
        "publish_mode": publish.get("mode"),
        "rows_written": sum((publish.get("nodes") or {}).values())
        + sum((publish.get("edges") or {}).values())
        + int(publish.get("deleted_nodes") or 0)
        + int(publish.get("deleted_edges") or 0),
        "status": str(result.status),
    }


def _table(per_host: dict[str, list[dict[str, Any]]]) -> list[str]:
    names: list[str] = []
    for runs in per_host.values():
        for run in runs:
            names += [n for n in run["phases"] if n not in names]
    out = [f"{'phase (median s)':<20}{'cold':>10}{'warm':>10}  cold/warm"]
    for name in names:
        med = {
            h: statistics.median([r["phases"].get(name, 0.0) for r in runs]) if runs else 0.0
            for h, runs in per_host.items()
        }
        ratio = f"{med['cold'] / med['warm']:.2f}" if med.get("warm") else ""
        out.append(f"{name:<20}{med['cold']:10.3f}{med['warm']:10.3f}  {ratio}")
    return out


def _cache_sizes(settings: Any, key: str) -> dict[str, int]:
    from semgraph.indexer.checkout import worktree_path
    from semgraph.indexer.parsecache import cache_dir
    from semgraph.indexer.resolvecache import cache_path

    return {
        "mirror": _du(settings.mirrors_path / f"{key}.git"),
        "worktree": _du(worktree_path(settings, key)),
        "parse_cache": _du(cache_dir(settings, key)),
        "resolution": _du(cache_path(settings, key)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--files", type=int, default=5000, help="generated when --repo is absent")
    parser.add_argument("--dense", action="store_true", help="the default (dense) generator")
    parser.add_argument("--rounds", type=int, default=2, help="rounds (one job per host each)")
    parser.add_argument("--work", type=Path, default=None, help="where cold hosts' dirs go")
    args = parser.parse_args()

    from bench.synth import generate
    from bench.synth.vectors import HashVectors
    from semgraph.config import load_settings
    from semgraph.db import connect_graph
    from semgraph.graph.reader import GraphReader
    from semgraph.graph.schema import SCHEMA
    from semgraph.indexer.sources import repo_key_for
    from semgraph.logs import configure
    from semgraph.search.embed import Embedder

    configure("WARNING")
    warm = load_settings()
    work = args.work or warm.state_dir / "coldhost"
    print(f"load at start: {_load()}", flush=True)
    if not (args.repo / ".git").is_dir():
        t0 = time.perf_counter()
        generate(args.repo, args.files, seed=11, small=not args.dense)
        print(f"generated {args.files} files in {time.perf_counter() - t0:.1f} s", flush=True)
    n_files = int(
        subprocess.run(
            ["git", "-C", str(args.repo), "ls-files"], capture_output=True, text=True, check=True
        ).stdout.count("\n")
    )
    key = repo_key_for(str(args.repo))
    with connect_graph(warm) as graph:
        graph.ensure_schema(SCHEMA)
        if GraphReader(graph).repository(key) is None:
            print("first index on host A (stand-in vectors) ...", flush=True)
            first, t_first = _job(warm, graph, HashVectors(warm), args.repo)
            print(f"first index {t_first:.1f} s {first.status} {dict(first.phases_s)}", flush=True)
            emit(
                "coldhost.first",
                files=n_files,
                seconds=round(t_first, 1),
                phases_s=dict(first.phases_s),
                load=_load(),
            )
        embedder = Embedder(warm)
        embedder.embed(["warm up"])  # the model loads outside the timed jobs
        per_host: dict[str, list[dict[str, Any]]] = {h: [] for h in HOSTS}
        for round_no in range(args.rounds):
            for host in HOSTS:
                cold_dir = work / f"cold-{os.getpid()}-{round_no}"
                settings = warm
                if host == "cold":
                    shutil.rmtree(cold_dir, ignore_errors=True)
                    settings = warm.model_copy(update={"state_dir": cold_dir, "mirrors_dir": None})
                path = _change(args.repo, round_no, host)
                load = _load()
                result, secs = _job(settings, graph, embedder, args.repo)
                row = _row(result, secs)
                per_host[host].append(row)
                print(
                    f"round {round_no} {host:<5} {secs:7.2f} s {row['status']} changed {path} "
                    f"resolve {row['resolve_mode']} ({row['files_resolved']} files) "
                    f"reused {row['files_reused']} publish {row['publish_mode']} "
                    f"{row['rows_written']} rows, load {load}",
                    flush=True,
                )
                emit("coldhost.round", host=host, round=round_no, files=n_files, load=load, **row)
                if host == "cold":
                    shutil.rmtree(cold_dir, ignore_errors=True)
        sizes = _cache_sizes(warm, key)
    print(f"\n{n_files} files, {args.rounds} rounds per host, load at end: {_load()}")
    for text in _table(per_host):
        print(text)
    jobs = {
        h: statistics.median(r["phases"]["job (wall)"] for r in runs)
        for h, runs in per_host.items()
        if runs
    }
    if "cold" in jobs and "warm" in jobs:
        print(
            f"whole job: cold {jobs['cold']:.2f} s, warm {jobs['warm']:.2f} s, "
            f"cold/warm {jobs['cold'] / jobs['warm']:.2f}"
        )
        emit(
            "coldhost.summary",
            files=n_files,
            rounds=args.rounds,
            cold_s=round(jobs["cold"], 3),
            warm_s=round(jobs["warm"], 3),
            ratio=round(jobs["cold"] / jobs["warm"], 3),
        )
    total = sum(sizes.values())
    each = ", ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in sizes.items())
    per_file = total / max(n_files, 1) / 1024
    print(
        f"host A's caches of the repository: {each}; {total / 2**20:.1f} MiB, "
        f"{per_file:.1f} KiB per file"
    )
    emit(
        "coldhost.disk",
        files=n_files,
        bytes=sizes,
        total=total,
        per_file=round(total / max(n_files, 1), 1),
    )


if __name__ == "__main__":
    main()
