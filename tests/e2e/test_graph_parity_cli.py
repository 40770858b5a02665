"""``semgraph check --graph-parity REPO`` as an operator runs it: equal after an index and
after a delta re-index, DIFFERENT (exit 1, alert) once the graph is changed behind the
publish's back, and a clear error for a repository that was never indexed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from semgraph.db import Graph
from tests.e2e.test_index_cli import semgraph
from tests.repos import POLYGLOT, make_repo

pytestmark = pytest.mark.e2e


def _commit(repo: Path, path: str, text: str) -> None:
    (repo / path).write_text(text)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", f"change {path}"], check=True)


def test_graph_parity_after_index_and_delta_and_tampering(
    graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "polyglot", POLYGLOT)
    done = semgraph("index", str(repo), "--json")
    assert done.returncode == 0, done.stderr
    key = json.loads(done.stdout)["run"]["repo"]
    first = semgraph("check", "--graph-parity", key, "--json")
    assert first.returncode == 0, first.stderr
    body = json.loads(first.stdout)
    assert body["ok"] and body["live_rows"] == body["model_rows"] > 20

    _commit(
        repo,
        "app/extra.py",
        "from app.models import compute_checksum\n\n"
        "def extra(data):\n    return compute_checksum(data)\n",
    )
    again = semgraph("index", str(repo), "--json")
    assert again.returncode == 0, again.stderr
    run = json.loads(again.stdout)["run"]
    assert json.loads(run["stats"])["publish"]["mode"] == "delta"
    delta = semgraph("check", "--graph-parity", key)
    assert delta.returncode == 0, delta.stderr
    assert "graph equal to a full publish" in delta.stdout

    graph.query(
        "tamper",
        "MATCH (s:Symbol {repo: $r, name: 'extra'}) SET s.end_line = 999",
        r=key,
    )
    graph.query("tamper", "MATCH (:Symbol {repo: $r})-[e:CALLS]->() WITH e LIMIT 1 DELETE e", r=key)
    bad = semgraph("check", "--graph-parity", key)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "DIFFERENT" in bad.stdout and "end_line" in bad.stdout
    # two nodes are named 'extra' (the module and its function): each changed node is one row
    # only in the graph and one missing; the deleted edge is one more missing
    assert "2 only in the graph, 3 missing" in bad.stdout
    assert "index_diverged" in bad.stderr  # the divergence alert fired (logged at CRITICAL)


@pytest.mark.parametrize("repo", ["never/indexed", "", "x" * 5000, "../../etc/passwd"])
def test_graph_parity_of_an_unknown_repository_is_a_clear_error(graph: Graph, repo: str) -> None:
    result = semgraph("check", "--graph-parity", repo)
    assert result.returncode != 0
    assert "has no published graph" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
