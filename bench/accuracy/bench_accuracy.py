"""Call resolution against compiler-grade oracles (issue 14): semgraph's resolved call edges
on public repositories, compared with jedi's ``goto`` (Python) and ``callgraph -algo=vta``
(Go), call sites matched by (path, line, callee name).

    python -m bench.accuracy.bench_accuracy [--repos click,fzf] [--mirrors /work/.mirror]
        [--jobs 2] [--samples FILE]

Each repository (``REPOS``, pinned to a commit) is read from a local git mirror
(``MIRRORS/OWNER+NAME/repo``, as the ``fetch`` tool lays them out, else ``--mirrors``
pointing at a directory of clones), materialised at its commit, and run through semgraph's
own parse phase and resolver (``parse_repository`` + ``resolve``, as ``semgraph index`` does;
no graph publish and no embedding: the resolver's per-site result is read from its SQLite
file, the same rows the graph writer streams). The oracles (``bench.accuracy.accuracy_oracles``) are
installed from PyPI and the Go module proxy on first use and their answers cached per
commit. Scoring is ``bench.accuracy.accuracy_score``.

Prints per repository one ``accuracy.repo`` record (recall, recall counting ambiguous
candidates, precision in both views, wrong targets), one ``accuracy.tier`` per tier and one
``accuracy.misses`` (the oracle-resolved sites semgraph missed, by semgraph's state and the
receiver's shape); ``--samples FILE`` writes examples of every disagreement with their source
line, for the hand check kept in ``bench/accuracy/accuracy_verdicts.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.accuracy import accuracy_java as java
from bench.accuracy import accuracy_oracles as oracles
from bench.accuracy import accuracy_scip
from bench.accuracy.accuracy_score import (
    AMBIGUOUS,
    NONDEF,
    RESOLVED,
    Key,
    OracleSite,
    OurSite,
    Score,
    ratio,
    score,
)
from bench.harness.records import emit

AMBIGUOUS_TIER = "ambiguous"
NO_EDGE = "no edge"  # external, unresolved, or ambiguous over the cap: no row says which
SCIP_LANGUAGES = ("typescript", "javascript")  # scip-typescript (bench.accuracy.accuracy_scip)


@dataclass(frozen=True)
class Repo:
    name: str
    github: str  # owner/name
    commit: str
    language: str
    deps: tuple[str, ...] = ()  # Maven coordinates on the Java oracle's class path


GSON_DEPS = (  # gson's poms at the commit: its modules' libraries and tests' frameworks
    "junit:junit:4.13.2",
    "com.google.truth:truth:1.4.5",
    "com.google.truth.extensions:truth-proto-extension:1.4.5",
    "com.google.guava:guava:33.6.0-jre",
    "com.google.guava:guava-testlib:33.6.0-jre",
    "com.google.errorprone:error_prone_annotations:2.50.0",
    "javax.annotation:jsr250-api:1.0",
    "com.google.caliper:caliper:1.0-beta-3",
    "com.fasterxml.jackson.core:jackson-databind:2.22.1",
    "com.google.testparameterinjector:test-parameter-injector:1.22",
)
JSOUP_DEPS = (  # jsoup's pom at the commit
    "org.junit.jupiter:junit-jupiter:5.14.4",
    "com.google.code.gson:gson:2.14.0",
    "io.netty:netty-codec-http:4.2.17.Final",
    "io.netty:netty-handler:4.2.17.Final",
    "org.jspecify:jspecify:1.0.1",
    "com.google.re2j:re2j:1.8",
)


REPOS = [
    Repo("click", "pallets/click", "2c8cd3ac958a7eb316d67f2d316c27086c4c0369", "python"),
    Repo("flask", "pallets/flask", "2ac89889f4cc330eabd50f295dcef02828522c69", "python"),
    Repo("rich", "Textualize/rich", "42899d8a0a96b121a514516f4be9db44ff7aeaf3", "python"),
    Repo("fzf", "junegunn/fzf", "956562daaa82ddf55ea8f7aeab56883377b742c6", "go"),
    Repo("expr", "expr-lang/expr", "851b241a301f7c74646e65e4009c69cf290993a8", "go"),
    Repo("mux", "gorilla/mux", "db9d1d0073d27a0a2d9a8c1bc52aa0af4374d265", "go"),
    # scip-typescript's: got (MIT; TypeScript, ESM, ~90 files) and commander.js (MIT;
    # JavaScript, ESM with JSDoc types and a hand-written typings/index.d.ts, ~170 files)
    Repo("got", "sindresorhus/got", "d00d845a0b435365ec73ea5a1fca6e17ee677184", "typescript"),
    Repo("commander", "tj/commander.js", "ba6d13ddb4243e5913367734f8c159089ffe7834", "javascript"),
    # MIT; JavaScript, CommonJS (require / module.exports), ~140 files: a third repository
    Repo("express", "expressjs/express", "a3714473feb3d2908add734d340e7755fd85e0a3", "javascript"),
    # Apache-2.0
    Repo("gson", "google/gson", "9835b6f90192f79cdf5300c528fc6212455fb6c1", "java", GSON_DEPS),
    Repo(
        "jsoup", "jhy/jsoup", "46b620860af930eedc193a705eaf7cea5aec89a6", "java", JSOUP_DEPS
    ),  # MIT
]


def materialise(repo: Repo, mirrors: Path, work: Path) -> Path:
    """The repository's tree at its pinned commit under ``work`` (kept between runs)."""
    dest = work / f"{repo.name}-{repo.commit[:12]}"
    if (dest / ".semgraph-bench-complete").exists():
        return dest
    candidates = [mirrors / repo.github.replace("/", "+") / "repo", mirrors / repo.name]
    git_dir = next((c for c in candidates if c.exists()), None)
    if git_dir is None:
        raise SystemExit(f"{repo.name}: no mirror at {' or '.join(map(str, candidates))}")
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        [
            "git",
            f"--git-dir={git_dir / '.git' if (git_dir / '.git').exists() else git_dir}",
            "archive",
            repo.commit,
        ],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    (dest / ".semgraph-bench-complete").write_text(repo.commit)
    return dest


