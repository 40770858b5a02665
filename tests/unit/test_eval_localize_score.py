"""The localisation evaluation's scoring (bench/search/eval_localize_score.py): which commits count,
their answer, the changed lines of a diff, ranks and the summary's accuracies."""

from __future__ import annotations

from typing import Any

from bench.search.eval_localize_score import (
    MAX_LINES_PER_FILE,
    acc,
    answer_files,
    changed_old_lines,
    complete,
    describes,
    first_rank,
    source_rank,
    summarize,
    truncated,
)


def test_which_messages_describe_a_bug_or_a_feature() -> None:
    assert describes("Fix crash when the option value is empty\n\nIt raised a KeyError.")
    assert describes("Add support for custom shell completion of paths")
    assert not describes("Fix typo")  # too short
    assert not describes("Bump version to 8.1.4 and fix the release notes formatting")
    assert not describes("Merge pull request #12 from x/fix-the-crash-in-the-parser")
    assert not describes("Reformat the whole code base with the new style settings")
    assert not describes("")


def test_the_answer_is_the_modified_non_test_source_files() -> None:
    changes = [("M", "src/click/core.py"), ("M", "tests/test_core.py"), ("M", "CHANGES.rst")]
    assert answer_files(changes, "python") == ("src/click/core.py",)
    assert answer_files([("A", "src/click/new.py")], "python") is None  # added: no parent
    assert answer_files([("M", "docs/x.py"), ("M", "README.md")], "python") is None
    many = [("M", f"pkg/m{i}.go") for i in range(4)]
    assert answer_files(many, "go") is None
    assert answer_files([("M", "cmd/root.go"), ("M", "cmd/root_test.go")], "go") == ("cmd/root.go",)


def test_changed_old_lines() -> None:
    diff = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n"
        "@@ -10,2 +10,3 @@ def f():\n-a\n-b\n+c\n+d\n+e\n"
        "@@ -30 +31 @@\n-x\n+y\n"
        "@@ -40,0 +42,2 @@\n+new\n+new\n"
    )
    assert changed_old_lines(diff) == [10, 11, 30, 40]
    assert changed_old_lines("") == []
    big = "@@ -1,500 +1,1 @@\n"
    assert len(changed_old_lines(big)) == MAX_LINES_PER_FILE


def test_ranks_and_accuracy() -> None:
    assert first_rank(["a", "a", "b", "c"], {"c"}) == 3  # repeats count once
    assert first_rank(["a"], {"z"}) is None
    assert acc([1, 3, None, 10], 3) == 50.0
    assert acc([], 5) == 0.0
    assert truncated("x" * 5000) == "x" * 2000
    ranked = ["tests/test_core.py", "docs/core.rst", "src/util.py", "src/core.py"]
    assert first_rank(ranked, {"src/core.py"}) == 4
    assert source_rank(ranked, {"src/core.py"}) == 2  # the test and the doc dropped


def test_the_source_only_figure_needs_every_record_to_have_it() -> None:
    rows: list[dict[str, Any]] = [
        {"half": "test", "text": "sent", "method": "m", "file_rank": 7, "file_rank_source": 3},
        {"half": "test", "text": "sent", "method": "m", "file_rank": 1, "file_rank_source": 1},
    ]
    out = {(r["half"], r["method"]): r for r in summarize(rows)}
    assert out[("test", "m")]["file@5"] == 50.0
    assert out[("test", "m")]["source_only@5"] == 100.0
    del rows[0]["file_rank_source"]  # an older log: no figure rather than a wrong one
    assert "source_only@5" not in summarize(rows)[0]


def test_summary_per_half_text_and_method() -> None:
    rows: list[dict[str, Any]] = [
        {
            "half": "test",
            "text": "sent",
            "method": "m",
            "file_rank": 1,
            "func_rank": 6,
            "func_targets": 1,
        },
        {
            "half": "test",
            "text": "sent",
            "method": "m",
            "file_rank": 4,
            "func_rank": None,
            "func_targets": 0,
        },
        {
            "half": "tune",
            "text": "sent",
            "method": "m",
            "file_rank": None,
            "func_rank": 2,
            "func_targets": 2,
        },
    ]
    out = {(r["half"], r["method"]): r for r in summarize(rows)}
    test = out[("test", "m")]
    assert test["n"] == 2 and test["file@1"] == 50.0 and test["file@5"] == 100.0
    assert test["func_n"] == 1 and test["func@5"] == 0.0 and test["func@10"] == 100.0
    every = out[("all", "m")]
    assert every["n"] == 3 and every["func_n"] == 2 and every["func@5"] == 50.0


def test_complete_keeps_wholly_asked_commits_once() -> None:
    def rec(cid: str, method: str, rank: int) -> dict[str, Any]:
        return {"id": cid, "text": "sent", "method": method, "file_rank": rank}

    rows = [rec("a", "x", 1), rec("a", "y", 2), rec("a", "x", 9), rec("b", "x", 1)]
    kept = complete(rows, ["x", "y"])
    assert sorted((r["id"], r["method"], r["file_rank"]) for r in kept) == [
        ("a", "x", 1),
        ("a", "y", 2),
    ]
