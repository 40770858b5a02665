"""The accuracy benchmark's matching and scoring (bench.accuracy.accuracy_score, the readers of
bench.accuracy.accuracy_oracles, bench.accuracy.bench_accuracy.our_sites,
bench.harness.figures.accuracy): small hand-made oracle answers and resolver rows, no oracle
run."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from bench.accuracy.accuracy_oracles import Definitions, go_calls, read_callgraph, read_jedi
from bench.accuracy.accuracy_score import OracleSite, OurSite, receiver_shape, score
from bench.accuracy.bench_accuracy import our_sites
from bench.harness import records
from bench.harness.figures import MET, MISSED
from bench.harness.figures.accuracy import figures_accuracy


def test_score_counts_right_wrong_false_and_recall() -> None:
    oracle = {
        ("a.py", 1, "f"): OracleSite(internal={"F"}),
        ("a.py", 2, "g"): OracleSite(internal={"G"}),
        ("a.py", 3, "h"): OracleSite(external=1),
        ("a.py", 4, "k"): OracleSite(),
        ("a.py", 5, "m"): OracleSite(internal={"M1", "M2"}),
        ("a.py", 6, "n"): OracleSite(internal={"N"}),
        ("a.py", 7, "v"): OracleSite(nondef=["a.py:1 v (statement)"]),
    }
    ours = {
        ("a.py", 1, "f"): OurSite("resolved", "import", {"F"}),
        ("a.py", 2, "g"): OurSite("resolved", "module", {"OTHER"}),  # wrong target
        ("a.py", 3, "h"): OurSite("resolved", "unique", {"H"}),  # oracle: external
        ("a.py", 4, "k"): OurSite("resolved", "unique", {"K"}),  # oracle: nothing
        ("a.py", 5, "m"): OurSite("ambiguous", None, {"M2", "X"}, receiver="x"),
        ("a.py", 7, "v"): OurSite("resolved", "unique", {"V"}),  # oracle: a variable
        ("a.py", 9, "z"): OurSite("resolved", "unique", {"Z"}),  # no oracle site
    }
    s = score(oracle, ours)
    assert s.internal == 4 and s.found == 1 and s.found_with_ambiguous == 2
    assert s.recall == pytest.approx(0.25) and s.recall_ambiguous == pytest.approx(0.5)
    assert s.tiers["import"].counts["correct"] == 1
    assert s.tiers["module"].counts["wrong"] == 1
    unique = s.tiers["unique"].counts
    assert (unique["false_external"], unique["false_none"], unique["false_nondef"]) == (1, 1, 1)
    assert unique["unmatched"] == 1
    total = s.all_tiers
    assert total.precision_in_repo == pytest.approx(0.5)  # 1 right, 1 wrong
    assert total.precision_all == pytest.approx(1 / 5)  # unmatched left out of both views
    assert s.tiers["unique"].precision_in_repo is None  # nothing the oracle resolves inside
    assert s.misses == {
        "resolved elsewhere / bare f()": 1,
        "ambiguous, right candidate / name.m()": 1,
        "no call site / bare f()": 1,
    }
    assert s.oracle == {"internal": 4, "external": 1, "none": 1, "nondef": 1}
    assert s.examples["wrong (module)"][0]["site"] == "a.py:2"


def test_oracle_verdict_prefers_an_internal_answer() -> None:
    assert OracleSite(internal={"A"}, external=2).verdict == "internal"
    assert OracleSite(nondef=["x"], external=1).verdict == "nondef"
    assert OracleSite(external=1).verdict == "external"
    assert OracleSite(error=True).verdict == "none"


@pytest.mark.parametrize(
    ("receiver", "shape"),
    [
        (None, "bare f()"),
        ("  ", "bare f()"),
        ("super()", "super().m()"),
        ("self", "self.m()"),
        ("self.repo", "self.attr.m()"),
        ("a.b().c", "chained a.b().m()"),
        ("ctx", "name.m()"),
        ("Config", "Name.m()"),
        ("os.path", "a.b.m()"),
    ],
)
def test_receiver_shape(receiver: str | None, shape: str) -> None:
    assert receiver_shape(receiver) == shape


def test_definitions_pick_the_innermost_with_the_name() -> None:
    defs = Definitions(
        [
            ("C", "m.py", "C", 1, 20),
            ("C.run", "m.py", "run", 3, 8),
            ("C.run.run", "m.py", "run", 5, 6),
            ("run", "n.py", "run", 1, 2),
        ]
    )
    assert defs.at("m.py", 5, "run") == "C.run.run"
    assert defs.at("m.py", 3, "run") == "C.run"
    assert defs.at("m.py", 3, "C") == "C"
    assert defs.at("m.py", 30, "run") is None
    assert defs.at("other.py", 1, "run") is None


def test_read_jedi_merges_one_key_and_keeps_non_definitions(tmp_path: Path) -> None:
    defs = Definitions([("F", "a.py", "f", 1, 3)])
    rows = [
        {
            "path": "b.py",
            "line": 4,
            "col": 0,
            "name": "f",
            "external": 0,
            "targets": [{"path": "a.py", "line": 1, "name": "f", "type": "function"}],
        },
        {"path": "b.py", "line": 4, "col": 9, "name": "f", "external": 1, "targets": []},
        {
            "path": "b.py",
            "line": 5,
            "col": 0,
            "name": "g",
            "external": 0,
            "targets": [{"path": "b.py", "line": 1, "name": "g", "type": "statement"}],
        },
        {"path": "b.py", "line": 6, "col": 0, "name": "h", "targets": [], "error": "KeyError"},
    ]
    p = tmp_path / "o.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    sites = read_jedi(p, defs)
    assert sites[("b.py", 4, "f")].internal == {"F"} and sites[("b.py", 4, "f")].external == 1
    assert sites[("b.py", 5, "g")].verdict == "nondef"
    assert sites[("b.py", 6, "h")].error and sites[("b.py", 6, "h")].verdict == "none"


GO_SRC = b"""package p