def index(root: Path, tmp: Path, key: str) -> Path:
    """semgraph's parse phase and resolver on ``root``: the resolver's SQLite file."""
    from semgraph.config import load_settings
    from semgraph.indexer.parse import parse_repository
    from semgraph.indexer.spill import SpillReader
    from semgraph.resolve.resolver import resolve

    settings = load_settings()
    parse_repository(settings, root, tmp / "spill")
    res = resolve(lambda: iter(SpillReader(tmp / "spill")), key, tmp / "resolve")
    path = res.path
    res.close()
    return path


def our_sites(db: Any, language: str, files: set[str] | None) -> tuple[dict[Key, OurSite], int]:
    """semgraph's call sites of ``language`` (in ``files`` when given) with their edges, and
    the number of edges that matched no site's callee."""
    sites: dict[Key, OurSite] = {}
    by_line: dict[tuple[str, int], list[Key]] = defaultdict(list)
    for path, line, callee, receiver in db.execute(
        "SELECT c.path, c.line, c.callee, c.receiver FROM calls_raw c JOIN files f "
        "ON f.path = c.path WHERE f.language = ? ORDER BY c.id",
        (language,),
    ):
        if files is not None and path not in files:
            continue
        key = (path, line, callee)
        if key not in sites:
            sites[key] = OurSite(NO_EDGE, receiver=receiver)
            by_line[(path, line)].append(key)
    stray = 0
    for path, line, dst, tier, name in db.execute(
        "SELECT s.path, e.line, e.dst_key, e.tier, d.name FROM call_edges e "
        "JOIN symbols s ON s.key = e.src_key JOIN symbols d ON d.key = e.dst_key"
    ):
        keys = by_line.get((path, line), [])
        named = [k for k in keys if k[2] == name]
        match = named[0] if named else (keys[0] if len(keys) == 1 else None)
        if match is None:
            stray += 1 if (files is None or path in files) and keys else 0
            continue
        site = sites[match]
        if tier == AMBIGUOUS_TIER:
            site.cls = AMBIGUOUS if site.cls != RESOLVED else RESOLVED
        else:
            site.cls, site.tier = RESOLVED, tier
        site.targets.add(dst)
    return sites, stray


