"""Full-resolve CPU time of three resolvers on one parsed model, measured side by side (issue 25).

    python -m bench.firstindex.bench_resolve [--repo sympy|self] [--rounds 2] [--check] [--profile]

The trees: ``pre-typed`` (commit 547efb1, the resolver before the typed receivers), ``today``
(commit 062ac70) and ``after`` (this working tree). Each commit's ``src/`` is taken from git
(``git archive`` into a temporary directory: a checkout of that tree, nothing else of the
repository changes). Each resolve runs in a fresh subprocess with that tree alone on
``PYTHONPATH`` and reports the CPU seconds (``time.process_time``) of ``resolve()`` only; the
trees run interleaved (pre, today, after, pre, today, after...). The model is parsed once per
distinct parser (the digest of ``indexer/`` and ``model.py``): 547efb1 parses without the typed
bindings, so it gets its own spill, parsed by its own parser; the other two share one.

``--check`` compares every result table of today's and this tree's resolution
(:func:`semgraph.resolve.compare.differences`) and fails on any difference. ``--profile``
adds a cProfile of today's and this tree's resolve (top entries by own time, on stderr; a
profiled run is not timed). Prints one JSON line per run, then the ratios.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

PRE_TYPED, TODAY = "547efb1", "062ac70"
SYMPY = ("sympy/sympy", "e950d313a932bc6cccbc95376b3821cd2f8b5af4")
HERE = Path(__file__).resolve().parents[2]
STATE = Path(os.environ.get("SEMGRAPH_BENCH_RESOLVE_DIR", "/var/tmp/semgraph-bench-resolve"))

# run in the child, with one tree's src/ alone on sys.path
_CHILD = r"""
import cProfile, io, json, pstats, resource, sys, time
from pathlib import Path
from semgraph.indexer.spill import SpillReader
try:
    from semgraph.resolve.resolver import resolve
except ImportError:  # before the resolver moved to resolve/ (issue 27)
    from semgraph.graph.resolve import resolve
spill, work, key, profile = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
prof = cProfile.Profile(time.process_time) if profile else None  # CPU time
t0, w0 = time.process_time(), time.perf_counter()
if prof: prof.enable()
res = resolve(lambda: iter(SpillReader(Path(spill))), key, work)
if prof: prof.disable()
cpu, wall = time.process_time() - t0, time.perf_counter() - w0
fields = ("call_counts", "tier_counts", "reason_counts", "import_counts", "inherits_counts",
          "files_by_language", "files_by_status", "skipped", "symbols", "ambiguous_cap")
out = {"cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "sqlite": str(res.path),
       "calls": res.total_calls, "resolved": res.resolved_calls,
       "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
       "state": {f: getattr(res, f) for f in fields if hasattr(res, f)}}
res.close()
if prof:
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(18)
    print(text.getvalue(), file=sys.stderr)
print(json.dumps(out))
"""


def _source(repo: str, work: Path) -> tuple[Path, str]:
    """The repository's tree at its commit (sympy from its mirror, or this repository's HEAD)."""
    if repo == "sympy":
        git_dir, commit = Path("/work/.mirror/sympy+sympy/repo"), SYMPY[1]
    else:
        git_dir = Path(
            subprocess.check_output(
                ["git", "-C", str(HERE), "rev-parse", "--git-dir"], text=True
            ).strip()
        ).resolve()
        commit = TODAY
    dest = STATE / f"src-{repo}-{commit[:12]}"
    if not (dest / ".complete").exists():
        dest.mkdir(parents=True, exist_ok=True)
        _archive(git_dir, commit, dest, [])
        (dest / ".complete").write_text(commit)
    return dest, commit


def _archive(git_dir: Path, commit: str, dest: Path, paths: list[str]) -> None:
    data = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", commit, *paths], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=data, check=True)


def _tree(commit: str | None, work: Path) -> Path:
    """``src/`` of a commit (a temporary checkout), or a copy of this working tree's."""
    dest = work / f"tree-{commit or 'working'}"
    if commit is None:
        shutil.copytree(HERE / "src", dest / "src", ignore=shutil.ignore_patterns("__pycache__"))
        return dest / "src"
    dest.mkdir()
    git_dir = subprocess.check_output(
        ["git", "-C", str(HERE), "rev-parse", "--git-common-dir"], text=True
    ).strip()
    _archive((HERE / git_dir).resolve(), commit, dest, ["src"])
    return dest / "src"


