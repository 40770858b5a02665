"""Cross-repository links for Go modules against the Go type checker.

    python -m bench.accuracy.bench_crossrepo_go

Four published modules and the modules they import, from the Go module proxy, each indexed
as a repository and linked as the reindex job does: tablewriter 0.0.5 -> go-runewidth 0.0.9,
fatih/color 1.15.0 -> go-colorable 0.1.13 / go-isatty 0.0.17, testify 1.8.4 -> go-spew 1.1.1
/ go-difflib 1.0.0 / objx 0.5.0 / yaml.v3 3.0.1, go-multierror 1.1.1 -> errwrap 1.0.0 (the
versions each dependent's go.mod requires; go-spew and go-difflib predate go.mod, and are
indexed with the go.mod the module proxy serves for them, as the Go toolchain reads them). The
oracle is the Go type checker itself
(``bench/accuracy/go_calls``: golang.org/x/tools/go/packages and go/types over every package of the
dependent, its tests included): for every call whose callee is a function or method declared
in one of the indexed libraries, the call's file and line and the callee's file and name. An
edge is (dependent, path, line, library, target file, name); ours are the ``XCALLS`` with the
same fields. Precision = ours the oracle has / ours; recall = the oracle's we have / its. The
oracle also sees method calls on values of a library's types (``spewConfig.Sdump(...)``):
they count in the recall; ``recall_functions`` counts only calls of package-level functions.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GO = os.environ.get("GO", "/usr/local/go/bin/go")
#: repository name -> module@version; dependents first
MODULES = {
    "tablewriter": "github.com/olekukonko/tablewriter@v0.0.5",
    "color": "github.com/fatih/color@v1.15.0",
    "testify": "github.com/stretchr/testify@v1.8.4",
    "go-multierror": "github.com/hashicorp/go-multierror@v1.1.1",
    "go-runewidth": "github.com/mattn/go-runewidth@v0.0.9",
    "go-colorable": "github.com/mattn/go-colorable@v0.1.13",
    "go-isatty": "github.com/mattn/go-isatty@v0.0.17",
    "go-spew": "github.com/davecgh/go-spew@v1.1.1",
    "go-difflib": "github.com/pmezard/go-difflib@v1.0.0",
    "objx": "github.com/stretchr/objx@v0.5.0",
    "yaml.v3": "gopkg.in/yaml.v3@v3.0.1",
    "errwrap": "github.com/hashicorp/errwrap@v1.0.0",
}
DEPENDENTS = ("tablewriter", "color", "testify", "go-multierror")


def _env(cache: Path) -> dict[str, str]:
    """The Go tools' environment: the bench's module cache, the proxy for what it lacks, this
    toolchain (on PATH too: go/packages runs ``go list``)."""
    return {
        **os.environ,
        "GOMODCACHE": str(cache),
        "GOFLAGS": "-modcacherw -mod=mod",
        "GOTOOLCHAIN": "local",
        "GOWORK": "off",
        "PATH": f"{Path(GO).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }


def _go(args: list[str], cwd: Path, cache: Path) -> str:
    done = subprocess.run([GO, *args], cwd=cwd, env=_env(cache), check=True, capture_output=True)
    return done.stdout.decode()


def fetch(cache: Path) -> dict[str, Path]:
    """Every module in the bench's module cache (the Go module proxy, once), by name."""
    missing = [m for m in MODULES.values() if not _served_mod(cache, m).exists()]
    if missing:
        print(f"bench_crossrepo_go: downloading {len(missing)} modules", flush=True)
        _go(["mod", "download", *missing], ROOT / "bench" / "accuracy" / "go_calls", cache)
    return {name: cache / m for name, m in MODULES.items()}


def _served_mod(cache: Path, module: str) -> Path:
    """The go.mod the proxy served for ``module@version`` (synthesized for a module that
    predates go.mod: go-spew 1.1.1, go-difflib 1.0.0 have none in their tree)."""
    path, version = module.split("@")
    return cache / "cache" / "download" / path / "@v" / f"{version}.mod"


def oracle_tool(cache: Path, tmp: Path) -> Path:
    """``bench/accuracy/go_calls`` built (its module's requirements from the proxy, once)."""
    out = tmp / "go_calls"
    _go(["build", "-o", str(out), "."], ROOT / "bench" / "accuracy" / "go_calls", cache)
    return out


