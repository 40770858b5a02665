"""The Java oracle's reading (bench.accuracy.accuracy_java): javac's JSON lines, hand-made, into
scoring sites against semgraph definitions; the lenient overload view; the Java rows of the
report (bench.harness.figures.accuracy). No javac run."""

from __future__ import annotations

import json
from typing import Any

from bench.accuracy.accuracy_java import any_overload, overload_fields, read_javac
from bench.accuracy.accuracy_java_classes import SAME_PACKAGE, VARARGS, Defs, arity, classify
from bench.accuracy.accuracy_oracles import Definitions
from bench.accuracy.accuracy_score import OracleSite, OurSite, score
from bench.harness import records
from bench.harness.figures.accuracy import figures_accuracy

A = "r|p/A.java|A"
F1, F2 = "r|p/A.java|A.f", "r|p/A.java|A.f|2"
CTOR = "r|p/A.java|A.A"
DEFS = Definitions(
    [
        (A, "p/A.java", "A", 3, 30),
        (CTOR, "p/A.java", "A", 5, 6),
        (F1, "p/A.java", "f", 8, 8),
        (F2, "p/A.java", "f", 9, 9),
    ]
)


def _in_repo(line: int, callee: str, kind: str, name: str, tline: int) -> dict[str, Any]:
    return {
        "path": "p/B.java",
        "line": line,
        "callee": callee,
        "kind": kind,
        "class": "p.A",
        "name": name,
        "in_repo": True,
        "target": "p/A.java",
        "target_line": tline,
        "declaring": "A",
        "class_line": 3,
    }


def _lines(*rows: dict[str, Any] | str) -> list[str]:
    return [r if isinstance(r, str) else json.dumps(r) for r in rows]


def test_read_javac_names_definitions_external_unknown_and_files() -> None:
    read = read_javac(
        _lines(
            {"file": "p/B.java"},
            _in_repo(4, "f", "call", "f", 9),
            {
                "path": "p/B.java",
                "line": 5,
                "callee": "add",
                "kind": "call",
                "class": "java.util.List",
                "name": "add",
            },
            {"path": "p/B.java", "line": 6, "callee": "foo", "kind": "call", "unknown": True},
            _in_repo(7, "values", "call", "values", 0),  # made by the compiler
            _in_repo(8, "f", "call", "f", 40),  # a line no definition of semgraph's holds
        ),
        DEFS,
    )
    assert read.files == {"p/B.java"}
    assert read.sites[("p/B.java", 4, "f")].internal == {F2}  # the exact overload
    assert read.sites[("p/B.java", 5, "add")].verdict == "external"
    assert read.sites[("p/B.java", 6, "foo")].verdict == "none"  # unknown, never external
    assert read.sites[("p/B.java", 7, "values")].verdict == "nondef"
    assert read.sites[("p/B.java", 8, "f")].nondef == ["p/A.java:40 f"]
    assert not read.skipped


def test_read_javac_new_names_the_class_and_a_declared_constructor() -> None:
    read = read_javac(
        _lines(
            _in_repo(4, "A", "new", "A", 5),
            _in_repo(5, "p.A", "new", "A", 0),  # a default constructor: the class alone
        ),
        DEFS,
    )
    assert read.sites[("p/B.java", 4, "A")].internal == {A, CTOR}
    assert read.sites[("p/B.java", 5, "p.A")].internal == {A}


def test_read_javac_merges_one_key_and_counts_what_it_leaves_out() -> None:
    read = read_javac(
        _lines(
            _in_repo(4, "f", "call", "f", 8),
            _in_repo(4, "f", "call", "f", 9),
            {"path": "p/B.java", "line": 4, "callee": "f", "kind": "call", "unknown": True},
            _in_repo(5, "this", "chain", "A", 5),
            "not json",
            "[1, 2]",
            json.dumps({"path": "p/B.java", "line": "7", "callee": "f"}),
            "",
        ),
        DEFS,
    )
    site = read.sites[("p/B.java", 4, "f")]
    assert site.internal == {F1, F2} and site.error and site.verdict == "internal"
    assert list(read.sites) == [("p/B.java", 4, "f")]
    assert read.skipped == {"chain": 1, "malformed": 4}


def test_read_javac_of_nothing_is_empty() -> None:
    read = read_javac([], DEFS)
    assert not read.sites and not read.files and not read.skipped


def test_any_overload_widens_to_the_siblings_only() -> None:
    other = "r|p/A.java|A.g"
    sites = {
        ("p/B.java", 4, "f"): OracleSite(internal={F2}),
        ("p/B.java", 5, "g"): OracleSite(internal={other}, external=1),
        ("p/B.java", 6, "h"): OracleSite(error=True),
    }
    wide = any_overload(sites, [A, CTOR, F1, F2, other])
    assert wide[("p/B.java", 4, "f")].internal == {F1, F2}
    assert wide[("p/B.java", 5, "g")].internal == {other}
    assert wide[("p/B.java", 6, "h")].verdict == "none"
    assert sites[("p/B.java", 4, "f")].internal == {F2}  # the strict view is left alone


