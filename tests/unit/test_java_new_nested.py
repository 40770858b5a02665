"""Java `new` of a qualified class (`new Outer.Inner()`, `new a.b.C<>()`): the class's own name
is the callee and what qualifies it the receiver, so the resolver reaches a nested class through
its outer one (bench/accuracy: jsoup's `new Token.StartTag()`)."""

from __future__ import annotations

from pathlib import Path

from semgraph.indexer.extract import ExtractOptions, extract_file
from semgraph.model import FileFacts
from semgraph.resolve.resolver import resolve

NORM = """\
package com.x.util;

public final class Norm {
  public static class Ctx { public Ctx(int a) {} }
  public static class Box<T> {}
}
"""
USE = """\
package com.x.app;

import com.x.util.Norm;

public class Use {
  Object f() {
    Norm.Ctx c = new Norm.Ctx(1);
    Object b = new Norm.Box<String>();
    Object l = new java.util.ArrayList<String>();
    return new Use();
  }
}
"""


def _facts(path: str, text: str) -> FileFacts:
    facts = extract_file(path, text.encode(), ExtractOptions())
    assert isinstance(facts, FileFacts)
    return facts


def test_new_of_a_qualified_class_is_a_call_on_its_qualifier() -> None:
    calls = [(c.callee, c.receiver, c.line) for c in _facts("src/Use.java", USE).calls]
    assert calls == [
        ("Ctx", "Norm", 7),
        ("Box", "Norm", 8),
        ("ArrayList", "java.util", 9),
        ("Use", None, 10),
    ]


def test_new_of_a_nested_class_resolves_to_it_through_the_import(tmp_path: Path) -> None:
    files = [
        _facts("src/main/java/com/x/util/Norm.java", NORM),
        _facts("src/main/java/com/x/app/Use.java", USE),
    ]
    with resolve(lambda: iter(files), "r", tmp_path / "work") as res:
        edges = {(e.line, e.dst_key.split("|")[2], e.tier) for e in res.iter_calls()}
    norm = "src.main.java.com.x.util.Norm.Norm"
    assert (7, f"{norm}.Ctx", "import") in edges
    assert (8, f"{norm}.Box", "import") in edges
    assert not any(line == 9 for line, _, _ in edges)  # java.util: outside the repository
