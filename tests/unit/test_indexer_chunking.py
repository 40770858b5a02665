"""Chunking: aligned to symbols, bounded, covering every non-blank line exactly once."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from semgraph.indexer.chunking import chunk_lines, split_lines
from semgraph.model import Symbol, content_hash


def _sym(name: str, start: int, end: int, kind: str = "function") -> Symbol:
    return Symbol(kind=kind, name=name, qualified_name=f"m.{name}", start_line=start, end_line=end)


def test_small_symbols_are_one_chunk_each() -> None:
    lines = ["import os", "", "def a():", "    pass", "", "def b():", "    pass"]
    chunks = chunk_lines(lines, [_sym("a", 3, 4), _sym("b", 6, 7)], max_lines=60, max_chars=2400)
    assert [(c.start_line, c.end_line, c.symbol) for c in chunks] == [
        (1, 2, None),
        (3, 4, "m.a"),
        (6, 7, "m.b"),
    ]
    assert chunks[1].text == "def a():\n    pass"
    assert chunks[1].content_hash == content_hash("def a():\n    pass")


def test_large_class_splits_into_header_and_methods() -> None:
    lines = ["class C:", "    x = 1"] + [f"    # {i}" for i in range(20)] + ["    def m(self):"]
    lines += [f"        v{i} = {i}" for i in range(5)]
    cls = _sym("C", 1, len(lines), "class")
    method = Symbol("method", "m", "m.C.m", 23, len(lines), parent="m.C")
    chunks = chunk_lines(lines, [cls, method], max_lines=10, max_chars=2400)
    assert [(c.start_line, c.end_line, c.symbol) for c in chunks] == [
        (1, 10, "m.C"),
        (11, 20, "m.C"),
        (21, 22, "m.C"),
        (23, 28, "m.C.m"),
    ]


def test_overlong_line_is_cut() -> None:
    chunks = chunk_lines(["x" * 5000], [], max_lines=60, max_chars=2000)
    assert [len(c.text) for c in chunks] == [2000, 2000, 1000]
    assert {(c.start_line, c.end_line) for c in chunks} == {(1, 1)}


def test_split_lines_counts_like_tree_sitter() -> None:
    assert split_lines("a\r\nb\n") == ["a", "b"]
    assert split_lines("a\n\nb") == ["a", "", "b"]
    assert split_lines("") == []


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.text(alphabet="ab \t{}", max_size=120), max_size=200),
    st.lists(st.tuples(st.integers(1, 200), st.integers(0, 50)), max_size=12),
    st.integers(5, 40),
    st.integers(200, 1000),
)
def test_chunks_cover_nonblank_lines_once_within_bounds(
    lines: list[str], spans: list[tuple[int, int]], max_lines: int, max_chars: int
) -> None:
    symbols = [
        _sym(f"s{i}", start, min(start + length, max(len(lines), 1)))
        for i, (start, length) in enumerate(spans)
        if start <= len(lines)
    ]
    chunks = chunk_lines(lines, symbols, max_lines=max_lines, max_chars=max_chars)
    covered: list[int] = []
    for c in chunks:
        assert c.end_line - c.start_line + 1 <= max_lines
        assert len(c.text) <= max_chars
        assert c.text.strip()
        if c.start_line != c.end_line or len(lines[c.start_line - 1]) <= max_chars:
            covered.extend(range(c.start_line, c.end_line + 1))
        else:
            covered.append(c.start_line) if c.start_line not in covered else None
    nonblank = [i + 1 for i, ln in enumerate(lines) if ln.strip()]
    assert sorted(set(covered) & set(nonblank)) == nonblank
    assert len(covered) == len(set(covered))


def test_a_one_line_defined_type_stays_with_the_lines_around_it() -> None:
    """`type byName []*Command` is a symbol (the graph has it) but no chunk of its own; a
    defined type over several lines, and a one-line function, still are."""
    lines = [
        "package cobra",
        "",
        "// byName sorts commands by name.",
        "type byName []*Command",
        "",
        "type Handler func(",
        "    name string,",
        ") error",
        "",
        "func one() int { return 1 }",
    ]
    symbols = [
        _sym("byName", 4, 4, kind="type"),
        _sym("Handler", 6, 8, kind="type"),
        _sym("one", 10, 10),
    ]
    chunks = chunk_lines(lines, symbols, max_lines=40, max_chars=2000)
    assert [(c.start_line, c.end_line, c.symbol) for c in chunks] == [
        (1, 5, None),
        (6, 8, "m.Handler"),
        (10, 10, "m.one"),
    ]
