"""Parse benchmark: files/s, MB/s, parent and child peak RSS at 1,000 and 20,000 files.

    python -m bench.firstindex.bench_parse [--sizes 1000,20000] [--pool-size N]
    python -m bench.firstindex.bench_parse --languages 3200 [--pool-size N]

Each size runs in a fresh subprocess (so one run's peak cannot hide another's) on a
repository from ``bench.synth``. Prints the parent peak RSS ratio (target <= 1.3 from the
smallest to the largest size) and throughput per core (target >= 100 files/s/core).

``--languages N`` parses a repository of N files in all sixteen languages
(``bench.synth.langs``) in the pool (files/s per core over the pool, target >= 100), then
extracts each language's files again in one process on one core: files/s per language.
Besides wall-clock files/s per core it prints files per CPU-second of the parent and the
pool children together, which a machine shared with other work does not halve.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness.records import emit


def run_one(n_files: int, pool_size: int) -> dict[str, float]:
    from bench.synth import generate
    from semgraph.config import load_settings
    from semgraph.indexer.parse import parse_repository
    from semgraph.memory import rss_bytes

    with tempfile.TemporaryDirectory(prefix="semgraph-bench-") as tmp:
        repo = generate(Path(tmp) / "repo", n_files, seed=n_files)
        settings = load_settings(state_dir=tmp, pool_size=pool_size)
        rss_start = rss_bytes()
        stats = parse_repository(settings, repo, Path(tmp) / "spill" / "bench.spill")
        return {
            "files": stats.files_indexed,
            "skipped": stats.files_skipped,
            "failed": len(stats.parse_failures),
            "bytes": stats.bytes_parsed,
            "seconds": stats.duration_s,
            "pool_size": stats.pool_size,
            "parent_rss_start": rss_start,
            "parent_peak_rss": stats.parent_peak_rss_bytes,
            "child_peak_rss": stats.child_peak_rss_bytes,
            "spill_bytes": stats.spill_bytes,
        }


def _cpu_s() -> float:
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_languages(n_files: int, pool_size: int) -> dict[str, Any]:
    from bench.synth.langs import EXT, LANGUAGES, generate_languages
    from semgraph.config import load_settings
    from semgraph.indexer.extract import ExtractOptions, extract_file
    from semgraph.indexer.parse import parse_repository

    with tempfile.TemporaryDirectory(prefix="semgraph-bench-") as tmp:
        repo = generate_languages(Path(tmp) / "repo", n_files, seed=n_files)
        settings = load_settings(state_dir=tmp, pool_size=pool_size)
        cpu_before = _cpu_s()
        stats = parse_repository(settings, repo, Path(tmp) / "spill" / "bench.spill")
        cpu_s = _cpu_s() - cpu_before  # this process and its (ended) pool children
        per: dict[str, list[float]] = {}  # language -> [files, seconds, bytes, partial]
        options = ExtractOptions()
        paths = sorted(p for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts)
        for language in LANGUAGES:  # load each grammar and query before timing (as a warm child)
            warm = next(p for p in paths if p.suffix == f".{EXT[language]}")
            extract_file(str(warm.relative_to(repo)), warm.read_bytes(), options)
        for path in paths:
            data = path.read_bytes()
            start = time.perf_counter()
            facts = extract_file(str(path.relative_to(repo)), data, options)
            row = per.setdefault(facts.language, [0, 0.0, 0, 0])
            row[0] += 1
            row[1] += time.perf_counter() - start
            row[2] += len(data)
            row[3] += facts.parse_status != "ok"
        return {
            "files": stats.files_indexed,
            "failed": len(stats.parse_failures),
            "by_status": stats.files_by_status,
            "seconds": stats.duration_s,
            "cpu_s": cpu_s,
            "pool_size": stats.pool_size,
            "per_language": per,
        }


def report_languages(n_files: int, pool_size: int) -> None:
    command = [
        sys.executable,
        "-m",
        "bench.firstindex.bench_parse",
        "--one-languages",
        str(n_files),
    ]
    proc = subprocess.run(
        [*command, "--pool-size", str(pool_size)],
        capture_output=True,
        text=True,
        check=True,
    )
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    cores = min(max(r["pool_size"], 1), len(os.sched_getaffinity(0)))
    rate = r["files"] / r["seconds"]
    per_cpu = r["files"] / r["cpu_s"]  # what a core does when it is not shared
    print(
        f"{r['files']:>6} files, 16 languages: {rate:7.1f} files/s ({rate / cores:6.1f}/core "
        f"over {cores} cores), {per_cpu:6.1f} files per CPU-second (parent + pool), "
        f"{r['seconds']:.1f}s, failed {r['failed']}, {r['by_status']}"
    )
    emit(
        "parse.languages",
        files=r["files"],
        files_per_s=round(rate, 1),
        per_core=round(rate / cores, 1),
        cores=cores,
        files_per_cpu_s=round(per_cpu, 1),
        seconds=round(r["seconds"], 1),
        failed=r["failed"],
    )
    for language, (files, seconds, size, partial) in sorted(r["per_language"].items()):
        print(
            f"  {language:<11} {files:>5} files {files / seconds:8.1f} files/s on one core, "
            f"{size / seconds / 1e6:5.2f} MB/s, not ok {partial}"
        )
        emit(
            "parse.language",
            language=language,
            files=files,
            files_per_s=round(files / seconds, 1),
            mb_per_s=round(size / seconds / 1e6, 2),
            not_ok=partial,
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,20000")
    ap.add_argument("--pool-size", type=int, default=0)
    ap.add_argument("--languages", type=int, default=0, help="files of the 16-language repo")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--one-languages", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.pool_size)))
        return
    if args.one_languages:
        print(json.dumps(run_languages(args.one_languages, args.pool_size)))
        return
    if args.languages:
        report_languages(args.languages, args.pool_size)
        return
    cores = len(os.sched_getaffinity(0))
    results = {}
    for n in [int(s) for s in args.sizes.split(",")]:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.firstindex.bench_parse",
                "--one",
                str(n),
                "--pool-size",
                str(args.pool_size),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        results[n] = r
        workers = r["pool_size"] if r["pool_size"] > 1 else 1
        print(
            f"{n:>6} files: {r['files'] / r['seconds']:7.1f} files/s "
            f"({r['files'] / r['seconds'] / min(workers, cores):6.1f}/core over "
            f"{min(workers, cores)} cores), {r['bytes'] / r['seconds'] / 1e6:5.2f} MB/s, "
            f"parent peak RSS {r['parent_peak_rss'] / 2**20:6.1f} MiB, "
            f"child peak RSS {r['child_peak_rss'] / 2**20:6.1f} MiB, "
            f"{r['seconds']:.1f}s, failed {r['failed']}"
        )
        emit(
            "parse.size",
            files=n,
            files_per_s=round(r["files"] / r["seconds"], 1),
            per_core=round(r["files"] / r["seconds"] / min(workers, cores), 1),
            cores=min(workers, cores),
            mb_per_s=round(r["bytes"] / r["seconds"] / 1e6, 2),
            parent_peak_rss_mib=round(r["parent_peak_rss"] / 2**20, 1),
            child_peak_rss_mib=round(r["child_peak_rss"] / 2**20, 1),
            seconds=round(r["seconds"], 1),
            failed=r["failed"],
        )
    sizes = sorted(results)
    if len(sizes) >= 2:
        small, large = results[sizes[0]], results[sizes[-1]]
        ratio = large["parent_peak_rss"] / small["parent_peak_rss"]
        verdict = "OK" if ratio <= 1.3 else "OVER TARGET"
        print(
            f"parent peak RSS ratio {sizes[-1]}/{sizes[0]} files: {ratio:.3f} "
            f"(target <= 1.3: {verdict})"
        )


if __name__ == "__main__":
    main()
