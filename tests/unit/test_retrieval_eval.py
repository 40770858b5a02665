"""The outside retrieval evaluation's pure parts: stripping documentation, first sentences,
the halves, matching hits to targets and the scores (bench/search/eval_corpus.py,
bench/search/eval_run.py)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import pytest
from bench.search.eval_corpus import first_sentence, half, strip_comments_treesitter, strip_python
from bench.search.eval_run import bootstrap_diff, mrr, rank_of, recall


def test_strip_python_removes_docstrings_and_comments_and_still_parses() -> None:
    source = (
        '"""Module doc."""\n'
        "import os  # why\n"
        "# a whole-line comment\n"
        "def f(x):\n"
        '    """Return x.\n\n    More.\n    """\n'
        "    return x  # trailing\n"
        "class C:\n"
        "    '''Only a docstring.'''\n"
        "def g(): '''one line'''; return 1\n"
        "def h():\n"
        '    s = "# not a comment"\n'
        "    return s\n"
    )
    out = strip_python(source)
    ast.parse(out)
    assert "doc" not in out.lower() and "why" not in out and "trailing" not in out
    assert "Return x" not in out and "comment\n" not in out.replace('"# not a comment"', "")
    assert '"# not a comment"' in out  # strings that look like comments stay
    assert "class C:\n    pass\n" in out  # a body left empty gets pass
    assert "def g(): None; return 1" in out
    assert "return x\n" in out


def test_strip_python_rejects_unparsable_input() -> None:
    with pytest.raises(SyntaxError):
        strip_python("def f(:\n    pass\n")


def test_strip_go_comments_keeps_code_and_strings() -> None:
    source = (
        b"package p\n\n"
        b"// Add adds.\n"
        b"// It is documented.\n"
        b"func Add(a, b int) int { return a + b } // trailing\n"
        b"/* block */ var x = 1\n"
        b'var s = "// not a comment"\n'
        b"var r = `/* raw */`\n"
    )
    out = strip_comments_treesitter("go", source).decode()
    assert "Add adds" not in out and "documented" not in out and "trailing" not in out
    assert "block" not in out and "var x = 1" in out
    assert '"// not a comment"' in out and "`/* raw */`" in out
    assert "func Add(a, b int) int { return a + b }" in out


def test_first_sentence() -> None:
    assert first_sentence("Return the value.  More text here.") == "Return the value."
    assert first_sentence("Open a file\nfor reading.\n\nArgs: x") == "Open a file for reading."
    assert first_sentence("* JSDoc line.\n * Second one.") == "JSDoc line."
    assert first_sentence("e.g. this stays whole") == "e.g. this stays whole"
    assert first_sentence("") == ""
    assert len(first_sentence("word " * 10_000)) == 300  # oversized: bounded


def test_half_is_deterministic_and_splits() -> None:
    ids = [f"repo:q{i}" for i in range(400)]
    halves = [half(i) for i in ids]
    assert halves == [half(i) for i in ids]
    assert set(halves) == {"tune", "test"}
    assert 150 < halves.count("tune") < 250


@dataclass
class Hit:
    path: str
    start_line: int
    end_line: int


def test_rank_of_matches_overlapping_chunks_of_the_same_file() -> None:
    targets = [("a.py", 10, 20)]
    hits = [Hit("b.py", 10, 20), Hit("a.py", 1, 9), Hit("a.py", 1, 60), Hit("a.py", 15, 16)]
    assert rank_of(hits, targets) == 3  # the class chunk that holds the method
    assert rank_of(hits[:2], targets) is None
    assert rank_of([Hit("a.py", 20, 30)], targets) == 1
    assert rank_of([], targets) is None and rank_of(hits, []) is None


def test_recall_mrr_and_the_paired_bootstrap() -> None:
    ranks = [1, 2, None, 6, 10, 11]
    assert recall(ranks) == pytest.approx(2 / 6)
    assert mrr(ranks) == pytest.approx((1 + 1 / 2 + 1 / 6 + 1 / 10) / 6)
    assert recall([]) == 0.0 and mrr([]) == 0.0
    same = bootstrap_diff(ranks, ranks)
    assert same == (0.0, 0.0, 0.0)
    better = [1] * 50 + [None] * 50
    worse = [None] * 100
    diff, lo, hi = bootstrap_diff(better, worse)
    assert diff == pytest.approx(0.5) and 0.3 < lo <= diff <= hi < 0.7
    assert bootstrap_diff(better, worse) == bootstrap_diff(better, worse)  # seeded
    with pytest.raises(ValueError):
        bootstrap_diff([1], [1, 2])
