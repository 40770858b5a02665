"""The oracles of ``bench.accuracy.bench_accuracy``, installed from the registries and run on one
repository: jedi (PyPI, its own virtual environment) for Python, ``callgraph -algo=vta``
(golang.org/x/tools, built from the Go module proxy) for Go.

Both live under ``/var/tmp/semgraph-oracles`` (``SEMGRAPH_ORACLES_DIR``), never in
semgraph's venv or the repository; installing is idempotent (a marker records what was
installed). An oracle's answers depend only on the repository's commit and the oracle's
version, so they are cached there (``cache/NAME-COMMIT-ORACLE.*``) and a re-run of the
benchmark on changed semgraph code only re-indexes.

Reading an answer into ``bench.accuracy.accuracy_score`` sites needs semgraph's definitions (an
oracle target is a file and line; it becomes the innermost semgraph definition with that
name spanning the line) and, for Go, the call's expression: ``callgraph`` gives the byte
offset of a call's ``(``, which tree-sitter maps to the call node's first line and the
callee as written (semgraph records both the same way).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bench.accuracy.accuracy_score import Key, OracleSite

ORACLES = Path(os.environ.get("SEMGRAPH_ORACLES_DIR", "/var/tmp/semgraph-oracles"))
# pytest beside jedi: jedi's pytest plugin follows a test's fixture parameters only when it
# can infer the `pytest.fixture` decorator; without pytest in its environment it answered
# nothing for every fixture receiver (runner.invoke, app.test_client), and those sites were
# counted as false edges in the all-sites view (bench/accuracy/accuracy_verdicts.md)
JEDI_SPECS = ["jedi==0.20.1", "pytest==9.2.0"]
CALLGRAPH = "golang.org/x/tools/cmd/callgraph@v0.52.0"
GO = os.environ.get("SEMGRAPH_GO", "/usr/local/go/bin/go")
JEDI_SCRIPT = Path(__file__).with_name("accuracy_jedi.py")
CG_FORMAT = "\t".join(
    [
        "{{.Filename}}",
        "{{.Offset}}",
        "{{(posn .Callee).Filename}}",
        "{{(posn .Callee).Line}}",
        "{{.Callee.Name}}",
        "{{.Dynamic}}",
    ]
)
_GO_NAME = re.compile(r"[\[$].*$")  # Map[int] (an instance), M$bound, M$thunk
_GO_CLOSURE = re.compile(r"\$\d")  # Outer$1: a function literal (no definition to name)


def _go_env() -> dict[str, str]:
    return {
        **os.environ,
        "GOPATH": str(ORACLES / "gopath"),
        "GOBIN": str(ORACLES / "bin"),
        "GOTOOLCHAIN": "local",
        "GOFLAGS": "-mod=mod -buildvcs=false",
        "PATH": f"{Path(GO).parent}:{os.environ.get('PATH', '')}",
    }


def _marked(marker: Path, what: object) -> bool:
    return marker.exists() and marker.read_text() == json.dumps(what)


def ensure_jedi() -> Path:
    """The jedi venv's python (created and pip-installed unless already done)."""
    venv = ORACLES / "jedi"
    marker = venv / ".semgraph-bench-installed"
    if not _marked(marker, JEDI_SPECS):
        if not (venv / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "pip"), "install", "-q"]
        subprocess.run([*pip, *JEDI_SPECS], check=True)
        marker.write_text(json.dumps(JEDI_SPECS))
    return venv / "bin" / "python"


def ensure_callgraph() -> Path:
    """``callgraph`` built with ``go install`` from the module proxy, unless already done."""
    binary = ORACLES / "bin" / "callgraph"
    marker = ORACLES / "bin" / ".semgraph-bench-installed"
    if not (binary.exists() and _marked(marker, CALLGRAPH)):
        (ORACLES / "bin").mkdir(parents=True, exist_ok=True)
        subprocess.run([GO, "install", CALLGRAPH], check=True, env=_go_env())
        marker.write_text(json.dumps(CALLGRAPH))
    return binary


def jedi_sites(root: Path, name: str, commit: str, jobs: int) -> Path:
    """Run (or reuse the cached run of) the jedi oracle; the path of its JSON lines."""
    # the name changes with the oracle's specs and its script (the retry on empty answers)
    out = ORACLES / "cache" / f"{name}-{commit[:12]}-{'-'.join(JEDI_SPECS)}-r2.jsonl"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        python = ensure_jedi()
        cmd = [str(python), str(JEDI_SCRIPT), str(root), str(out), "--jobs", str(jobs)]
        subprocess.run(cmd, check=True)
    return out


