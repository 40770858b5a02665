"""The real parser's output through resolution, publish and queries: a small git repository
written by the test, parsed by ``semgraph.indexer.parse`` into a spill, read back."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.reader import GraphReader
from semgraph.graph.writer import GraphWriter, RepoInfo
from semgraph.indexer.parse import parse_repository
from semgraph.indexer.spill import SpillReader
from semgraph.resolve.resolver import resolve

pytestmark = pytest.mark.integration

SOURCES = {
    "app/__init__.py": "",
    "app/util.py": "def helper(x):\n    return x\n\n\ndef render():\n    return 1\n",
    "app/views.py": "def render():\n    return 2\n",
    "app/core.py": (
        "import os\n"
        "from app.util import helper\n"
        "\n"
        "\n"
        "class Base:\n"
        "    def save(self):\n"
        "        return helper(1)\n"
        "\n"
        "\n"
        "class Job(Base):\n"
        "    def run(self):\n"
        "        self.save()\n"
        "        render()\n"
        "        return os.path.join('a', 'b')\n"
    ),
}


def test_parsed_repository_resolves_and_publishes(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    for rel, text in SOURCES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "-m", "x"], check=True)
    spill_path = tmp_path / "spill" / "x.spill"
    parse_repository(settings.model_copy(update={"pool_size": 1}), repo, spill_path)
    spill = SpillReader(spill_path)
    with resolve(lambda: iter(spill), "parsed", tmp_path / "res") as res:
        stats = GraphWriter(graph, settings).publish(
            RepoInfo("parsed", str(repo), "main", "c1"),
            res,
            run_id="p1",
            fingerprint="fp",
            now=1.0,
        )
        assert res.call_counts["python"]["external"] >= 1  # os.path.join
    assert stats.dropped_rows == 0
    reader = GraphReader(graph)
    save = reader.callers("Base.save", repo="parsed")
    assert [(e["qualified_name"], e["tier"]) for e in save.edges] == [
        ("app.core.Job.run", "receiver")
    ]
    helper = reader.callers("helper", repo="parsed")
    assert [(e["qualified_name"], e["tier"]) for e in helper.edges] == [
        ("app.core.Base.save", "import")
    ]
    run = reader.callees("Job.run", repo="parsed")
    assert {(e["qualified_name"], e["tier"]) for e in run.edges} == {
        ("app.core.Base.save", "receiver"),
        ("app.util.render", "ambiguous"),
        ("app.views.render", "ambiguous"),
    }
    assert run.unresolved_in_scope["external"] == 1
