"""The phases of a one-file push (issue 25, item 4): every phase of the reindex job after one
file of a large synthetic repository changed, with the parse and staging phases split into
their steps, for the slow paths ("before") and the shortcuts ("after") in the same run.

    python -m bench.push.bench_pushphases --repo /var/tmp/pp/repo-20k --rounds 4

``--repo`` is a repository made by ``bench.synth.generate`` (the default, dense generator);
it is kept between invocations. When the stack named by ``SEMGRAPH_*`` has not indexed it yet,
its first index runs first (timed apart) with stand-in document vectors
(:class:`bench.synth.vectors.HashVectors`: embedding 20,000 dense files with the model on this
CPU takes hours); the rounds embed the changed file with the real model. Each round commits
one change to one existing Python file (a new function appended) and runs the product's job
in this process, once per variant, alternating (``before, after, before, after ...``), each
variant on a commit of its own. Variants set the shortcut settings:

* ``before``: ``parse_git_blob_ids=false`` (every file read for its blob id),
  ``spill_cached_frames=false`` (a cached result decompressed and compressed again into the
  spill), ``parse_cache_in_place=false`` (the cache written again whole),
  ``staging_filter_raw=false`` (the spill decoded whole for the staging index);
* ``after``: the defaults.

With ``--steps N`` it first measures, N times per variant, the parse phase alone on the
job's work tree from a copy of the job's parse cache (every file unchanged) and the staging
index's read of one file from each variant's spill.

Prints one table per variant (seconds per phase and step, median over the rounds), the job's
p50/p95, and the ratio after/before of each; JSON records ``pushphases.*``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.harness.records import emit

VARIANTS: dict[str, dict[str, Any]] = {
    "before": {
        "parse_git_blob_ids": False,
        "spill_cached_frames": False,
        "parse_cache_in_place": False,
        "staging_filter_raw": False,
    },
    "after": {},
}


def _job(settings: Any, graph: Any, embedder: Any, repo: Path) -> tuple[Any, float]:
    from semgraph.db import connect_search
    from semgraph.indexer.pipeline import Reindex
    from semgraph.indexer.request import ReindexRequest

    started = time.perf_counter()
    with contextlib.closing(connect_search(settings)) as es:
        job = Reindex(settings, graph, es, ReindexRequest(source=str(repo)), embedder=embedder)
        result = job.run()
    return result, time.perf_counter() - started


def _change(repo: Path, round_no: int, variant: str) -> str:
    """Append one function to one existing Python file and commit it; the file's path."""
    files = sorted(repo.glob("pkg*/sub*/mod_*.py"), key=lambda p: int(p.stem.split("_")[1]))
    target = files[(round_no * 7919) % len(files)]
    with open(target, "a") as fh:
        fh.write(
            f"\n\ndef pushed_{variant}_{round_no}(value, n):\n"
            f'    """Round {round_no} of the push benchmark ({variant})."""\n'
            f"    return value + n * {round_no}\n"
        )
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }
    for args in (["add", "-A"], ["commit", "-qm", f"push {variant} {round_no}"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return str(target.relative_to(repo))


def _steps(settings: Any, repo: Path, repeats: int, variants: list[str]) -> None:
    """The parse phase alone on the job's work tree (every file unchanged: the cost a push
    pays for the files it did not touch), from a copy of the job's parse cache, variants
    alternating; then the staging index's read of one changed file from each variant's spill."""
    import shutil
    import sqlite3
    import tempfile

    from semgraph.indexer.checkout import worktree_path
    from semgraph.indexer.parse import parse_repository
    from semgraph.indexer.parsecache import CACHE_FILE, ParseCache, cache_dir
    from semgraph.indexer.sources import repo_key_for
    from semgraph.indexer.spill import SpillReader
    from semgraph.indexer.staging import spill_facts

    key = repo_key_for(str(repo))
    tree = worktree_path(settings, key)
    with tempfile.TemporaryDirectory(prefix="semgraph-bench-steps-") as tmp:
        work = Path(tmp)
        shutil.copy(cache_dir(settings, key) / CACHE_FILE, work / CACHE_FILE)
        with sqlite3.connect(work / CACHE_FILE) as conn:
            fp = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()[0]
        spills: dict[str, Path] = {}
        for rep in range(repeats):
            for variant in variants:
                use = settings.model_copy(update=VARIANTS[variant])
                spill = spills[variant] = work / f"{variant}.spill"
                spill.unlink(missing_ok=True)
                load, t0 = _load(), time.perf_counter()
                with ParseCache(work, fp, in_place=use.parse_cache_in_place) as cache:
                    stats = parse_repository(use, tree, spill, cache=cache)
                    cache.commit()
                secs = time.perf_counter() - t0
                steps = {**stats.timings_s, "cache_commit": round(cache.commit_s, 4)}
                print(
                    f"parse only, {variant:<6} {secs:7.2f} s reused {stats.files_reused} "
                    f"load {load} {steps}",
                    flush=True,
                )
                emit(
                    "pushphases.parse",
                    variant=variant,
                    repeat=rep,
                    seconds=round(secs, 3),
                    reused=stats.files_reused,
                    spill_bytes=stats.spill_bytes,
                    load=load,
                    steps=steps,
                )
        one = {next(SpillReader(spills[variants[0]]).file_facts()).path}
        for rep in range(repeats):
            for variant in variants:
                raw = bool(settings.model_copy(update=VARIANTS[variant]).staging_filter_raw)
                load, t0 = _load(), time.perf_counter()
                got = list(spill_facts(spills[variant], one, filter_raw=raw))
                secs = time.perf_counter() - t0
                print(f"staging read of 1 file, {variant:<6} {secs:7.3f} s load {load}")
                emit(
                    "pushphases.staging_read",
                    variant=variant,
                    repeat=rep,
                    files=len(got),
                    seconds=round(secs, 4),
                    load=load,
                )


def _rows(result: Any, seconds: float) -> dict[str, float]:
    """The phase table of one job: phases, then the steps of parse and embed_index."""
    phases = dict(result.phases_s)
    parse = result.stats.get("parse", {}).get("timings_s", {})
    staging = result.stats.get("index_timings_s", {})
    index = result.stats.get("index", {})
    rows: dict[str, float] = {"job (wall)": seconds}
    for name, secs in phases.items():
        rows[name] = secs
        if name == "parse":
            for step, s in parse.items():
                rows[f"  parse.{step}"] = s
        if name == "embed_index":
            for step, s in staging.items():
                rows[f"  embed_index.{step}"] = s
            rows["  embed_index.load.embed"] = index.get("embed_seconds", 0.0)
            rows["  embed_index.load.bulk"] = index.get("bulk_seconds", 0.0)
    return rows


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _table(per_variant: dict[str, list[dict[str, float]]]) -> list[str]:
    names: list[str] = []
    for runs in per_variant.values():
        for row in runs:
            names += [n for n in row if n not in names]
    heads = list(per_variant)
    out = [f"{'phase (median s)':<30}" + "".join(f"{h:>10}" for h in heads) + "  after/before"]
    for name in names:
        med = {
            h: statistics.median([r.get(name, 0.0) for r in runs]) if runs else 0.0
            for h, runs in per_variant.items()
        }
        ratio = ""
        if "before" in med and "after" in med and med["before"] > 0:
            ratio = f"{med['after'] / med['before']:.3f}"
        out.append(f"{name:<30}" + "".join(f"{med[h]:10.3f}" for h in heads) + f"  {ratio}")
    return out


def _p95(xs: list[float]) -> float:
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--files", type=int, default=20000, help="generated when --repo is absent")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per variant")
    parser.add_argument("--variants", default="before,after")
    parser.add_argument("--synthetic-rounds", action="store_true", help="stand-in vectors too")
    parser.add_argument(
        "--steps", type=int, default=0, help="repeats of the parse-only and staging-read steps"
    )
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

    configure("INFO")  # the job's phase_start / phase_end lines show where a run is
    settings = load_settings()
    variants = [v for v in args.variants.split(",") if v]
    print(f"load at start: {_load()}", flush=True)
    if not (args.repo / ".git").is_dir():
        t0 = time.perf_counter()
        generate(args.repo, args.files, seed=11)
        print(f"generated {args.files} files in {time.perf_counter() - t0:.1f} s", flush=True)
    n_files = int(
        subprocess.run(
            ["git", "-C", str(args.repo), "ls-files"], capture_output=True, text=True, check=True
        ).stdout.count("\n")
    )
    if args.steps:  # needs the work tree and parse cache of an earlier job, not its index
        _steps(settings, args.repo, args.steps, variants)
    if not args.rounds:
        return
    with connect_graph(settings) as graph:
        graph.ensure_schema(SCHEMA)
        if GraphReader(graph).repository(repo_key_for(str(args.repo))) is None:
            print("first index (stand-in vectors) ...", flush=True)
            first, t_first = _job(settings, graph, HashVectors(settings), args.repo)
            print(f"first index {t_first:.1f} s {first.status} {dict(first.phases_s)}", flush=True)
            emit(
                "pushphases.first",
                files=n_files,
                seconds=round(t_first, 1),
                phases_s=dict(first.phases_s),
                load=_load(),
            )
        embedder: Embedder = HashVectors(settings) if args.synthetic_rounds else Embedder(settings)
        embedder.embed(["warm up"])  # the model loads outside the timed runs
        per_variant: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
        for round_no in range(args.rounds):
            for variant in variants:
                run_settings = settings.model_copy(update=VARIANTS[variant])
                path = _change(args.repo, round_no, variant)
                load = _load()
                result, secs = _job(run_settings, graph, embedder, args.repo)
                rows = _rows(result, secs)
                per_variant[variant].append(rows)
                print(
                    f"round {round_no} {variant:<6} {secs:6.2f} s {result.status} "
                    f"changed {path} load {load}",
                    flush=True,
                )
                emit(
                    "pushphases.round",
                    variant=variant,
                    round=round_no,
                    files=n_files,
                    seconds=round(secs, 3),
                    status=str(result.status),
                    load=load,
                    rows={k: round(v, 4) for k, v in rows.items()},
                )
    print(f"\n{n_files} files, {args.rounds} rounds per variant, load at end: {_load()}")
    for text in _table(per_variant):
        print(text)
    for variant, runs in per_variant.items():
        jobs = [r["job (wall)"] for r in runs]
        if jobs:
            print(f"{variant}: job p50 {statistics.median(jobs):.2f} s, p95 {_p95(jobs):.2f} s")
            emit(
                "pushphases.summary",
                variant=variant,
                files=n_files,
                rounds=len(jobs),
                p50_s=round(statistics.median(jobs), 3),
                p95_s=round(_p95(jobs), 3),
            )


if __name__ == "__main__":
    main()
