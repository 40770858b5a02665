"""Incremental resolution against a full one on a real repository (issue 25).

    python -m bench.push.bench_incremental SPILL WORKTREE [--check] [--out DIR]

SPILL is a parse spill of WORKTREE (``semgraph.indexer.parse.parse_repository``, as the job
writes it). The bench resolves it fully once (the cache), then, for each scenario, edits one
file's text in memory, parses it with the product's extractor, and resolves the edited tree
incrementally from the cache (``max_fraction=1``: never falling back, to measure) and, with
``--check``, fully too, comparing the two (``semgraph.resolve.compare.differences``).
Figures are CPU seconds of this process (``time.process_time``). Scenarios on sympy:

* ``body``: one function body in sympy/core/basic.py gets a statement (lines shift);
* ``new_function``: a new public function at the end of sympy/core/basic.py;
* ``signature``: a parameter added to widely used functions (``sympify``, ``_sympify``,
  ``Basic.atoms``) and to rarely used ones, for the closure-size / CPU line that sets the
  fallback threshold.

Prints one JSON line per resolution and a summary with the fitted cost per re-resolved file.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from semgraph.indexer.extract import ExtractOptions, extract_file
from semgraph.indexer.spill import SpillReader
from semgraph.model import FileFacts, SkippedFile
from semgraph.resolve.compare import differences
from semgraph.resolve.incremental import resolve_incremental
from semgraph.resolve.resolver import resolve

Edit = Callable[[str], str]
BASIC = "sympy/core/basic.py"


def _body(text: str) -> str:
    """A statement added at the top of ``Basic.copy``'s body (a one-function body change)."""
    return text.replace(
        "    def copy(self):\n", "    def copy(self):\n        _unused = self.func\n", 1
    )


def _new_function(text: str) -> str:
    return text + "\n\ndef brand_new_public_function(expr):\n    return Basic(expr)\n"


def _param(name: str) -> Edit:
    pattern = re.compile(rf"(\n[ \t]*def {re.escape(name)}\()")

    def edit(text: str) -> str:
        out, n = pattern.subn(r"\1_bench_extra=None, ", text, count=1)
        if n != 1:
            raise SystemExit(f"no def {name}(")
        return out

    return edit


SCENARIOS: list[tuple[str, str, Edit]] = [
    ("body", BASIC, _body),
    ("new_function", BASIC, _new_function),
    ("signature:sympify", "sympy/core/sympify.py", _param("sympify")),
    ("signature:_sympify", "sympy/core/sympify.py", _param("_sympify")),
    ("signature:atoms", BASIC, _param("atoms")),
    ("signature:rare", "sympy/utilities/misc.py", _param("find_executable")),
    ("signature:mid", "sympy/polys/polytools.py", _param("groebner")),
]


def _cpu(fn: Callable[[], Any]) -> tuple[Any, float]:
    started = time.process_time()
    out = fn()
    return out, round(time.process_time() - started, 3)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("spill", type=Path)
    ap.add_argument("worktree", type=Path)
    ap.add_argument("--check", action="store_true", help="also resolve fully and compare")
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    args = ap.parse_args(argv)
    items: list[FileFacts | SkippedFile] = list(SpillReader(args.spill))
    work = Path(tempfile.mkdtemp(prefix="bench-inc-"))
    try:
        full, cpu = _cpu(lambda: resolve(lambda: iter(items), "bench", work / "base"))
        code = full.table.db.execute("SELECT count(*) FROM files WHERE code = 1").fetchone()[0]
        full.close()
        print(json.dumps({"run": "full", "cpu_s": cpu, "code_files": code}), flush=True)
        summary: dict[str, Any] = {"full_cpu_s": cpu, "code_files": code, "scenarios": {}}
        cache = work / "base" / "symtab.sqlite"
        wanted = set(filter(None, args.only.split(",")))
        for name, path, edit in SCENARIOS:
            if wanted and name not in wanted:
                continue
            text = edit((args.worktree / path).read_text())
            new = extract_file(path, text.encode(), ExtractOptions())
            edited = [new if getattr(i, "path", None) == path else i for i in items]

            def incremental(e: list[FileFacts | SkippedFile] = edited) -> Any:
                return resolve_incremental(
                    lambda: iter(e), "bench", work / "inc", cache, max_fraction=1.0
                )

            def full_again(e: list[FileFacts | SkippedFile] = edited) -> Any:
                return resolve(lambda: iter(e), "bench", work / "full")

            inc, cpu = _cpu(incremental)
            row: dict[str, Any] = {"run": name, "cpu_s": cpu, **inc.incremental}
            if args.check:
                other, full_cpu = _cpu(full_again)
                row["full_cpu_s"] = full_cpu
                row["differences"] = differences(inc, other)
                other.close()
            inc.close()
            print(json.dumps(row), flush=True)
            summary["scenarios"][name] = row
        rows = [r for r in summary["scenarios"].values() if r["files_resolved"] > 1]
        if len(rows) >= 2:  # least squares: cpu = a + b * files
            n = len(rows)
            xs = [r["files_resolved"] for r in rows]
            ys = [r["cpu_s"] for r in rows]
            mx, my = sum(xs) / n, sum(ys) / n
            b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / max(
                sum((x - mx) ** 2 for x in xs), 1e-9
            )
            a = my - b * mx
            k = (summary["full_cpu_s"] - a) / b if b > 0 else float("inf")
            summary["fit"] = {"fixed_cpu_s": round(a, 3), "cpu_s_per_file": round(b, 4)}
            summary["break_even_files"] = round(k)
            summary["break_even_fraction"] = round(k / code, 3)
        print(json.dumps({"summary": summary}), flush=True)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
