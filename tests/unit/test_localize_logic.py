"""Localisation's pure parts: what an issue text names (frames, names, asked roles) and the
scoreboard's arithmetic (each part's weight, the role demotion, the bounds)."""

from __future__ import annotations

import re

import pytest

from semgraph.errors import SearchQueryError
from semgraph.localize.mentions import (
    MAX_FRAMES,
    MAX_NAMES,
    extract,
    file_stem,
    match_tail,
    path_suffixes,
)
from semgraph.localize.rank import MAX_EVIDENCE, OPTIONS_PATTERN, Board, LocalizeOptions

PY = """Crash in the parser
Traceback (most recent call last):
  File "/home/u/venv/lib/python3.11/site-packages/shop/app.py", line 5, in start
  File "<frozen importlib._bootstrap>", line 1, in _load
  File "src/shop/parse.py", line 2, in parse_yaml
ValueError: bad
"""


def test_python_frames_keep_paths_lines_and_functions() -> None:
    m = extract(PY)
    assert [(f.path, f.line, f.function) for f in m.frames] == [
        ("/home/u/venv/lib/python3.11/site-packages/shop/app.py", 5, "start"),
        ("src/shop/parse.py", 2, "parse_yaml"),
    ]
    assert m.names[:2] == ["start", "parse_yaml"]


def test_go_rust_js_and_java_frames() -> None:
    text = (
        "panic: runtime error\n\t/go/src/app/internal/store/db.go:42 +0x1d\n"
        "error at src/lib.rs:10:5\n"
        "    at render (webpack:///src/components/Card.tsx:31:9)\n"
        "\tat com.acme.shop.Cart.total(Cart.java:88)\n"
    )
    frames = {(f.path, f.line) for f in extract(text).frames}
    assert ("/go/src/app/internal/store/db.go", 42) in frames
    assert ("src/lib.rs", 10) in frames
    assert ("///src/components/Card.tsx", 31) in frames
    assert path_suffixes("///src/components/Card.tsx")[0] == "src/components/Card.tsx"
    assert ("Cart.java", 88) in frames
    assert "com.acme.shop.Cart.total" in extract(text).dotted


def test_names_are_code_like_words_dotted_names_and_backquoted_words() -> None:
    m = extract("When `render` runs, Order.total and cart_total differ; HTTPServer too. Hello")
    assert "Order.total" in m.dotted
    assert {"render", "total", "cart_total", "HTTPServer"} <= set(m.names)
    assert "When" not in m.names and "Hello" not in m.names and "differ" not in m.names
    assert "setup.py" not in extract("edit setup.py please").dotted


def test_asked_roles() -> None:
    assert extract("the test suite fails").asks == frozenset({"test"})
    assert extract("the documentation has a typo").asks == frozenset({"docs"})
    assert extract("the parser crashes").asks == frozenset()
    for asking in (
        "add a regression test for the redirect",
        "test_auth is flaky: the tests are failing on CI",
        "missing unit tests for the parser",
        "move the fixture to tests/conftest.py",
    ):
        assert extract(asking).asks == frozenset({"test"}), asking
    assert extract("the examples directory does not run").asks == frozenset({"example"})


def test_passing_mentions_do_not_ask_for_a_role() -> None:
    for passing in (
        "I tested it with pytest 8 and it still crashes",
        "for example, a sample config with a typo in a docstring",
        "a test case: run `cli --flag` and see the traceback",
    ):
        assert extract(passing).asks == frozenset(), passing


def test_bounds_hold_on_hostile_text() -> None:
    text = "".join(f'File "a{i}.py", line {i}\n x_{i} a.b{i}\n' for i in range(5000))
    m = extract(text + "\x00\ud800" + "`" * 10_001)
    assert len(m.frames) == MAX_FRAMES and len(m.names) == MAX_NAMES
    assert len(m.dotted) == MAX_NAMES
    assert extract("").frames == [] and extract("").names == []
    assert all(len(n) <= 200 for n in extract("a_" * 10_000).names)


