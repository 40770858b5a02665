"""The A/B benches' baseline: a worktree of a commit beside this tree, gone afterwards, and
the two codes taking turns."""

from __future__ import annotations

import subprocess

from bench.harness.baseline import ROOT, baseline_tree, turns


def test_the_baseline_is_a_worktree_of_the_commit_and_is_removed() -> None:
    with baseline_tree("HEAD", "semgraph-test-baseline-") as (scratch, base):
        assert (base / "src" / "semgraph" / "__init__.py").is_file()
        assert base.parent == scratch
        head = subprocess.run(
            ["git", "-C", str(base), "rev-parse", "HEAD"], capture_output=True, text=True
        )
        mine = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True
        )
        assert head.stdout == mine.stdout
    assert not scratch.exists()
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "list"], capture_output=True, text=True
    ).stdout
    assert str(base) not in listed


def test_the_codes_take_turns() -> None:
    base = ROOT / "elsewhere"
    assert [c for c, _ in turns(0, base)] == ["this", "baseline"]
    assert [c for c, _ in turns(1, base)] == ["baseline", "this"]
    assert dict(turns(2, base)) == {"this": ROOT, "baseline": base}