def accuracy(graph: Any, settings: Any, tmp: Path) -> dict[str, Any]:
    from bench.accuracy.bench_crossrepo import _publish, said, scored
    from semgraph.xrepo.relink import relink_dependents

    corpus = os.environ.get(
        "SEMGRAPH_XREPO_CORPUS", str(Path.home() / ".cache/semgraph/xrepo-corpus")
    )
    cache = Path(corpus) / "gobench"
    sources = fetch(cache)
    tool = oracle_tool(cache, tmp)
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    roots: dict[str, Path] = {}
    began = time.monotonic()
    for name in reversed(list(MODULES)):  # libraries first, as a fresh organisation would
        root = tmp / "ws" / name
        shutil.copytree(sources[name], root)
        for path in root.rglob("*"):
            path.chmod(path.stat().st_mode | 0o200)
        if not (root / "go.mod").exists():  # as the Go toolchain reads such a module
            shutil.copyfile(_served_mod(cache, MODULES[name]), root / "go.mod")
        roots[name] = root
        _publish(graph, settings, tmp, root, name, MODULES[name].split("@")[1])
        relink_dependents(graph, name)
    index_s = time.monotonic() - began
    libraries = {n: str(p) + "/" for n, p in sources.items() if n not in DEPENDENTS}
    ours = {
        (r["repo"], r["sp"], r["line"], r["lib"], r["tp"], r["name"])
        for r in graph.query(
            "xcalls",
            "MATCH (a:Symbol)-[e:XCALLS]->(b:Symbol) RETURN a.repo AS repo, a.path AS sp, "
            "e.line AS line, b.repo AS lib, b.path AS tp, b.name AS name",
        )
        if r["repo"] in DEPENDENTS and r["lib"] in libraries
    }
    began = time.monotonic()
    oracle: set[tuple[Any, ...]] = set()
    functions: set[tuple[Any, ...]] = set()
    other = 0
    for name in DEPENDENTS:
        out = _go_calls(tool, roots[name], cache)
        for row in out:
            lib = next((n for n, d in libraries.items() if row["target_file"].startswith(d)), None)
            if lib is None:
                other += row["target_file"].startswith(str(cache))  # another module's
                continue
            edge = (
                name,
                row["path"],
                row["line"],
                lib,
                row["target_file"][len(libraries[lib]) :],
                row["name"],
            )
            oracle.add(edge)
            if not row["receiver"]:
                functions.add(edge)
    oracle_s = time.monotonic() - began
    # a function defined once per platform (isatty_windows.go, isatty_others.go): we link
    # every variant, the type checker sees this platform's; `go list` says which files its
    # build (linux/amd64) compiles
    build = {(lib, f) for lib in {e[3] for e in ours} for f in _build_files(roots[lib], cache)}
    variants = {e for e in ours if (e[3], e[4]) not in build}
    in_build = ours - variants
    result = {
        "pairs": ", ".join(f"{d} -> ..." for d in DEPENDENTS),
        "modules": MODULES,
        **scored(ours, oracle),
        "precision_build": round(len(in_build & oracle) / len(in_build), 4) if in_build else 0.0,
        "ours_build": len(in_build),
        "variants": len(variants),
        "variants_agreed": len(variants & oracle),
        "recall_functions": round(len(ours & functions) / len(functions), 4) if functions else 0.0,
        "oracle_functions": len(functions),
        "oracle_into_other_modules": other,
        "per_dependent": {
            d: [len([e for e in s if e[0] == d]) for s in (ours, oracle, ours & oracle)]
            for d in DEPENDENTS
        },
        "index_s": round(index_s, 1),
        "oracle_s": round(oracle_s, 1),
        "missed": sorted(map(list, oracle - ours))[:40],
    }
    print(
        said("go", result) + f"; over our links into files of this platform's build: "
        f"precision {result['precision_build']} ({len(in_build)}; {len(variants)} links to "
        f"other platforms' variants); recall over package-level functions "
        f"{result['recall_functions']} ({len(functions)})",
        flush=True,
    )
    return result


def _build_files(root: Path, cache: Path) -> set[str]:
    """The files (relative to ``root``) that this platform's build compiles, every package."""
    each = "{{range .%s}}{{$d}}/{{.}}\n{{end}}"
    fmt = "{{$d := .Dir}}" + each % "GoFiles" + each % "CgoFiles"
    base = str(root.resolve()) + "/"
    lines = _go(["list", "-e", "-f", fmt, "./..."], root, cache).splitlines()
    return {line[len(base) :] for line in lines if line.startswith(base)}


def _go_calls(tool: Path, root: Path, cache: Path) -> list[dict[str, Any]]:
    """The oracle's calls of one dependent."""
    done = subprocess.run(
        [str(tool), "."], cwd=root, env=_env(cache), check=True, capture_output=True
    )
    return [json.loads(line) for line in done.stdout.decode().splitlines() if line.strip()]


if __name__ == "__main__":
    from bench.accuracy.bench_crossrepo import run_accuracy

    run_accuracy("semgraph-bench-xrepo-go-", "crossrepo.go_accuracy", accuracy)
