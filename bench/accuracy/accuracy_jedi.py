"""The Python oracle of ``bench.accuracy.bench_accuracy``: every call site of a repository and what
jedi's ``goto`` says it calls. Runs in the oracle's own virtual environment (jedi from PyPI),
never in semgraph's, so it imports nothing of semgraph or of the benchmark:

    /var/tmp/semgraph-oracles/jedi/bin/python bench/accuracy/accuracy_jedi.py ROOT OUT.jsonl \
        [--jobs N]

A call site is a name followed by an argument list, as semgraph's Python query captures them:
``f(...)``, ``a.b.f(...)`` (the name ``f``) and a decorator with arguments ``@a.f(...)``.
Its line is the first line of the expression the call belongs to (where tree-sitter's
``call`` node starts). Each output line is one site::

    {"path": "src/click/core.py", "line": 12, "col": 8, "name": "echo",
     "targets": [{"path": "src/click/utils.py", "line": 200, "name": "echo", "type":
     "function"}], "external": 0}

``targets`` are jedi's answers inside ROOT; ``external`` counts answers outside it (the
standard library, typeshed, builtins). A site whose goto raised keeps ``"error"``.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from pathlib import Path
from typing import Any

import jedi  # type: ignore[import-not-found]
import parso  # type: ignore[import-not-found]

SKIP_DIRS = {".git", ".tox", ".venv", "venv", "node_modules", "__pycache__", "build", "dist"}


def _sites(tree: Any) -> list[tuple[int, int, int, str]]:
    """(expression line, name line, name column, name) of every call in a parso tree."""
    out: list[tuple[int, int, int, str]] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        kids = getattr(node, "children", None)
        if kids is None:
            continue
        stack.extend(kids)
        if node.type in ("atom_expr", "power"):
            parts = [k for k in kids if not (k.type == "keyword" and k.value == "await")]
            for i in range(1, len(parts)):
                t = parts[i]
                if not (t.type == "trailer" and t.children[0].value == "("):
                    continue
                prev = parts[i - 1]
                if prev.type == "name":
                    name = prev
                elif prev.type == "trailer" and prev.children[0].value == ".":
                    name = prev.children[1]
                else:
                    continue
                out.append((parts[0].start_pos[0], *name.start_pos, name.value))
        elif node.type == "decorator" and len(kids) > 2 and kids[2].type == "operator":
            target = kids[1]
            name = target.children[-1] if target.type == "dotted_name" else target
            if kids[2].value == "(" and name.type == "name":
                out.append((target.start_pos[0], *name.start_pos, name.value))
    return out


def _files(root: Path) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for fn in sorted(filenames):
            if fn.endswith((".py", ".pyi")):
                found.append(str(Path(dirpath, fn).relative_to(root)))
    return found


_ROOT: Path | None = None
_PROJECT: Any = None


def _init(root: str) -> None:
    global _ROOT, _PROJECT
    _ROOT = Path(root).resolve()
    extra = [str(_ROOT / d) for d in ("src", "lib") if (_ROOT / d).is_dir()]
    # a workspace of several repositories (bench_crossrepo): each one's import root too
    extra += [str(_ROOT / d) for d in os.environ.get("JEDI_EXTRA_PATHS", "").split(":") if d]
    _PROJECT = jedi.Project(str(_ROOT), added_sys_path=[str(_ROOT), *extra])


def _one_file(rel: str) -> list[dict[str, Any]]:
    assert _ROOT is not None
    path = _ROOT / rel
    try:
        code = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    try:
        tree = parso.parse(code)
        script = jedi.Script(code, path=str(path), project=_PROJECT)
    except Exception:
        return []
    rows = []
    for line, nline, col, name in sorted(_sites(tree)):
        row: dict[str, Any] = {"path": rel, "line": line, "col": col, "name": name}
        targets, external = [], 0
        try:
            found = script.goto(nline, col, follow_imports=True)
            if not found:
                # jedi 0.20.1 infers a pytest fixture parameter only once per Script: the same
                # fixture in the file's next test function comes back empty (a fresh Script
                # finds it), so an empty answer is asked again of a fresh Script
                fresh = jedi.Script(code, path=str(path), project=_PROJECT)
                found = fresh.goto(nline, col, follow_imports=True)
            for d in found:
                mp = d.module_path
                where = Path(mp).resolve() if mp else None
                if where is None or not where.is_relative_to(_ROOT) or d.line is None:
                    external += 1
                    continue
                targets.append(
                    {
                        "path": str(where.relative_to(_ROOT)),
                        "line": d.line,
                        "name": d.name,
                        "type": d.type,
                    }
                )
        except Exception as exc:
            row["error"] = type(exc).__name__
        row["targets"], row["external"] = targets, external
        rows.append(row)
    return rows


def main() -> None:
    root, out = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
    jobs = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else 1
    files = _files(root)
    only = os.environ.get("JEDI_ONLY_UNDER")  # a workspace: the sites of one repository only
    if only:
        files = [f for f in files if f.startswith(only.rstrip("/") + "/")]
    tmp = out.with_suffix(".part")
    done = 0
    with tmp.open("w") as fh, multiprocessing.Pool(jobs, _init, (str(root),)) as pool:
        for rows in pool.imap(_one_file, files, chunksize=1):
            for row in rows:
                fh.write(json.dumps(row) + "\n")
            done += 1
            if done % 20 == 0 or done == len(files):
                print(f"jedi: {done}/{len(files)} files", file=sys.stderr, flush=True)
    tmp.replace(out)


if __name__ == "__main__":
    main()
