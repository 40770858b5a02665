"""A baseline's code beside this tree's, for the benches that measure both in one run: a
``git worktree`` of the baseline commit in a scratch directory, removed afterwards, and the
order in which the two codes take turns (the first alternating, round by round)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.harness.records import emit

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def baseline_tree(commit: str, prefix: str) -> Iterator[tuple[Path, Path]]:
    """``(scratch, baseline)``: a scratch directory, and the worktree of ``commit`` in it."""
    scratch = Path(tempfile.mkdtemp(prefix=prefix))
    base = scratch / "baseline"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base), commit],
        check=True,
    )
    try:
        yield scratch, base
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False
        )
        shutil.rmtree(scratch, ignore_errors=True)


def turns(round_: int, base: Path) -> list[tuple[str, Path]]:
    """The two codes of round ``round_`` (0-based) in the order they run."""
    order = [("this", ROOT), ("baseline", base)]
    return order if round_ % 2 == 0 else order[::-1]


def run_script(code: Path, script: str, *args: str) -> dict[str, object]:
    """Run ``script`` (``python -c``) with ``code``'s ``src`` first on the path, in a fresh
    process; the JSON object it printed last."""
    env = {**os.environ, "PYTHONPATH": str(code / "src")}
    done = subprocess.run(
        [sys.executable, "-c", script, *args], env=env, check=True, capture_output=True, text=True
    )
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def ab_rounds(
    commit: str,
    prefix: str,
    rounds: int,
    source: Callable[[Path], Path],
    measure: Callable[[Path, Path, Path], dict[str, object]],
    record: str,
) -> None:
    """Each round, this tree's code and ``commit``'s in turn: ``measure(code, source, work)``
    on the tree ``source(scratch)`` returns, printed and emitted as ``record``."""
    with baseline_tree(commit, prefix) as (scratch, base):
        tree = source(scratch)
        for r in range(rounds):
            for code, path in turns(r, base):
                found = measure(path, tree, scratch / f"repo-{r}-{code}")
                print(f"round {r + 1}/{rounds} {code}: {json.dumps(found)}", flush=True)
                emit(record, code=code, round=r + 1, **found)
