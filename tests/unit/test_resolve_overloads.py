"""Overloads by arity (semgraph.resolve.overloads): parameters read from signatures as
written, the call's argument count from the parser, inherited overloads and overrides, with
malformed and oversized signatures. The real parser and resolver, no servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from semgraph.indexer.extract import ExtractOptions, extract_file
from semgraph.model import FileFacts, SkippedFile
from semgraph.resolve.overloads import MAX_PARAMS_TEXT, accepts, parameters, types
from semgraph.resolve.resolver import resolve


@pytest.mark.parametrize(
    ("signature", "want"),
    [
        ("void g()", (0, 0)),
        ("void error(int pos)", (1, 1)),
        ("void error(String msg, Object... args)", (1, None)),
        ("static <T> T pick(java.util.List<T> xs, java.util.Map<String, Integer> m)", (2, 2)),
        ('@SuppressWarnings("unchecked") @Override public JsonToken peek() throws E', (0, 0)),
        ('void f(@Named("x") final String s)', (1, 1)),
        ("fun f(a: Int = 1, vararg b: String)", (0, None)),
        ("public void Log(string fmt, params object[] args)", (1, None)),
        ("void h(int a,)", None),  # an empty parameter: unreadable
        ("void k(Map<String, int x)", None),  # unbalanced
        ("public class Tree", None),  # no parameter list
        ("void big(" + "int a, " * MAX_PARAMS_TEXT + "int z)", None),  # oversized
    ],
)
def test_parameters(signature: str, want: tuple[int, int | None] | None) -> None:
    assert parameters(signature) == want


def test_an_unreadable_signature_accepts_everything() -> None:
    assert accepts("public class Tree", 7)
    assert accepts("void error(String msg, Object... args)", 5)
    assert not accepts("void error(int pos)", 2)
    assert types("void a(@Nullable final String s, int n)") == types("void b(String t, int m)")


SRC = {
    "src/main/java/a/b/Tree.java": (
        "package a.b;\npublic class Tree {\n  void error(String msg, Object... args) {}\n"
        "  void error(int pos) {}\n  void peek() {}\n}\n"
    ),
    "src/main/java/a/b/Html.java": (
        "package a.b;\npublic class Html extends Tree {\n  void error(String msg) {}\n"
        '  @Override void peek() {}\n  void run() {\n    error("x %s", 1);\n'
        '    error("y");\n    peek();\n    Object[] xs = {};\n    error("z", xs);\n  }\n}\n'
    ),
}


def test_overloads_across_the_class_hierarchy(tmp_path: Path) -> None:
    files: list[FileFacts | SkippedFile] = [
        extract_file(p, t.encode(), ExtractOptions()) for p, t in SRC.items()
    ]
    assert [c.args for c in files[1].calls] == [2, 1, 0, 2]  # type: ignore[union-attr]
    with resolve(lambda: iter(files), "j", tmp_path / "work") as res:
        edges: dict[int, set[tuple[str, str]]] = {}
        for e in res.iter_calls():
            edges.setdefault(e.line, set()).add(("|".join(e.dst_key.split("|")[2:]), e.tier))
    tree, html = "src.main.java.a.b.Tree.Tree", "src.main.java.a.b.Html.Html"
    # two arguments: only the base's varargs overload takes them (the subclass's does not hide it)
    assert edges[6] == {(f"{tree}.error", "scope")}
    # one argument: the subclass's error(String) and the base's error(int) both take it; the
    # types are not matched, so both are candidates (never the varargs one: a fixed one fits)
    assert edges[7] == {(f"{html}.error", "ambiguous"), (f"{tree}.error|2", "ambiguous")}
    # an override is not a second overload
    assert edges[8] == {(f"{html}.peek", "scope")}
