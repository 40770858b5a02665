"""The CodeSearchNet-style evaluation's builder (bench/search/eval_csn.py): the stable half
split, CodeSearchNet's filters, the queries and targets taken from tiny sources in several
languages, and that no evaluated package is among the training sources. Pure: nothing is
downloaded."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from bench.search import eval_csn
from bench.search.eval_corpus import half

from train.embedder import heldout
from train.embedder.dedup import Deduper

PY = (
    b"class Box:\n"
    b'    """A box."""\n'
    b"    def __init__(self, w, h):\n"
    b'        """Make a box of the given sides."""\n'
    b"        self.w = w\n"
    b"        self.h = h\n"
    b"\n"
    b"    def area(self):\n"
    b'        """Compute the area of the box. Then more words."""\n'
    b"        w = self.w  # width\n"
    b"        h = self.h\n"
    b"        return w * h\n"
    b"\n"
    b"    def test_area(self):\n"
    b'        """Check that the area is right."""\n'
    b"        a = self.area()\n"
    b"        b = a + 1\n"
    b"        return b\n"
    b"\n"
    b"def tiny():\n"
    b'    """Return one as an int."""\n'
    b"    return 1\n"
)
GO = (
    b"package x\n\n"
    b"// Sum returns the total of the values.\n"
    b"func Sum(xs []int) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += x\n\t}\n"
    b"\treturn t\n}\n"
    b"\n// String formats the thing for printing.\n"
    b'func (t T) String() string {\n\ts := "t"\n\ts += "!"\n\treturn s\n}\n'
)
JS = (
    b"/**\n * Adds two numbers and returns the sum.\n * @param {number} a\n */\n"
    b"function add(a, b) {\n  const c = a + b;\n  return c;\n}\n"
    b"/** Adds. */\nfunction plus(a, b) {\n  const c = a + b;\n  return c + 0;\n}\n"
)
JAVA = (
    b"package a;\nclass C {\n"
    b"  /** Makes a new thing with a name. */\n  C(String n) {\n    this.n = n;\n"
    b"    this.m = n;\n  }\n"
    b"  /**\n   * Returns the {@code name} of <b>this</b> thing.\n"
    b"   * @return the name\n   */\n  String name() {\n    String n = this.n;\n"
    b"    return n.trim();\n  }\n}\n"
)


def _src(registry: str, name: str) -> eval_csn.CsnSource:
    return eval_csn.CsnSource(registry, name, "1.0.0", None, None)


def _build(
    registry: str, files: list[tuple[str, bytes]]
) -> tuple[dict[str, bytes], list[dict[str, object]], Counter[str]]:
    dropped: Counter[str] = Counter()
    copy, queries = eval_csn.package_queries(_src(registry, "p"), files, Deduper(), dropped)
    return copy, queries, dropped


def test_the_half_is_a_stable_hash_of_the_query_id() -> None:
    ids = [eval_csn.query_id(_src("pypi", "p"), "a.py", f"a.f{i}") for i in range(400)]
    halves = [half(i) for i in ids]
    assert halves == [half(i) for i in ids]  # the same every time
    assert half("pypi:p:a.py::a.f0") == halves[0]
    assert 150 < halves.count("test") < 250  # about half each


def test_python_queries_target_the_stripped_copy_and_the_filters_drop_the_rest() -> None:
    copy, queries, dropped = _build("pypi", [("pkg/box.py", PY)])
    [q] = queries
    assert q["query"] == "Compute the area of the box."
    assert q["targets"] == ["pkg/box.py::pkg.box.Box.area"]
    assert (q["lang"], q["repo"], q["half"]) == ("python", "pypi+p", half(str(q["id"])))
    text = copy["pkg/box.py"].decode()
    assert '"""' not in text and "# width" not in text and "def area(self):" in text
    assert dropped["constructor_or_boilerplate"] == 1  # __init__
    assert dropped["test_name"] == 1
    assert dropped["short_code"] == 1  # tiny


