"""Cross-repository links for npm packages against the TypeScript compiler.

    python -m bench.accuracy.bench_crossrepo_js

The corpus: :data:`PACKAGES`, published npm tarballs (fetched once into the cache of
``ops/xrepo-corpus.sh``) that import one another: ora and the packages it imports,
boxen's, find-up's chain. Each is indexed as a repository (its ``.d.ts`` files removed, so
that both sides read the same JavaScript) and linked to the others as the reindex job does.

The oracle is TypeScript's language service (``bench/accuracy/ts_definitions.cjs``, TypeScript
:data:`TYPESCRIPT` from npm), ``allowJs``, over a workspace where each package's
dependencies are linked under its ``node_modules``: "go to definition" at the callee of
every call and ``new`` of every package. An oracle edge is (site path, line, target path,
target name) with the target in another package of the corpus (``new Cls()``: TypeScript
names the constructor, ``Cls`` here); ours are the ``XCALLS`` with the same four fields.
Precision = ours the oracle has / ours; recall = the oracle's we have / its.
``recall_linkable`` counts only the oracle edges whose target is a definition of the
provider's graph (a property assigned to an object, ``cliCursor.show = () => ...``, or an
anonymous ``module.exports = function``, is none: no link can name it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import time
from pathlib import Path
from typing import Any

from bench.accuracy.accuracy_oracles import ORACLES, _marked

ROOT = Path(__file__).resolve().parents[2]
TYPESCRIPT = "typescript@5.4.5"
PACKAGES = [
    "ora@6.3.1",
    "chalk@5.3.0",
    "log-symbols@5.1.0",
    "is-unicode-supported@1.3.0",
    "strip-ansi@7.1.0",
    "ansi-regex@6.0.1",
    "cli-cursor@4.0.0",
    "restore-cursor@4.0.0",
    "onetime@6.0.0",
    "mimic-fn@4.0.0",
    "signal-exit@3.0.7",
    "cli-spinners@2.9.0",
    "is-interactive@2.0.0",
    "stdin-discarder@0.1.0",
    "boxen@7.1.1",
    "camelcase@7.0.1",
    "widest-line@4.0.1",
    "cli-boxes@3.0.0",
    "string-width@5.1.2",
    "emoji-regex@9.2.2",
    "eastasianwidth@0.2.0",
    "wrap-ansi@8.1.0",
    "ansi-styles@6.2.1",
    "find-up@6.3.0",
    "locate-path@7.2.0",
    "p-locate@6.0.0",
    "p-limit@4.0.0",
    "yocto-queue@1.0.0",
    "path-exists@5.0.0",
]


def _split(spec: str) -> tuple[str, str]:
    name, _, version = spec.rpartition("@")
    return name, version


def fetch(cache: Path) -> dict[str, Path]:
    """name -> its tarball, fetched with ``npm pack`` when missing."""
    (cache / "npm").mkdir(parents=True, exist_ok=True)
    out = {}
    for spec in PACKAGES:
        name, version = _split(spec)
        tgz = cache / "npm" / f"{name}-{version}.tgz"
        if not tgz.exists():
            print(f"fetching {spec} from the npm registry", flush=True)
            subprocess.run(
                ["npm", "pack", "-q", "--silent", spec],
                cwd=cache / "npm",
                check=True,
                capture_output=True,
            )
        out[name] = tgz
    return out


def ensure_typescript() -> Path:
    """A directory whose ``node_modules`` holds :data:`TYPESCRIPT` (installed once)."""
    where = ORACLES / "typescript"
    marker = where / ".semgraph-bench-installed"
    if not _marked(marker, TYPESCRIPT):
        where.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "-q", "--no-save", "--prefix", str(where), TYPESCRIPT],
            check=True,
            capture_output=True,
        )
        marker.write_text(json.dumps(TYPESCRIPT))
    return where


def _unpack(tgz: Path, dest: Path) -> None:
    with tarfile.open(tgz) as tar:
        tar.extractall(dest.parent / f".unpack-{dest.name}", filter="data")
    shutil.move(str(dest.parent / f".unpack-{dest.name}" / "package"), dest)
    shutil.rmtree(dest.parent / f".unpack-{dest.name}")
    for d_ts in [*dest.rglob("*.d.ts"), *dest.rglob("*.d.mts"), *dest.rglob("*.d.cts")]:
        d_ts.unlink()


def accuracy(graph: Any, settings: Any, tmp: Path) -> dict[str, Any]:
    from tests.integration.xrepo_corpus import corpus

    from bench.accuracy.bench_crossrepo import _publish, _repo
    from semgraph.xrepo.relink import relink_dependents

    tarballs = fetch(corpus())
    ws = tmp / "ws"
    ws.mkdir()
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    deps: dict[str, list[str]] = {}
    began = time.monotonic()
    for name, tgz in tarballs.items():
        root = ws / name
        _unpack(tgz, root)
        manifest = json.loads((root / "package.json").read_text())
        deps[name] = sorted(d for d in manifest.get("dependencies") or {} if d in tarballs)
        _publish(graph, settings, tmp, root, name, _repo(root, {}))
        relink_dependents(graph, name)
    index_s = time.monotonic() - began
    for name, found in deps.items():  # after indexing: node_modules is never indexed
        for dep in found:
            link = ws / name / "node_modules" / dep
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(ws / dep, target_is_directory=True)
    ours = {
        (f"{r['repo']}/{r['sp']}", r["line"], f"{r['dst']}/{r['tp']}", r["name"])
        for r in graph.query(
            "xcalls",
            "MATCH (a:Symbol)-[e:XCALLS]->(b:Symbol) RETURN a.repo AS repo, a.path AS sp, "
            "e.line AS line, b.repo AS dst, b.path AS tp, b.name AS name",
        )
    }
    defined = {
        (f"{r['repo']}/{r['path']}", r["name"])
        for r in graph.query(
            "defs",
            "MATCH (s:Symbol) WHERE s.kind <> 'module' "
            "RETURN s.repo AS repo, s.path AS path, s.name AS name",
        )
    }
    dependents = sorted(n for n, found in deps.items() if found)
    out = tmp / "ts.jsonl"
    began = time.monotonic()
    script = ROOT / "bench" / "accuracy" / "ts_definitions.cjs"
    subprocess.run(
        ["node", str(script), str(ensure_typescript()), str(ws), str(out), *dependents], check=True
    )
    oracle_s = time.monotonic() - began
    oracle = set()
    for line in out.read_text().splitlines():
        row = json.loads(line)
        here = row["path"].split("/", 1)[0]
        for t in row["targets"]:
            there = t["path"].split("/", 1)[0]
            if there != here and there in tarballs and "node_modules" not in t["path"]:
                # ``new Cls()``: TypeScript names the constructor, the class is the callee
                name = t["container"] if t["name"] == "__constructor" else t["name"]
                oracle.add((row["path"], row["line"], t["path"], name))
    hit = ours & oracle
    linkable = {e for e in oracle if (e[2], e[3]) in defined}
    result = {
        "packages": len(tarballs),
        "dependents": len(dependents),
        "ours": len(ours),
        "oracle": len(oracle),
        "oracle_linkable": len(linkable),
        "agreed": len(hit),
        "precision": round(len(hit) / len(ours), 4) if ours else 0.0,
        "recall": round(len(hit) / len(oracle), 4) if oracle else 0.0,
        "recall_linkable": round(len(hit & linkable) / len(linkable), 4) if linkable else 0.0,
        "index_s": round(index_s, 1),
        "oracle_s": round(oracle_s, 1),
        "typescript": TYPESCRIPT,
        "false": sorted(map(list, ours - oracle))[:20],
        "missed_linkable": sorted(map(list, linkable - ours))[:40],
        "missed_other": sorted(map(list, oracle - linkable - ours))[:20],
    }
    print(
        f"npm accuracy: precision {result['precision']}, recall {result['recall']}, "
        f"recall over linkable targets {result['recall_linkable']} ({len(hit)} agreed, "
        f"{len(ours)} ours, {len(oracle)} oracle, {len(linkable)} linkable)",
        flush=True,
    )
    return result


def main() -> None:
    from bench.accuracy.bench_crossrepo import run_accuracy

    run_accuracy("semgraph-bench-xrepo-js-", "crossrepo.js_accuracy", accuracy)


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
