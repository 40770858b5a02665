"""Cross-repository links: accuracy against an oracle that sees both sides, the
cost of re-linking a library's dependents, ``callers --across-repos`` latency, and what the
link adds to a one-file push.

    python -m bench.accuracy.bench_crossrepo [--dependents 50] [--queries 200] [--jobs 2]

* accuracy: flask 3.0.3 with click 8.1.7 and itsdangerous 2.2.0 (the sdists of
  ``ops/xrepo-corpus.sh``), indexed as three repositories; the oracle is jedi
  (``bench/accuracy/accuracy_jedi.py``) over a workspace holding all three, each package's import
  root on its path. Every call site of flask that jedi resolves into click or itsdangerous
  is an oracle edge (site path, line, target path, target name); every ``XCALLS`` of flask
  is one of ours. Precision = ours the oracle has / ours; recall = oracle's we have / its.
  Where the two name different definitions for one site, Python's own attribute lookup
  decides (``bench/accuracy/crossrepo_runtime.py``): ``precision_decided`` / ``recall_decided``.
* re-link cost: a synthetic library (``--lib-functions``, re-exported by its package) and
  ``--dependents`` dependents calling it; the library renames some functions and publishes
  (a delta), and ``relink_dependents`` runs: time, sites re-linked, link rows (deleted and
  created) and commit stamps per dependent; the baseline is a fresh full link of every
  dependent, in the same run.
* query: ``callers --across-repos`` at depth 1 on the library's functions over that graph
  (``--dependents`` + 1 repositories), p50/p95; the baseline is ``callers`` inside the one
  repository, same names, same run.
* one-file push: a delta publish of flask after a one-file change, with the link's share of
  the transaction (the package edges and the link of the changed sites).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.harness.records import emit

ROOT = Path(__file__).resolve().parents[2]


def scored(ours: set[Any], oracle: set[Any], false: int = 20) -> dict[str, Any]:
    """Our edges against an oracle's (comparable tuples): counts, precision, recall, and
    the first ``false`` edges the oracle does not have."""
    hit = ours & oracle
    return {
        "ours": len(ours),
        "oracle": len(oracle),
        "agreed": len(hit),
        "precision": round(len(hit) / len(ours), 4) if ours else 0.0,
        "recall": round(len(hit) / len(oracle), 4) if oracle else 0.0,
        "false": sorted(map(list, ours - oracle))[:false],
    }


def said(label: str, result: dict[str, Any]) -> str:
    """The line a bench prints for a :func:`scored` result."""
    counts = f"{result['agreed']} agreed, {result['ours']} ours, {result['oracle']} oracle"
    return (
        f"{label} accuracy: precision {result['precision']}, recall {result['recall']} ({counts})"
    )


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def _publish(graph: Any, settings: Any, work: Path, root: Path, name: str, commit: str) -> Any:
    from semgraph.graph.writer import GraphWriter, RepoInfo
    from semgraph.indexer.manifests_read import read_identity
    from semgraph.indexer.parse import parse_repository
    from semgraph.indexer.spill import SpillReader
    from semgraph.resolve.resolver import resolve

    spill_path = work / f"{name}-{commit}.spill"
    parse_repository(settings.model_copy(update={"pool_size": 1}), root, spill_path)
    spill = SpillReader(spill_path)
    info = RepoInfo(name, str(root), "main", commit, read_identity(root))
    with resolve(lambda: iter(spill), name, work / f"{name}-{commit}-res") as res:
        return GraphWriter(graph, settings).publish(
            info, res, run_id=f"{name}-{commit}", fingerprint="bench", now=time.time()
        )


def _git(root: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@x.invalid",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@x.invalid",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return done.stdout.decode().strip()


def _repo(root: Path, files: dict[str, str]) -> str:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if not (root / ".git").exists():
        _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "c", "--allow-empty")
    return _git(root, "rev-parse", "HEAD")


# -- accuracy -----------------------------------------------------------------------------


def index_corpus(
    graph: Any, settings: Any, tmp: Path, names: Sequence[str]
) -> tuple[dict[str, Path], float]:
    """An empty graph, then each package of the fetched corpus checked out under ``tmp/ws``
    and published in turn, its dependents re-linked after it as the reindex job does: the
    checkouts by name, and the seconds it took."""
    from tests.integration.xrepo_corpus import checkout, corpus

    from semgraph.xrepo.relink import relink_dependents

    cache = corpus()
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    roots: dict[str, Path] = {}
    began = time.monotonic()
    for name in names:
        root, sha = checkout(cache, name, tmp / "ws")
        roots[name] = root
        _publish(graph, settings, tmp, root, name, sha)
        relink_dependents(graph, name)
    return roots, time.monotonic() - began


def accuracy(graph: Any, settings: Any, tmp: Path, jobs: int) -> dict[str, Any]:
    from bench.accuracy.accuracy_oracles import JEDI_SCRIPT, ensure_jedi
    from bench.accuracy.crossrepo_runtime import adjudicate

    ws = tmp / "ws"
    roots, _ = index_corpus(graph, settings, tmp, ["flask", "click", "itsdangerous"])
    shutil.rmtree(ws / "unpack", ignore_errors=True)
    ours = {
        (f"flask/{r['sp']}", r["line"], f"{r['repo']}/{r['tp']}", r["name"])
        for r in graph.query(
            "xcalls",
            "MATCH (a:Symbol {repo: 'flask'})-[e:XCALLS]->(b:Symbol) RETURN a.path AS sp, "
            "e.line AS line, b.repo AS repo, b.path AS tp, b.name AS name",
        )
    }
    out = tmp / "jedi.jsonl"
    env = {
        **os.environ,
        "JEDI_EXTRA_PATHS": "flask/src:click/src:itsdangerous/src",
        "JEDI_ONLY_UNDER": "flask",  # the dependent's sites; jedi reads the others as needed
    }
    began = time.monotonic()
    cmd = [str(ensure_jedi()), str(JEDI_SCRIPT), str(ws), str(out), "--jobs", str(jobs)]
    subprocess.run(cmd, check=True, env=env)
    oracle_s = time.monotonic() - began
    oracle, answered = set(), set()
    for line in out.read_text().splitlines():
        row = json.loads(line)
        if not row["path"].startswith("flask/"):
            continue
        if row["targets"] or row["external"]:
            answered.add((row["path"], row["line"]))
        for t in row["targets"]:
            if t["path"].startswith(("click/", "itsdangerous/")):
                oracle.add((row["path"], row["line"], t["path"], t["name"]))
    unanswered = {e for e in ours if (e[0], e[1]) not in answered}
    result = {
        "pairs": "flask 3.0.3 -> click 8.1.7, itsdangerous 2.2.0",
        **scored(ours, oracle, false=10),
        "ours_unanswered_by_oracle": len(unanswered),
        "oracle_s": round(oracle_s, 1),
        "missed": sorted(map(list, oracle - ours))[:60],
    }
    libraries = {k: v for k, v in roots.items() if k != "flask"}
    result |= adjudicate(graph, ours, oracle, libraries)  # disagreements, decided at run time
    print(
        f"{said('python', result)}; "
        f"{len(result['decided'])} disagreements decided at run time: precision "
        f"{result['precision_decided']}, recall {result['recall_decided']}",
        flush=True,
    )
    return result


# -- re-link cost and query latency --------------------------------------------------------


def _library(n: int, renamed: int = 0) -> dict[str, str]:
    body = "".join(
        f"def {'renamed_' if i < renamed else ''}f{i}(x):\n    return x + {i}\n\n\n"
        for i in range(n)
    )
    names = ", ".join(f"{'renamed_' if i < renamed else ''}f{i}" for i in range(n))
    return {
        "pyproject.toml": '[project]\nname = "corelib"\n',
        "src/corelib/__init__.py": f"from .funcs import {names}\n",
        "src/corelib/funcs.py": body,
    }


def _dependent(i: int, n_lib: int, calls: int, seed: int) -> dict[str, str]:
    rnd = random.Random(seed + i)
    picks = rnd.sample(range(n_lib), calls)
    lines = "".join(f"    corelib.f{p}(1)\n" for p in picks)
    return {
        "pyproject.toml": f'[project]\nname = "svc{i}"\ndependencies = ["corelib>=1"]\n',
        f"svc{i}/__init__.py": "",
        f"svc{i}/main.py": f"import corelib\n\n\ndef handler():\n{lines}",
        f"svc{i}/util.py": "def local():\n    return 1\n",
    }


def relink_and_query(
    graph: Any, settings: Any, tmp: Path, dependents: int, queries: int, seed: int
) -> dict[str, Any]:
    from semgraph.graph.reader import GraphReader
    from semgraph.xrepo.link import link
    from semgraph.xrepo.relink import relink_dependents

    n_lib, calls, renamed = 200, 20, 10
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    lib = tmp / "corelib"
    lib.mkdir()
    _publish(graph, settings, tmp, lib, "corelib", _repo(lib, _library(n_lib)))
    relink_dependents(graph, "corelib")  # as the job does after every publish (none yet)
    began = time.monotonic()
    for i in range(dependents):
        root = tmp / f"svc{i}"
        root.mkdir()
        _publish(
            graph, settings, tmp, root, f"svc{i}", _repo(root, _dependent(i, n_lib, calls, seed))
        )
        if (i + 1) % 10 == 0:
            print(
                f"indexed {i + 1}/{dependents} dependents ({time.monotonic() - began:.0f} s)",
                flush=True,
            )
    edges = graph.query("n", "MATCH ()-[e:XCALLS]->() RETURN count(e) AS n")[0]["n"]
    # the library renames `renamed` functions and publishes; its dependents are re-linked
    _publish(graph, settings, tmp, lib, "corelib", _repo(lib, _library(n_lib, renamed)))
    began = time.monotonic()
    stats = relink_dependents(graph, "corelib")
    relink_s = time.monotonic() - began
    per = [s.duration_s for s in stats.values()]
    rows = [s.rows for s in stats.values()]
    # baseline: a fresh full link of every dependent (all its sites), same graph
    full = []
    for key in sorted(stats):
        t = time.monotonic()
        with graph.transaction("full link") as tx:
            link(tx, key)
        full.append(time.monotonic() - t)
    relink = {
        "dependents": len(stats),
        "library_functions": n_lib,
        "renamed": renamed,
        "edges_before": edges,
        "relink_total_s": round(relink_s, 3),
        "per_dependent_ms_mean": round(statistics.mean(per) * 1000, 2),
        "per_dependent_ms_p95": round(_pct(per, 95) * 1000, 2),
        "rows_per_dependent_mean": round(statistics.mean(rows), 1),
        "rows_per_dependent_max": max(rows),
        "sites_per_dependent_mean": round(statistics.mean(s.sites for s in stats.values()), 1),
        "stamped_per_dependent_mean": round(statistics.mean(s.stamped for s in stats.values()), 1),
        "full_link_ms_mean": round(statistics.mean(full) * 1000, 2),
    }
    print(
        f"relink: {len(stats)} dependents in {relink_s:.2f} s, "
        f"{relink['per_dependent_ms_mean']} ms, {relink['sites_per_dependent_mean']} sites, "
        f"{relink['rows_per_dependent_mean']} link rows and "
        f"{relink['stamped_per_dependent_mean']} commit stamps each",
        flush=True,
    )
    reader = GraphReader(graph)
    rnd = random.Random(seed)
    names = [f"corelib.funcs.f{rnd.randrange(renamed, n_lib)}" for _ in range(queries)]
    timings: dict[str, list[float]] = {"across": [], "inside": []}
    for name in names[:10]:  # warm-up: the server's plan cache, the driver's pool
        reader.callers(name, "corelib", depth=1, limit=200, across_repos=True)
        reader.callers(name, "corelib", depth=1, limit=200)
    for name in names:
        for kind, across in (("inside", False), ("across", True)):
            t = time.perf_counter()
            answer = reader.callers(name, "corelib", depth=1, limit=200, across_repos=across)
            timings[kind].append(time.perf_counter() - t)
            assert answer.matches, name
    query = {
        "repositories": dependents + 1,
        "queries": queries,
        "across_p50_ms": round(_pct(timings["across"], 50) * 1000, 2),
        "across_p95_ms": round(_pct(timings["across"], 95) * 1000, 2),
        "inside_p50_ms": round(_pct(timings["inside"], 50) * 1000, 2),
        "inside_p95_ms": round(_pct(timings["inside"], 95) * 1000, 2),
    }
    print(
        f"callers --across-repos: p95 {query['across_p95_ms']} ms over {dependents + 1} "
        f"repositories (inside one: {query['inside_p95_ms']} ms)",
        flush=True,
    )
    return {"relink": relink, "query": query}


def one_file_push(graph: Any, settings: Any, tmp: Path) -> dict[str, Any]:
    """A one-file change of flask, published as a delta, with click and itsdangerous live."""
    root = tmp / "ws" / "flask"
    helpers = root / "src" / "flask" / "helpers.py"
    out = []
    for n in range(3):
        helpers.write_text(helpers.read_text() + f"\n\ndef _bench_added_{n}():\n    return {n}\n")
        sha = _repo(root, {})
        stats = _publish(graph, settings, tmp, root, "flask", sha)
        out.append((stats.tx_duration_s, stats.xrepo_s, stats.mode, stats.xrepo.get("sites", 0)))
    tx = [o[0] for o in out]
    link_s = [o[1] for o in out]
    result = {
        "modes": sorted({o[2] for o in out}),
        "tx_s_median": round(statistics.median(tx), 3),
        "link_s_median": round(statistics.median(link_s), 4),
        "link_share": round(statistics.median(link_s) / statistics.median(tx), 3),
        "sites_relinked": [o[3] for o in out],
    }
    print(
        f"one-file push of flask: publish {result['tx_s_median']} s, of which the link "
        f"{result['link_s_median']} s",
        flush=True,
    )
    return result


def run_accuracy(
    prefix: str,
    kind: str,
    measure: Callable[[Any, Any, Path], dict[str, Any]],
    label: str | None = None,
) -> None:
    """Run one accuracy measure (the npm, Maven, gem and Go benches) on the configured graph
    server in a scratch directory, print its :func:`said` line (``label``: the ecosystem;
    None: the measure prints its own) and its record ``kind``."""
    sys.path.insert(0, str(ROOT))  # tests.integration.xrepo_corpus: the fetched packages
    from semgraph.config import load_settings
    from semgraph.db import connect_graph

    settings = load_settings()
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        with connect_graph(settings) as graph:
            record = measure(graph, settings, tmp)
            if label is not None:
                print(said(label, record), flush=True)
            emit(kind, **record)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dependents", type=int, default=50)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=30)
    p.add_argument("--skip-accuracy", action="store_true")
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))  # tests.integration.xrepo_corpus: the fetched packages
    from semgraph.config import load_settings
    from semgraph.db import connect_graph

    settings = load_settings()
    tmp = Path(tempfile.mkdtemp(prefix="semgraph-bench-xrepo-"))
    try:
        with connect_graph(settings) as graph:
            if not args.skip_accuracy:
                emit("crossrepo.accuracy", **accuracy(graph, settings, tmp, args.jobs))
                emit("crossrepo.push", **one_file_push(graph, settings, tmp))
            found = relink_and_query(graph, settings, tmp, args.dependents, args.queries, args.seed)
            emit("crossrepo.relink", **found["relink"])
            emit("crossrepo.query", **found["query"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
