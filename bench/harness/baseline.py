"""A baseline's code beside this tree's, for the benches that measure both in one run: a
``git worktree`` of the baseline commit in a scratch directory, removed afterwards, and the
order in which the two codes take turns (the first alternating, round by round)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