def test_go_queries_drop_the_leading_name_and_boilerplate_methods() -> None:
    copy, queries, dropped = _build("go", [("x/sum.go", GO)])
    [q] = queries
    assert q["query"] == "returns the total of the values."
    assert q["targets"] == ["x/sum.go::x.sum.Sum"]
    assert "//" not in copy["x/sum.go"].decode()
    assert dropped["constructor_or_boilerplate"] == 1  # String()


def test_javascript_short_docs_and_java_constructors_are_dropped() -> None:
    _, queries, dropped = _build("npm", [("lib/add.js", JS)])
    assert [q["query"] for q in queries] == ["Adds two numbers and returns the sum."]
    assert dropped["short_query"] == 1
    copy, queries, dropped = _build("maven", [("a/C.java", JAVA)])
    assert [q["query"] for q in queries] == ["Returns the name of this thing."]
    assert queries[0]["targets"] == ["a/C.java::a.C.C.name"]
    assert dropped["constructor_or_boilerplate"] == 1
    assert b"/**" not in copy["a/C.java"]


def test_duplicate_code_is_dropped_and_a_shared_sentence_targets_every_symbol() -> None:
    other = (
        b"package a\n\n// Total returns the total of the values.\n"
        b"func Total(m map[string]float64) (out float64) {\n\tkeys := sorted(m)\n"
        b"\tfor i := len(keys) - 1; i >= 0; i-- {\n\t\tout = out + m[keys[i]] * 1.0\n\t}\n"
        b"\treturn\n}\n"
    )
    files = [("a/one.go", GO), ("a/two.go", GO), ("a/three.go", other)]
    _, queries, dropped = _build("go", files)
    assert dropped["duplicate"] == 1
    [q] = queries
    assert q["targets"] == ["a/one.go::a.one.Sum", "a/three.go::a.three.Total"]


@pytest.mark.parametrize(
    ("name", "cls", "reason"),
    [
        ("testParse", None, "test_name"),
        ("parse_latest", None, "test_name"),
        ("__repr__", "A", "constructor_or_boilerplate"),
        ("toString", "A", "constructor_or_boilerplate"),
        ("Widget", "Widget", "constructor_or_boilerplate"),
        ("parse", "A", None),
    ],
)
def test_names_of_tests_constructors_and_boilerplate_are_not_targets(
    name: str, cls: str | None, reason: str | None
) -> None:
    assert eval_csn.name_reason(name, "method", cls) == reason


def test_the_cap_is_a_stable_choice_of_queries() -> None:
    queries = [{"id": f"q{i}"} for i in range(50)]
    kept = eval_csn.cap(queries, 10)
    assert len(kept) == 10 and kept == eval_csn.cap(list(reversed(queries)), 10)
    assert eval_csn.cap(queries, 100) == sorted(queries, key=lambda q: q["id"])


def test_no_csn_package_is_a_training_source() -> None:
    sources = eval_csn.load_sources()
    assert eval_csn.leaks_into_training(sources) == []
    assert {s.registry for s in sources} == {"pypi", "npm", "go", "maven"}
    assert all(s.sha256 and s.licence for s in sources)


def test_the_builder_refuses_when_a_csn_package_is_trained_on(tmp_path: Path) -> None:
    train = tmp_path / "sources.json"
    entry = {"registry": "pypi", "name": "Rich", "version": "13.0.0"}
    train.write_text(json.dumps({"sources": [entry]}))
    sources = [_src("pypi", "rich"), _src("pypi", "not-held-out-anywhere")]
    why = eval_csn.leaks_into_training(sources, train, heldout.load())
    assert why == [
        "pypi:rich is a training source",
        "pypi:not-held-out-anywhere is not in codesearch_evaluation",
    ]
    with pytest.raises(SystemExit, match="refusing to build"):
        eval_csn.build(tmp_path / "out", 10, record=False, train_sources=train)
    assert not (tmp_path / "out").exists()