def test_a_sibling_overload_is_wrong_strictly_and_right_leniently() -> None:
    truth = {("p/B.java", 4, "f"): OracleSite(internal={F2})}
    ours = {("p/B.java", 4, "f"): OurSite("resolved", "receiver", {F1})}
    assert score(truth, ours).all_tiers.counts["wrong"] == 1
    lenient = score(any_overload(truth, DEFS.keys()), ours)
    read = read_javac(_lines({"file": "p/B.java"}, _in_repo(5, "this", "chain", "A", 5)), DEFS)
    fields = overload_fields(read, lenient)
    assert fields["wrong_any_overload"] == 0 and fields["recall_any_overload"] == 1.0
    assert fields["oracle_chain_sites"] == 1 and fields["oracle_files"] == 1


def test_figures_of_a_java_repository_say_what_javac_said() -> None:
    repo = {
        "repo": "gson",
        "language": "java",
        "commit": "9835b6f90192",
        "oracle_sites": {"internal": 10, "external": 5, "none": 2, "nondef": 1},
        "internal_sites": 10,
        "recall": 0.5,
        "recall_ambiguous": 0.7,
        "precision_in_repo": 1.0,
        "precision_all": 0.9,
        "correct": 5,
        "wrong": 0,
        "false_edges": 1,
        "false_external": 0,
        "false_nondef": 0,
        "false_none": 1,
        "oracle_chain_sites": 3,
        "oracle_files": 4,
        "recall_any_overload": 0.6,
        "recall_ambiguous_any_overload": 0.7,
        "precision_in_repo_any_overload": 1.0,
        "wrong_any_overload": 0,
    }
    out = records.line("accuracy.repo", **repo) + "\n"
    figs = {f.name.split(",")[0]: f for f in figures_accuracy(out, None)}
    sites = figs["call sites javac attributes in the repository"]
    assert sites.value == "10" and "5 external" in sites.baseline and "2 unknown" in sites.baseline
    assert "3 this()/super() left out" in sites.baseline and sites.ratio == "4 files"
    assert figs["recall / precision in repository"].value == "0.600 / 1.000"
    assert "javac" in figs["precision over all sites"].baseline


def test_figures_of_a_python_repository_have_no_javac_rows() -> None:
    repo = {"repo": "click", "language": "python", "internal_sites": 1, "recall": 1.0}
    repo |= {"recall_ambiguous": 1.0, "precision_in_repo": 1.0, "precision_all": 1.0}
    repo |= {"correct": 1, "wrong": 0, "false_edges": 0}
    names = [f.name for f in figures_accuracy(records.line("accuracy.repo", **repo), None)]
    assert names and not any("javac" in n or "any overload" in n for n in names)


def test_arity_of_java_signatures() -> None:
    assert arity("public void f()") == 0
    assert arity("void f(Map<String, List<Integer>> m, int x)") == 2
    assert arity("static String format(String fmt, Object... args)") == VARARGS
    assert arity("class Foo") is None and arity(None) is None


def test_classify_sorts_one_disagreement_each() -> None:
    defs = Defs(
        kind={F1: "method", F2: "method", A: "class", CTOR: "method"},
        arity={F1: 1, F2: 2, CTOR: 1},
    )
    site = ("p/B.java", 4, "f")
    truth = OracleSite(internal={F2})
    both = OurSite("ambiguous", None, {F1, F2})
    assert "argument count settles it" in classify(site, truth, both, {"args": 2}, defs)
    assert "does not" in classify(site, truth, both, {"args": 3}, defs)
    assert classify(site, truth, None, {}, defs) == "no semgraph call site"
    shadow = OurSite("resolved", "receiver", {F1})
    assert "another arity" in classify(site, truth, shadow, {"args": 2}, defs)
    new = OurSite("resolved", "scope", {CTOR})
    assert "javac names the class" in classify(site, OracleSite(internal={A}), new, {}, defs)
    none = OurSite("unresolved", receiver="new B()")
    assert classify(site, truth, none, {}, defs) == "no edge: receiver `new T(...)`"
    local = OurSite("unresolved", receiver="a")
    row = {"recv": "p.A", "recv_var": "LOCAL_VARIABLE A"}
    assert classify(site, truth, local, row, defs) == "no edge: local_variable of a declared type"
    lam = {"recv": "p.A", "recv_var": "PARAMETER "}
    assert "untyped in source" in classify(site, truth, local, lam, defs)
    test_site = ("src/test/java/p/BTest.java", 4, "f")
    main = OracleSite(internal={"r|src/main/java/p/A.java|A.f"})
    assert classify(test_site, main, local, row, defs).endswith(SAME_PACKAGE)