def callgraph_edges(root: Path, name: str, commit: str) -> tuple[Path, Path]:
    """Run (or reuse) ``callgraph -algo=vta -test ./...`` in ``root``: the edges' file and
    the file list of the packages it loaded (``go list -test``)."""
    stem = ORACLES / "cache" / f"{name}-{commit[:12]}-{CALLGRAPH.rsplit('@', 1)[1]}"
    edges, files = Path(f"{stem}.edges"), Path(f"{stem}.files")  # (stem ends in ".0")
    if not (edges.exists() and files.exists()):
        edges.parent.mkdir(parents=True, exist_ok=True)
        binary, env = ensure_callgraph(), _go_env()
        fmt = '{{.Dir}}|{{join .GoFiles ","}},{{join .CgoFiles ","}},'
        fmt += '{{join .TestGoFiles ","}},{{join .XTestGoFiles ","}}'
        listed = subprocess.run(
            [GO, "list", "-test", "-f", fmt, "./..."],
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        rels = set()
        for row in listed.splitlines():
            where, _, names = row.partition("|")
            for fn in filter(None, names.split(",")):
                full = (Path(where) / fn).resolve()
                if full.is_relative_to(root.resolve()):  # not the generated test mains
                    rels.add(str(full.relative_to(root.resolve())))
        tmp = Path(f"{stem}.part")
        with tmp.open("w") as fh:
            cmd = [str(binary), "-algo=vta", "-test", f"-format={CG_FORMAT}", "./..."]
            subprocess.run(cmd, cwd=root, env=env, check=True, stdout=fh)
        files.write_text("".join(f"{r}\n" for r in sorted(rels)))
        tmp.replace(edges)
    return edges, files


class Definitions:
    """semgraph's definitions by file, to name an oracle's target."""

    def __init__(self, rows: Iterable[tuple[str, str, str, int, int]]) -> None:
        self.by_path: dict[str, list[tuple[int, int, str, str]]] = defaultdict(list)
        for key, path, name, start, end in rows:
            self.by_path[path].append((start, end, name, key))

    def keys(self) -> list[str]:
        return [key for rows in self.by_path.values() for *_, key in rows]

    def at(self, path: str, line: int, name: str) -> str | None:
        """The innermost definition named ``name`` in ``path`` whose lines hold ``line``."""
        best: tuple[int, str] | None = None
        for start, end, n, key in self.by_path.get(path, ()):
            if n == name and start <= line <= end and (best is None or start > best[0]):
                best = (start, key)
        return best[1] if best else None


def read_jedi(path: Path, defs: Definitions) -> dict[Key, OracleSite]:
    sites: dict[Key, OracleSite] = {}
    with path.open() as fh:
        for text in fh:
            row = json.loads(text)
            site = sites.setdefault((row["path"], row["line"], row["name"]), OracleSite())
            site.external += row.get("external", 0)
            site.error = site.error or "error" in row
            for t in row.get("targets", []):
                key = None
                if t["type"] in ("function", "class"):
                    key = defs.at(t["path"], t["line"], t["name"])
                if key is None:
                    site.nondef.append(f"{t['path']}:{t['line']} {t['name']} ({t['type']})")
                else:
                    site.internal.add(key)
    return sites


def go_calls(root: Path, rels: Iterable[str]) -> dict[tuple[str, int], Key]:
    """Every call of the files, by (path, byte offset of its ``(``): its site key."""
    from tree_sitter import Parser

    from semgraph.indexer import languages

    parser = Parser(languages.grammar("go"))
    out: dict[tuple[str, int], Key] = {}
    for rel in rels:
        try:
            data = (root / rel).read_bytes()
        except OSError:
            continue
        stack = [parser.parse(data).root_node]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            if node.type in ("go_statement", "defer_statement"):  # SSA's position: the keyword
                inner = next((c for c in node.children if c.type == "call_expression"), None)
                key = _go_key(rel, inner) if inner is not None else None
                if key is not None:
                    out[(rel, node.start_byte)] = key
            if node.type != "call_expression":
                continue
            key, args = _go_key(rel, node), node.child_by_field_name("arguments")
            if key is not None and args is not None:
                out[(rel, args.start_byte)] = key
    return out


def _go_key(rel: str, call: Any) -> Key | None:
    """A Go call's site key: semgraph's line (the call node's first) and callee as written."""
    fn = call.child_by_field_name("function")
    if fn is not None and fn.type == "selector_expression":
        fn = fn.child_by_field_name("field")
    if fn is None or fn.type not in ("identifier", "field_identifier") or not fn.text:
        return None
    return (rel, call.start_point[0] + 1, fn.text.decode())


def read_callgraph(
    root: Path, edges: Path, files: Path, defs: Definitions
) -> tuple[dict[Key, OracleSite], set[str]]:
    """The Go oracle's sites (every call of the loaded files, with VTA's callees) and the
    files it covers."""
    rels = set(files.read_text().split())
    calls = go_calls(root, sorted(rels))
    sites: dict[Key, OracleSite] = {key: OracleSite() for key in calls.values()}
    prefix = str(root.resolve()) + os.sep
    with edges.open() as fh:
        for text in fh:
            parts = text.rstrip("\n").split("\t")
            if len(parts) != 6 or not parts[0].startswith(prefix):
                continue
            site_file, offset, callee_file, callee_line, callee, _ = parts
            key = calls.get((site_file[len(prefix) :], int(offset)))
            if key is None:  # a call the tree has no call_expression for (defer wrappers)
                continue
            site = sites[key]
            if not callee_file.startswith(prefix):
                site.external += 1
                continue
            rel, name = callee_file[len(prefix) :], _GO_NAME.sub("", callee)
            closure = _GO_CLOSURE.search(callee) is not None
            target = None if closure else defs.at(rel, int(callee_line), name)
            if target is None:
                site.nondef.append(f"{rel}:{callee_line} {callee}")
            else:
                site.internal.add(target)
    return sites, rels


def summary(sites: dict[Key, OracleSite]) -> dict[str, Any]:
    counts: dict[str, int] = defaultdict(int)
    for s in sites.values():
        counts[s.verdict] += 1
    return dict(counts)