def _records(repo: Repo, result: Score, extra: dict[str, Any]) -> None:
    total = result.all_tiers
    print(
        f"{repo.name} ({repo.language}): {result.internal:,} sites the oracle resolves in the "
        f"repository; recall {_r(result.recall)} ({_r(result.recall_ambiguous)} counting "
        f"ambiguous candidates); precision {_r(total.precision_in_repo)} over those sites, "
        f"{_r(total.precision_all)} over all sites; {total.counts['wrong']} wrong targets",
        flush=True,
    )
    emit(
        "accuracy.repo",
        repo=repo.name,
        language=repo.language,
        commit=repo.commit[:12],
        oracle_sites=dict(result.oracle),
        our_sites=dict(result.ours),
        internal_sites=result.internal,
        found=result.found,
        found_with_ambiguous=result.found_with_ambiguous,
        recall=ratio(result.recall),
        recall_ambiguous=ratio(result.recall_ambiguous),
        precision_in_repo=ratio(total.precision_in_repo),
        precision_all=ratio(total.precision_all),
        **{k: total.counts[k] for k in ("correct", "wrong", "unmatched")},
        false_edges=sum(total.counts[k] for k in ("false_external", "false_nondef", "false_none")),
        **{k: total.counts[k] for k in ("false_external", "false_nondef", "false_none")},
        **extra,
    )
    for tier, ts in sorted(result.tiers.items()):
        emit(
            "accuracy.tier",
            repo=repo.name,
            language=repo.language,
            tier=tier,
            **dict(sorted(ts.counts.items())),
            precision_in_repo=ratio(ts.precision_in_repo),
            precision_all=ratio(ts.precision_all),
            recall_share=ratio(ts.counts["correct"] / result.internal if result.internal else None),
        )
    emit(
        "accuracy.misses",
        repo=repo.name,
        language=repo.language,
        misses=dict(result.misses.most_common()),
    )


def declarations(truth: dict[Key, OracleSite], ours: dict[Key, OurSite]) -> dict[str, Any]:
    """The sites the oracle resolves only to a declaration (``nondef``), by the kind of their
    first one (``accuracy_scip.decl_kind``), with the resolved edges semgraph draws there; and
    of those whose declaration has implementations in the repository (``implemented_by``: a
    ``.d.ts`` declaration of in-repository code, an interface member classes implement), what
    semgraph has there, as a recall apart from the main one."""
    sites: Counter[str] = Counter()
    edges: Counter[str] = Counter()
    implemented: Counter[str] = Counter()
    for key, site in truth.items():
        if site.verdict != NONDEF:
            continue
        kind = accuracy_scip.decl_kind(site.nondef[0])
        sites[kind] += 1
        mine = ours.get(key)
        if mine is not None and mine.cls == RESOLVED:
            edges[f"{kind} / {mine.tier}"] += 1
        if not site.implemented_by:
            continue
        implemented["sites"] += 1
        right = mine is not None and bool(mine.targets & site.implemented_by)
        if mine is None:
            implemented["no call site"] += 1
        elif mine.cls in (RESOLVED, AMBIGUOUS):
            implemented[f"{mine.cls} {'to an implementation' if right else 'elsewhere'}"] += 1
        else:
            implemented["no edge"] += 1
    return {
        "sites": dict(sites.most_common()),
        "our_resolved_edges": dict(edges.most_common()),
        "with_implementations": dict(implemented.most_common()),
    }