def _parser_digest(src: Path) -> str:
    h = hashlib.sha256()
    files = [*sorted((src / "semgraph/indexer").rglob("*")), src / "semgraph/model.py"]
    for path in files:
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(str(path.relative_to(src)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:12]


def _env(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1"}


def _spill(src: Path, root: Path, repo: str, commit: str) -> Path:
    """The model of ``root`` as ``src``'s parser makes it (parsed once per parser)."""
    spill = STATE / f"{repo}-{commit[:12]}-parser-{_parser_digest(src)}.spill"
    if not spill.exists():
        code = (
            "import sys; from pathlib import Path; from semgraph.config import load_settings;"
            "from semgraph.indexer.parse import parse_repository;"
            "parse_repository(load_settings(), Path(sys.argv[1]), Path(sys.argv[2]))"
        )
        tmp = spill.with_suffix(".tmp")
        subprocess.run([sys.executable, "-c", code, str(root), str(tmp)], env=_env(src), check=True)
        tmp.rename(spill)
    return spill


def _resolve(src: Path, spill: Path, work: Path, key: str, profile: bool) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(spill), str(work), key, "1" if profile else "0"],
        env=_env(src),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"resolve with {src} failed:\n{done.stderr[-3000:]}")
    if profile:
        print(done.stderr, file=sys.stderr, flush=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _open(out: dict[str, Any], key: str) -> Any:
    from semgraph.resolve.resolution import Resolution
    from semgraph.resolve.symtab import SymbolTable

    return Resolution(repo_key=key, table=SymbolTable(Path(out["sqlite"])), **out["state"])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repo", choices=("sympy", "self"), default="sympy")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--trees", default="pre-typed,today,after")
    args = parser.parse_args()

    from semgraph.resolve.compare import differences

    STATE.mkdir(parents=True, exist_ok=True)
    key = f"bench/{args.repo}"
    with tempfile.TemporaryDirectory(prefix="bench-resolve-", dir=STATE) as tmp:
        work = Path(tmp)
        root, commit = _source(args.repo, work)
        commits = {"pre-typed": PRE_TYPED, "today": TODAY, "after": None}
        names = args.trees.split(",")
        trees = {n: _tree(commits[n], work) for n in names}
        spills = {n: _spill(trees[n], root, args.repo, commit) for n in names}
        print(
            json.dumps(
                {
                    "repo": args.repo,
                    "commit": commit,
                    "load": os.getloadavg()[0],
                    "spills": {n: s.name for n, s in spills.items()},
                }
            ),
            flush=True,
        )
        cpu: dict[str, list[float]] = {n: [] for n in names}
        for r in range(args.rounds):
            last: dict[str, dict[str, Any]] = {}
            for n in names:
                out = _resolve(trees[n], spills[n], work / f"{n}-{r}", key, False)
                cpu[n].append(out["cpu_s"])
                last[n] = out
                print(
                    json.dumps(
                        {
                            "round": r,
                            "tree": n,
                            **{k: v for k, v in out.items() if k not in ("state", "sqlite")},
                        }
                    ),
                    flush=True,
                )
            if args.check and "today" in last and "after" in last:
                with _open(last["today"], key) as a, _open(last["after"], key) as b:
                    diff = differences(a, b)
                print(
                    json.dumps(
                        {
                            "round": r,
                            "check": "today == after",
                            "differences": len(diff),
                            "first": diff[:10],
                        }
                    ),
                    flush=True,
                )
                if diff:
                    raise SystemExit("today's and this tree's resolutions differ")
        print(json.dumps(_summary(args.repo, cpu)), flush=True)
        if args.profile:  # after the figures: a profiled run is slow and not timed
            for n in ("after", "today"):
                if n in trees:
                    print(f"# profile: {n}", file=sys.stderr, flush=True)
                    _resolve(trees[n], spills[n], work / f"{n}-profile", key, True)


def _summary(repo: str, cpu: dict[str, list[float]]) -> dict[str, Any]:
    best = {n: min(v) for n, v in cpu.items()}
    summary: dict[str, Any] = {
        "repo": repo,
        "cpu_s_min": best,
        "cpu_s_median": {n: statistics.median(v) for n, v in cpu.items()},
    }
    if "after" in best and "pre-typed" in best:
        summary["after_over_pre_typed"] = round(best["after"] / best["pre-typed"], 3)
        summary["target_after_over_pre_typed"] = 1.5
    if "after" in best and "today" in best:
        summary["today_over_after"] = round(best["today"] / best["after"], 2)
    if "today" in best and "pre-typed" in best:
        summary["today_over_pre_typed"] = round(best["today"] / best["pre-typed"], 2)
    return summary


if __name__ == "__main__":
    main()
