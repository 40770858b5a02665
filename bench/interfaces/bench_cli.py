"""How fast the command line answers (issue 27): process wall time of whole ``semgraph``
invocations, median of ``--repeats`` runs, against ``python -c pass`` measured in the same
run, interleaved (one round runs every command once), after one untimed run of each (its
bytecode cached, as an installed command has it).

    python -m bench.interfaces.bench_cli [--repeats 10] [--before SRC] [--repo PATH]

``--before SRC`` also runs each command with another checkout's ``src`` first on
``PYTHONPATH`` (an older commit, for the before/after table), interleaved with this one.
The graph and queue commands talk to the stack of the current settings (``semgraph services
up``); ``--repo PATH`` also times ``semgraph index PATH`` of an unchanged commit (indexed once
first, not timed): the no-op job end to end from the command line.

Prints one ``cli.command`` record per command and variant (median, min, max wall seconds and
median child CPU seconds), and a ``cli.summary`` record with the baseline.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.harness.records import emit

SRC = Path(__file__).resolve().parents[2] / "src"
REPO = "{repo}"  # in an argv: the variant's own copy of --repo
TARGETS = {"help": 0.3, "group_help": 0.3, "callers": 1.0, "jobs_list": 1.0, "index_noop": 1.5}


def commands(repo: Path | None) -> list[tuple[str, list[str]]]:
    out = [
        ("help", ["--help"]),
        ("group_help", ["graph", "--help"]),
        ("jobs_help", ["jobs", "--help"]),
        ("callers", ["graph", "callers", "parse_repository"]),
        ("jobs_list", ["jobs", "list"]),
    ]
    if repo is not None:
        out.append(("index_noop", ["index", REPO]))
    return out


def run_once(argv: list[str], src: Path | None) -> tuple[float, float, int]:
    """Wall and CPU seconds of one process, and its exit status."""
    env = dict(os.environ)
    # an installed semgraph caches its bytecode on first import; a shell that forbids it
    # (PYTHONDONTWRITEBYTECODE) would time compiling every changed module on every run
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src is not None:
        env["PYTHONPATH"] = f"{src}{os.pathsep}{env.get('PYTHONPATH', '')}"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, check=False, timeout=600)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode


def summarise(runs: list[tuple[float, float, int]]) -> dict[str, object]:
    walls = [r[0] for r in runs]
    return {
        "median_s": round(statistics.median(walls), 3),
        "min_s": round(min(walls), 3),
        "max_s": round(max(walls), 3),
        "cpu_median_s": round(statistics.median(r[1] for r in runs), 3),
        "exit_codes": sorted({r[2] for r in runs}),
    }


def variant_repos(repo: Path | None, variants: list[str]) -> dict[str, str]:
    """Each variant's copy of ``repo`` (``now``: ``repo`` itself). The versions' index
    fingerprints differ, so on one repository each would reindex what the other published,
    and neither run would be a no-op."""
    repos: dict[str, str] = {}
    if repo is None:
        return repos
    for variant in variants:
        copy = repo.resolve()
        if variant != "now":
            copy = copy.with_name(f"{copy.name}-{variant}")
            if not copy.exists():
                subprocess.run(["git", "clone", "-q", str(repo), str(copy)], check=True)
        repos[variant] = str(copy)
    return repos


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--before", type=Path, help="another checkout's src directory")
    parser.add_argument("--repo", type=Path, help="time a no-op `semgraph index` of this repo")
    args = parser.parse_args()
    variants: list[tuple[str, Path | None]] = [("now", SRC)]
    if args.before is not None:
        variants.insert(0, ("before", args.before.resolve()))
    cmds = commands(args.repo)
    repos = variant_repos(args.repo, [v for v, _ in variants])

    def argv_of(argv: list[str], variant: str) -> list[str]:
        return [
            sys.executable,
            "-m",
            "semgraph.cli",
            *(repos.get(variant, a) if a == REPO else a for a in argv),
        ]

    if args.repo is not None:  # the first index is not what is timed
        for variant, src in variants:
            run_once(argv_of(["index", REPO], variant), src)
    for _label, argv in cmds:  # untimed: each variant's bytecode cached, as after an install
        for variant, src in variants:
            run_once(argv_of(argv, variant), src)
    results: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
    baseline: list[tuple[float, float, int]] = []
    for round_no in range(args.repeats):
        baseline.append(run_once([sys.executable, "-c", "pass"], None))
        for label, argv in cmds:
            for variant, src in variants:
                results.setdefault((label, variant), []).append(
                    run_once(argv_of(argv, variant), src)
                )
        print(f"# round {round_no + 1}/{args.repeats} done", file=sys.stderr, flush=True)
    base = statistics.median(r[0] for r in baseline)
    for (label, variant), runs in results.items():
        fields = summarise(runs)
        emit(
            "cli.command",
            command=label,
            variant=variant,
            target_s=TARGETS.get(label),
            **fields,
            over_baseline_s=round(float(str(fields["median_s"])) - base, 3),
        )
    emit(
        "cli.summary",
        python_pass_median_s=round(base, 3),
        repeats=args.repeats,
        load=round(os.getloadavg()[0], 2),
    )


if __name__ == "__main__":
    main()
