"""Does a library's re-link cost what its change touched, or what its dependents hold?
(what it must be: proportional to the names that changed)

Usage::

    python -m bench.push.bench_relink_scale [--sizes 20,200,2000] [--renamed 2] [--rounds 3]

One library (``corelib``, ``--library`` functions re-exported by its package) and one
dependent per size in ``--sizes``: ``size`` calls into the library (as many distinct
functions as it has) and as many calls into the standard library (external sites no indexed
repository provides: the dependent's other sites). The library then renames ``--renamed``
of the functions no dependent calls and one that every dependent calls, publishes (a delta),
and :func:`~semgraph.xrepo.relink.relink_dependents` runs; each dependent's re-link
time is compared with a fresh full link of the same dependent in the same graph, the round
after (the baseline, measured in the same run). ``--rounds`` rename and restore the names
again; the lowest time of the rounds is kept for each. A re-link in proportion to the
change keeps its time flat while the dependents grow, and its ratio to the full link falls.

Prints one ``relink.scale`` record: per size, the sites the re-link read and re-linked, its
time and the full link's.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.accuracy.bench_crossrepo import ROOT, _publish, _repo
from bench.harness.records import emit


def _library(n: int, renamed: set[int]) -> dict[str, str]:
    names = [f"{'renamed_' if i in renamed else ''}f{i}" for i in range(n)]
    body = "".join(f"def {name}(x):\n    return x + {i}\n\n\n" for i, name in enumerate(names))
    return {
        "pyproject.toml": '[project]\nname = "corelib"\n',
        "src/corelib/__init__.py": f"from .funcs import {', '.join(names)}\n",
        "src/corelib/funcs.py": body,
    }


def _dependent(key: str, calls: int, n_lib: int) -> dict[str, str]:
    """``calls`` calls into corelib (f0, the one every dependent calls, then spread over
    the functions a rename leaves alone) and as many into the standard library."""
    picks = [0] + [n_lib // 2 + i % (n_lib // 2) for i in range(calls - 1)]
    files = {
        "pyproject.toml": f'[project]\nname = "{key}"\ndependencies = ["corelib>=1"]\n',
        f"{key}/__init__.py": "",
    }
    for first in range(0, calls, 500):  # 500 calls per file, 50 per function
        funcs = []
        for start in range(first, min(first + 500, calls), 50):
            body = "".join(
                f"    corelib.f{p}(1)\n    os.path.join('a', str({j}))\n"
                for j, p in enumerate(picks[start : start + 50])
            )
            funcs.append(f"def handler_{start}():\n{body}\n\n")
        files[f"{key}/m{first}.py"] = "import os\n\nimport corelib\n\n\n" + "".join(funcs)
    return files


def measure(graph: Any, settings: Any, tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    from semgraph.xrepo.link import link
    from semgraph.xrepo.relink import relink_dependents

    sizes = [int(s) for s in args.sizes.split(",")]
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    lib = tmp / "corelib"
    lib.mkdir()
    _publish(graph, settings, tmp, lib, "corelib", _repo(lib, _library(args.library, set())))
    relink_dependents(graph, "corelib")
    for size in sizes:
        key = f"svc{size}"
        root = tmp / key
        root.mkdir()
        _publish(graph, settings, tmp, root, key, _repo(root, _dependent(key, size, args.library)))
        print(f"indexed {key}: {size} calls into corelib", flush=True)
    relink_dependents(graph, "corelib")
    best: dict[str, dict[str, float]] = {f"svc{s}": {} for s in sizes}
    seen: dict[str, dict[str, int]] = {}
    for r in range(args.rounds * 2):  # rename, then restore: every round changes names
        renamed = set(range(1, 1 + args.renamed)) | {0} if r % 2 == 0 else set()
        _publish(graph, settings, tmp, lib, "corelib", _repo(lib, _library(args.library, renamed)))
        stats = relink_dependents(graph, "corelib")
        for key, s in stats.items():
            t = best[key]
            t["relink"] = min(t.get("relink", 1e9), s.duration_s)
            seen[key] = {"sites": s.sites, "rows": s.rows, "stamped": s.stamped}
        for key in sorted(stats):  # the baseline: a fresh full link of the same dependent
            began = time.monotonic()
            with graph.transaction("full link") as tx:
                link(tx, key)
            best[key]["full"] = min(best[key].get("full", 1e9), time.monotonic() - began)
        print(
            f"round {r + 1}/{args.rounds * 2}: "
            + ", ".join(
                f"{k} {best[k]['relink'] * 1000:.1f}/{best[k]['full'] * 1000:.1f} ms"
                for k in sorted(best, key=lambda k: int(k[3:]))
            ),
            flush=True,
        )
    rows = []
    for size in sizes:
        t, key = best[f"svc{size}"], f"svc{size}"
        rows.append(
            {
                "calls_into_library": size,
                "external_sites": 2 * size,
                **{f"relink_{k}": v for k, v in seen[key].items()},
                "relink_ms": round(t["relink"] * 1000, 2),
                "full_link_ms": round(t["full"] * 1000, 2),
                "ratio": round(t["relink"] / t["full"], 3),
            }
        )
        print(
            f"{size:>6} calls: re-link {rows[-1]['relink_ms']} ms "
            f"({rows[-1]['relink_sites']} sites), full link {rows[-1]['full_link_ms']} ms, "
            f"ratio {rows[-1]['ratio']}",
            flush=True,
        )
    return {
        "library_functions": args.library,
        "renamed": args.renamed + 1,
        "rounds": args.rounds,
        "sizes": rows,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sizes", default="20,200,2000")
    p.add_argument("--library", type=int, default=400)
    p.add_argument("--renamed", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))
    from semgraph.config import load_settings
    from semgraph.db import connect_graph

    settings = load_settings()
    tmp = Path(tempfile.mkdtemp(prefix="semgraph-bench-relink-"))
    try:
        with connect_graph(settings) as graph:
            emit("relink.scale", **measure(graph, settings, tmp, args))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
