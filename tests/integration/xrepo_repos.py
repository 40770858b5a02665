"""Small repositories that depend on one another, through the real parser, resolver and
graph server, for the cross-repository link tests (issue 30)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.publish_stats import PublishStats
from semgraph.graph.writer import GraphWriter, RepoInfo
from semgraph.indexer.manifests_read import read_identity
from semgraph.indexer.parse import parse_repository
from semgraph.indexer.spill import SpillReader
from semgraph.resolve.resolver import resolve
from tests.repos import make_repo

LIB = {
    "pyproject.toml": '[project]\nname = "Lib"\n',
    "src/lib/__init__.py": "from .app import Flask\n",
    "src/lib/app.py": (
        "class Flask:\n    def route(self):\n        pass\n\n\ndef helper():\n    pass\n"
    ),
}
SVC = {
    "pyproject.toml": '[project]\nname = "svc"\ndependencies = ["lib>=1", "requests"]\n',
    "svc/main.py": (
        "import lib\nimport lib.app\nfrom lib import Flask\n\n\n"
        "def go():\n    lib.Flask()\n    Flask()\n    lib.app.helper()\n    lib.missing()\n"
        "    lib.Flask.route(None)\n"
    ),
    "svc/other.py": "import requests\n\n\ndef get():\n    requests.get('x')\n",
}
GOLIB = {
    "go.mod": "module example.com/lib\n\ngo 1.22\n",
    "pkg/a.go": "package pkg\n\ntype T struct{}\n\nfunc (t T) M() {}\n\nfunc F() {}\n",
}
GOSVC = {
    "go.mod": "module example.com/svc\n\ngo 1.22\n\nrequire example.com/lib v1.0.0\n",
    "main.go": 'package main\n\nimport "example.com/lib/pkg"\n\nfunc main() {\n\tpkg.F()\n}\n',
}


def publish(
    graph: Graph,
    settings: Settings,
    tmp_path: Path,
    files: Mapping[str, str],
    name: str,
    commit: str = "c1",
    *,
    delta: bool = True,
) -> PublishStats:
    """Index ``files`` as repository ``name`` at ``commit`` (the link included)."""
    work = tmp_path / f"{name}-{commit}"
    repo = make_repo(work / "repo", files)
    return publish_tree(graph, settings, work, repo, name, commit, delta=delta)


def publish_tree(
    graph: Graph,
    settings: Settings,
    work: Path,
    repo: Path,
    name: str,
    commit: str,
    *,
    delta: bool = True,
) -> PublishStats:
    """Index the work tree ``repo`` as ``name`` at ``commit``: the graph phases of the
    reindex job (manifests, parse, resolve, publish with its link); ``work`` is scratch."""
    work.mkdir(parents=True, exist_ok=True)
    spill_path = work / f"{name}-{commit}.spill"
    parse_repository(settings.model_copy(update={"pool_size": 1}), repo, spill_path)
    spill = SpillReader(spill_path)
    info = RepoInfo(name, str(repo), "main", commit, read_identity(repo))
    with resolve(lambda: iter(spill), name, work / f"{name}-{commit}-res") as res:
        stats = GraphWriter(graph, settings).publish(
            info, res, run_id=f"{name}-{commit}", fingerprint="fp", now=1.0, delta=delta
        )
    assert stats.dropped_rows == 0
    return stats


def xcalls(graph: Graph, repo: str) -> set[tuple[Any, ...]]:
    """(caller qn, line, callee repo, callee qn, tier, commit, via) of every link of ``repo``."""
    with graph.session() as s:
        rows = s.run(
            "MATCH (a:Symbol {repo: $repo})-[e:XCALLS]->(b:Symbol) "
            "RETURN a.qualified_name AS a, e.line AS line, b.repo AS repo, "
            "b.qualified_name AS b, e.tier AS tier, e.commit AS commit, e.via AS via",
            repo=repo,
        )
        return {tuple(r.values()) for r in rows}


def counts(graph: Graph, repo: str) -> dict[str, int]:
    with graph.session() as s:
        r = s.run(
            "MATCH (r:Repository {key: $repo}) RETURN r.xrepo_linked AS linked, "
            "r.xrepo_ambiguous AS ambiguous, r.xrepo_unprovided AS unprovided, "
            "r.xrepo_unmatched AS unmatched",
            repo=repo,
        ).single()
        assert r is not None
        return dict(r)