func Run() int { return 1 }

func use(b *B) {
\tdefer Run()
\tb.
\t\tHandle().
\t\tWith(2)
\tgo b.Stop()
\tf := func() {}
\tf()
}
"""


def test_go_calls_key_each_call_by_its_paren_and_go_defer_by_the_keyword(
    tmp_path: Path,
) -> None:
    (tmp_path / "p.go").write_bytes(GO_SRC)
    calls = go_calls(tmp_path, ["p.go", "missing.go"])
    by_key = {v: k for k, v in calls.items()}
    assert set(by_key) == {
        ("p.go", 6, "Run"),
        ("p.go", 7, "Handle"),
        ("p.go", 7, "With"),  # the chain's line is where the call node starts, as semgraph's
        ("p.go", 10, "Stop"),
        ("p.go", 12, "f"),
    }
    defer_at = GO_SRC.index(b"defer")
    assert calls[("p.go", defer_at)] == ("p.go", 6, "Run")
    assert calls[("p.go", GO_SRC.index(b"(2)"))] == ("p.go", 7, "With")


def test_read_callgraph_maps_targets_externals_and_closures(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "p.go").write_bytes(GO_SRC)
    files = tmp_path / "files"
    files.write_text("p.go\n")
    pre = str(root.resolve())
    lines = [
        f"{pre}/p.go\t{GO_SRC.index(b'defer')}\t{pre}/p.go\t3\tRun\tstatic",
        f"{pre}/p.go\t{GO_SRC.index(b'(2)')}\t/usr/local/go/src/x.go\t9\tWith\tstatic",
        f"{pre}/p.go\t{GO_SRC.index(b'f()') + 1}\t{pre}/p.go\t11\tuse$1\tstatic",
        f"/elsewhere/q.go\t10\t{pre}/p.go\t3\tRun\tstatic",  # a site outside: ignored
        "malformed line",
    ]
    edges = tmp_path / "edges"
    edges.write_text("\n".join(lines) + "\n")
    defs = Definitions([("RUN", "p.go", "Run", 3, 3), ("USE", "p.go", "use", 5, 13)])
    sites, covered = read_callgraph(root, edges, files, defs)
    assert covered == {"p.go"}
    assert sites[("p.go", 6, "Run")].internal == {"RUN"}
    assert sites[("p.go", 7, "With")].verdict == "external"
    assert sites[("p.go", 12, "f")].verdict == "nondef"  # a function literal, not `use`
    assert sites[("p.go", 7, "Handle")].verdict == "none"


def test_our_sites_attach_edges_by_line_and_callee_name() -> None:
    db = sqlite3.connect(":memory:")
    db.executescript(
        """
        CREATE TABLE files (path TEXT, language TEXT);
        CREATE TABLE calls_raw (id INTEGER PRIMARY KEY, path TEXT, enclosing TEXT,
                                callee TEXT, receiver TEXT, line INTEGER);
        CREATE TABLE symbols (key TEXT, path TEXT, name TEXT);
        CREATE TABLE call_edges (src_key TEXT, dst_key TEXT, line INTEGER, tier TEXT,
                                 candidates INTEGER);
        INSERT INTO files VALUES ('a.py', 'python'), ('b.go', 'go');
        INSERT INTO calls_raw (path, enclosing, callee, receiver, line) VALUES
          ('a.py', 'm', 'f', NULL, 1), ('a.py', 'm', 'g', 'x', 1),
          ('a.py', 'm', 'h', NULL, 2), ('a.py', 'm', 'k', NULL, 3), ('b.go', 'm', 'f', NULL, 1);
        INSERT INTO symbols VALUES ('M', 'a.py', 'm'), ('F', 'a.py', 'f'),
          ('G1', 'a.py', 'g'), ('G2', 'a.py', 'g'), ('HC', 'a.py', 'H');
        INSERT INTO call_edges VALUES ('M', 'F', 1, 'import', 1),
          ('M', 'G1', 1, 'ambiguous', 2), ('M', 'G2', 1, 'ambiguous', 2),
          ('M', 'HC', 2, 'unique', 1), ('M', 'F', 7, 'module', 1);
        """
    )
    sites, stray = our_sites(db, "python", None)
    assert set(sites) == {("a.py", 1, "f"), ("a.py", 1, "g"), ("a.py", 2, "h"), ("a.py", 3, "k")}
    assert (sites[("a.py", 1, "f")].cls, sites[("a.py", 1, "f")].tier) == ("resolved", "import")
    assert sites[("a.py", 1, "g")].cls == "ambiguous"
    assert sites[("a.py", 1, "g")].targets == {"G1", "G2"}
    assert sites[("a.py", 1, "g")].receiver == "x"
    assert sites[("a.py", 2, "h")].targets == {"HC"}  # the only site on its line
    assert sites[("a.py", 3, "k")].cls == "no edge"
    assert stray == 0  # line 7 has no site: not counted as a stray edge of a site
    only, _ = our_sites(db, "python", {"other.py"})
    assert only == {}


def _out(repo: dict[str, object], *tiers: dict[str, object]) -> str:
    lines = [records.line("accuracy.repo", **repo)]
    lines += [records.line("accuracy.tier", **t) for t in tiers]
    return "noise\n" + "\n".join(lines) + "\n{not json\n"


def test_figures_judge_the_issue_targets() -> None:
    repo = {
        "repo": "click",
        "language": "python",
        "commit": "abc",
        "internal_sites": 100,
        "recall": 0.9,
        "recall_ambiguous": 0.95,
        "precision_in_repo": 0.995,
        "precision_all": 0.98,
        "correct": 90,
        "wrong": 0,
        "false_edges": 2,
    }
    tiers = [
        {
            "repo": "click",
            "tier": "import",
            "correct": 50,
            "wrong": 1,
            "precision_in_repo": 0.98,
            "precision_all": 0.98,
            "recall_share": 0.5,
        },
        {
            "repo": "click",
            "tier": "unique",
            "correct": 40,
            "false_none": 2,
            "precision_in_repo": 1.0,
            "precision_all": 0.95,
            "recall_share": 0.4,
        },
    ]
    figs = {f.name.split(",")[0]: f for f in figures_accuracy(_out(repo, *tiers), None)}
    assert figs["recall"].verdict == MET and figs["recall"].value == "0.900"
    assert figs["precision over sites the oracle resolves in the repository"].verdict == MET
    assert figs["precision over all sites"].verdict == MISSED
    wrong = next(f for n, f in figs.items() if n.startswith("wrong targets"))
    assert wrong.value == "1" and wrong.verdict == MISSED
    assert any(n.startswith("tier unique") for n in figs)
    assert "2 edges the oracle says" in figs["precision over all sites"].baseline
    split = {**repo, "false_external": 1, "false_nondef": 0, "false_none": 1}
    figs = {f.name.split(",")[0]: f for f in figures_accuracy(_out(split, *tiers), None)}
    assert figs["precision over all sites"].baseline.startswith("2 false edges: 1 external")


def test_accuracy_stays_out_of_the_quick_run() -> None:
    from bench.harness.benches import BENCHES

    accuracy = next(b for b in BENCHES if b.name == "accuracy")
    assert accuracy.in_quick is False and accuracy.default == []


def test_figures_without_records_say_not_measured() -> None:
    assert figures_accuracy("nothing here\n", None) == []
    figs = figures_accuracy("nothing here\n", [])
    assert len(figs) == 1 and figs[0].verdict == "**not measured**"