def _r(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def run_one(repo: Repo, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    root = materialise(repo, args.mirrors, work)
    t0 = time.monotonic()
    if repo.language == "python":
        jsonl = oracles.jedi_sites(root, repo.name, repo.commit, args.jobs)
    elif repo.language in SCIP_LANGUAGES:
        dump = accuracy_scip.scip_dump(root, repo.name, repo.commit)
    elif repo.language == "java":
        jsonl = java.javac_sites(root, repo.name, repo.commit, repo.deps)
    else:
        edges, listed = oracles.callgraph_edges(root, repo.name, repo.commit)
    oracle_s = time.monotonic() - t0
    with tempfile.TemporaryDirectory(prefix="semgraph-bench-accuracy-") as tmp:
        t0 = time.monotonic()
        db_path = index(root, Path(tmp), repo.name)
        index_s = time.monotonic() - t0
        import sqlite3

        db = sqlite3.connect(db_path)
        # a module is no call's target: the oracle's local `var Router = ...` in test/Router.js
        # must not map to the module named Router that spans the line
        defs = oracles.Definitions(
            db.execute(
                "SELECT key, path, name, start_line, end_line FROM symbols WHERE kind != 'module'"
            )
        )
        files: set[str] | None
        extra: dict[str, Any] = {}
        if repo.language == "python":
            truth, files = oracles.read_jedi(jsonl, defs), None
        elif repo.language in SCIP_LANGUAGES:
            truth, files = accuracy_scip.read_scip(root, dump, defs, repo.language)
        elif repo.language == "java":
            with jsonl.open() as fh:
                read = java.read_javac(fh, defs)
            truth, files = read.sites, read.files
        else:
            truth, files = oracles.read_callgraph(root, edges, listed, defs)
        ours, stray = our_sites(db, repo.language, files)
        if repo.language == "java":
            lenient = score(java.any_overload(truth, defs.keys()), ours)
            extra = java.overload_fields(read, lenient)
        db.close()
    result = score(truth, ours)
    _records(
        repo,
        result,
        {
            "stray_edges": stray,
            "index_s": round(index_s, 1),
            "oracle_s": round(oracle_s, 1),
            **extra,
        },
    )
    if repo.language in SCIP_LANGUAGES:
        emit(
            "accuracy.declarations",
            repo=repo.name,
            language=repo.language,
            **declarations(truth, ours),
        )
    return {"repo": repo.name, "root": str(root), "examples": result.examples}


def _with_source(sample: dict[str, Any]) -> dict[str, Any]:
    root = Path(sample["root"])
    for rows in sample["examples"].values():
        for row in rows:
            path, _, line = row["site"].rpartition(":")
            try:
                row["source"] = (root / path).read_text().splitlines()[int(line) - 1].strip()
            except (OSError, IndexError, UnicodeDecodeError):
                row["source"] = None
    return sample


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repos", default="", help="comma-separated names (default: all)")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--jobs", type=int, default=2, help="jedi processes")
    parser.add_argument("--samples", type=Path, help="write disagreement examples here (JSON)")
    parser.add_argument("--work", type=Path, default=oracles.ORACLES / "repos")
    args = parser.parse_args()
    wanted = {s for s in args.repos.split(",") if s}
    unknown = wanted - {r.name for r in REPOS}
    if unknown:
        raise SystemExit(f"unknown repositories: {', '.join(sorted(unknown))}")
    print(f"# load {os.getloadavg()[0]:.2f} at start", flush=True)
    samples = []
    for repo in REPOS:
        if wanted and repo.name not in wanted:
            continue
        print(f"# {repo.name} ({repo.github} at {repo.commit[:12]})", flush=True)
        samples.append(run_one(repo, args, args.work))
    if args.samples:
        args.samples.write_text(json.dumps([_with_source(s) for s in samples], indent=1) + "\n")


if __name__ == "__main__":
    main()