def test_path_tails_and_matching() -> None:
    assert path_suffixes("/a/b/./c.py") == ["a/b/c.py", "b/c.py", "c.py"]
    assert len(path_suffixes("/".join("d" * 20) + "/x.py")) == 6
    assert file_stem("a/b/app.py") == "app" and file_stem("Makefile") == "Makefile"
    paths = ["src/shop/app.py", "other/app.py", "src/shop/cart.py"]
    assert match_tail(["site/shop/app.py", "shop/app.py", "app.py"], paths) == "src/shop/app.py"
    assert match_tail(["app.py"], paths) is None  # a bare name that names two files
    assert match_tail(["cart.py"], paths) == "src/shop/cart.py"
    assert match_tail(["zzz.py"], paths) is None


def test_options_parse_and_refuse_bad_specs() -> None:
    opts = LocalizeOptions.parse("names=0, rerank=0.5,expand_from=3")
    assert (opts.names, opts.rerank, opts.expand_from, opts.chunks) == (0.0, 0.5, 3, 1.0)
    assert LocalizeOptions.parse(None) == LocalizeOptions()
    assert re.fullmatch(OPTIONS_PATTERN, "names=0,rerank=0.5,expand_from=3")
    assert not re.fullmatch(OPTIONS_PATTERN, "nope=1") and not re.fullmatch(OPTIONS_PATTERN, "")
    for name in LocalizeOptions().to_dict():  # the pattern knows every option
        assert re.fullmatch(OPTIONS_PATTERN, f"{name}=1")
    for bad in ("names", "nope=1", "names=x", "names=-1", "names=1000", "a" * 500):
        with pytest.raises(SearchQueryError):
            LocalizeOptions.parse(bad)


def test_board_aggregates_chunks_with_decay_and_demotes_roles() -> None:
    board = Board(LocalizeOptions(), {})
    for score in (0.9, 0.8, 0.7):
        board.chunk("tests/test_a.py", "test", "tests.test_a.t", "1-2", score)
    board.chunk("src/a.py", "source", "a.f", "1-2", 0.9)
    board.demote(frozenset())
    ranked = board.ranked(10)
    assert [f["path"] for f in ranked] == ["src/a.py", "tests/test_a.py"]
    assert ranked[1]["demoted"] and not ranked[0]["demoted"]
    assert ranked[1]["score"] == pytest.approx((0.9 + 0.4 + 0.175) * 0.3, abs=1e-3)
    asked = Board(LocalizeOptions(), {})
    asked.chunk("tests/test_a.py", "test", None, "1-2", 0.9)
    asked.demote(frozenset({"test"}))
    assert asked.ranked(1)[0]["score"] == pytest.approx(0.9 * LocalizeOptions().demote_asked)
    never = Board(LocalizeOptions(demote_asked=1.0), {})
    never.chunk("tests/test_a.py", "test", None, "1-2", 0.9)
    never.demote(frozenset({"test"}))
    assert not never.ranked(1)[0]["demoted"]


def test_board_symbol_evidence_and_bounds() -> None:
    board = Board(LocalizeOptions(names=0.5), {})
    row = {"qualified_name": "a.f", "kind": "function", "start_line": 3, "end_line": 9}
    for i in range(20):
        board.symbol_evidence("src/a.py", row, "names", f"name {i}", 0.1)
    board.symbol_evidence("src/a.py", row, "names", "off", 0.0)  # a weight of 0 adds nothing
    board.file_evidence("src/b.py", "frames", "frame src/b.py:1", 1.0)
    ranked = board.ranked(1)
    assert [f["path"] for f in ranked] == ["src/a.py"]  # 20 x 0.1 > 1.0
    sym = ranked[0]["symbols"][0]
    assert sym["symbol"] == "a.f" and sym["start_line"] == 3
    assert len(sym["evidence"]) == MAX_EVIDENCE and len(ranked[0]["evidence"]) == MAX_EVIDENCE
    assert Board(LocalizeOptions(), {}).ranked(5) == []


def test_the_symbols_option_bounds_the_symbols_per_file() -> None:
    def listed(options: LocalizeOptions) -> int:
        board = Board(options, {})
        for i in range(30):
            board.chunk("src/a.py", "source", f"a.f{i}", "1-2", 1.0 - i / 100)
        return len(board.ranked(1)[0]["symbols"])

    assert listed(LocalizeOptions()) == 5
    assert listed(LocalizeOptions.parse("symbols=10")) == 10
    assert listed(LocalizeOptions.parse("symbols=99")) == 20  # the hard bound
    assert listed(LocalizeOptions.parse("symbols=0")) == 1
