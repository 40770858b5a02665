"""The history part's pure logic: per-file aggregation of commit hits, the lift of the hybrid
search, the evidence line's bound, the option's parsing, and the history documents."""

from __future__ import annotations

import re
from typing import Any

import pytest

from semgraph.config import Settings
from semgraph.errors import SearchQueryError
from semgraph.localize.rank import OPTIONS_PATTERN, Board, LocalizeOptions
from semgraph.search.bodies import CREATE_STAGING_MAPPING, history_body, history_filters
from semgraph.search.history import Commit, doc_id, document, history_fingerprint
from semgraph.search.history_query import (
    EVIDENCE_CHARS,
    commit_evidence,
    evidence_of,
    lifted,
    per_file,
)
from semgraph.search.hits import SearchHit


def hit(path: str, sha: str, score: float, subject: str = "s", index: str = "i") -> dict[str, Any]:
    return {
        "_index": index,
        "_score": score,
        "_source": {"history_path": path, "history_sha": sha, "history_subject": subject},
    }


def test_per_file_sums_the_best_three_commits_and_scales_to_one() -> None:
    hits = [hit("a.py", f"{i}" * 40, 8.0 - i) for i in range(5)] + [hit("b.py", "f" * 40, 4.0)]
    files = per_file(hits)
    a, b = files[("i", "a.py")], files[("i", "b.py")]
    assert a.score == 1.0 and len(a.commits) == 3
    assert b.score == pytest.approx(4.0 / (8 + 7 / 2 + 6 / 4))
    assert sum(share for _, _, share in a.commits) == pytest.approx(1.0)


def test_per_file_ignores_malformed_hits_and_keeps_indexes_apart() -> None:
    hits: list[dict[str, Any]] = [
        {"_index": "i", "_score": 1.0, "_source": {}},
        {"_index": "i", "_score": None, "_source": {"history_path": 3}},
        hit("a.py", "a" * 40, 2.0, index="one"),
        hit("a.py", "b" * 40, 1.0, index="two"),
    ]
    files = per_file(hits)
    assert set(files) == {("one", "a.py"), ("two", "a.py")}
    assert per_file([]) == {} and per_file([hit("a.py", "a", 0.0)]) == {}


def test_lift_reorders_by_file_history_and_keeps_ties_in_order() -> None:
    fused = [("d1", 1.0), ("d2", 0.9), ("d3", 0.9)]
    file_of = {"d1": ("i", "x.py"), "d2": ("i", "y.py"), "d3": ("i", "z.py")}
    files = per_file([hit("z.py", "a" * 40, 5.0)])
    assert lifted(fused, file_of, files, 0.5)[0] == ("d3", 1.4)
    assert [d for d, _ in lifted(fused, file_of, {}, 0.5)] == ["d1", "d2", "d3"]
    assert evidence_of(files, ("i", "z.py")) == ["commit aaaaaaa: s"]
    assert evidence_of(files, ("i", "x.py")) is None and evidence_of({}, ("i", "z.py")) is None


def test_evidence_is_bounded_and_on_one_line() -> None:
    line = commit_evidence("1a2b3c4d" * 5, "fix\ttimezone\nparsing " + "x" * 10_000)
    assert line.startswith("commit 1a2b3c4: fix timezone parsing")
    assert len(line) == EVIDENCE_CHARS and "\n" not in line


def test_history_option_parses_and_the_pattern_admits_it() -> None:
    assert LocalizeOptions.parse("history=0.5").history == 0.5
    assert LocalizeOptions.parse("history=0").history == 0
    assert re.match(OPTIONS_PATTERN, "chunks=1,history=0.25")
    for bad in ("history=-1", "history=101", "history=x", "history"):
        with pytest.raises(SearchQueryError):
            LocalizeOptions.parse(bad)


def test_history_evidence_ranks_a_file_on_the_board() -> None:
    board = Board(LocalizeOptions(history=1.0), {})
    board.file_evidence("a.py", "history", commit_evidence("a" * 40, "fix it"), 0.8)
    board.file_evidence("a.py", "history", "y" * 1000, 0.0)  # weight 0: nothing
    ranked = board.ranked(5)
    assert ranked[0]["path"] == "a.py" and ranked[0]["score"] == 0.8
    assert [e["detail"] for e in ranked[0]["evidence"]] == ["commit aaaaaaa: fix it"]


def test_hit_to_dict_names_history_only_when_it_matched() -> None:
    base = SearchHit("r", "p", 1, 2, None, None, "python", 0.5, "", "run", "idx")
    assert "history" not in base.to_dict()
    base.history = ["commit aaaaaaa: x"]
    assert base.to_dict()["history"] == ["commit aaaaaaa: x"]


def test_documents_fit_the_mapping_and_hostile_text() -> None:
    c = Commit("a" * 40, 5, "caf\udce9 fix", "body parse_when", ("src/f\udce9.py",))
    doc = document("repo", "run", c.paths[0], c)
    assert set(doc) <= set(CREATE_STAGING_MAPPING["properties"])
    doc_text = str(doc)
    assert "\udce9" not in doc_text and "parse_when" in doc["history_text"]
    assert doc_id("a.py", c.sha) != doc_id("b.py", c.sha)
    assert len(doc_id("x" * 10_000, "f" * 64)) < 100


def test_history_query_is_bounded_and_filtered() -> None:
    body = history_body("word " * 100_000, history_filters(repo="r", path_prefix="src/"), 100)
    words = body["query"]["bool"]["must"][0]["match"]["history_text"].split()
    assert len(words) <= 256
    assert {"prefix": {"history_path": "src/"}} in body["query"]["bool"]["filter"]


def test_fingerprint_follows_the_history_settings() -> None:
    assert history_fingerprint(Settings()) == history_fingerprint(Settings())
    assert history_fingerprint(Settings()) != history_fingerprint(
        Settings(history_commits_per_file=3)
    )


def test_the_console_lists_a_hits_commits_escaped() -> None:
    from semgraph.web.console.code_pages import _hit

    row = {
        "repo": "r",
        "path": "a.py",
        "start_line": 1,
        "end_line": 2,
        "snippet": "x",
        "history": ["commit aaaaaaa: <script>fix</script>"],
    }
    html = _hit(row, "fix")
    assert '<ul class="history"><li>commit aaaaaaa: &lt;script&gt;' in html
    assert "<ul" not in _hit({**row, "history": None}, "fix")
