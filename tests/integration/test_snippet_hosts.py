"""``get_snippet`` never depends on which host indexed (issue 26, item 3): a repository
indexed on host A (its own state directory) answers the same lines on host B (an empty state
directory), from the search index while it has the file's chunks, and from git (the
published blob out of a mirror the serving host fetches on demand) when the index is gone
or Elasticsearch is unreachable. The answer is the
published blob even after the source moved on; a blob the source does not have is a miss,
never other bytes; hostile paths and ranges are ``invalid_argument``."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph, connect_search
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest
from semgraph.mcp.backend import Backend
from semgraph.mcp.tokens import TokenCounter
from semgraph.mcp.tools import Tools
from semgraph.queue.store import JobStore
from semgraph.search.index import SearchIndex
from tests.repos import commit, make_repo
from tests.shared_kinds import shared_embedder, shared_search

# blank lines inside and between functions, indented whitespace-only lines, a CRLF line
SOURCE = (
    '"""Snippets from any host."""\n'
    "\n"
    "\n"
    "def first(a, b):\n"
    "    total = a + b\n"
    "    \n"
    "    return total\n"
    "\n"
    "   \n"
    "class Second:\n"
    "    def method(self):\n"
    "        return first(1, 2)\r\n"
    "\n"
    "\n"
)
FILES = {"pkg/__init__.py": "", "pkg/mod.py": SOURCE, "README.md": "# hosts\n\nOne repo.\n"}
KEEP = ("status", "path", "blob_sha", "start_line", "end_line", "has_more", "file_last_line")


def _host(settings: Settings, root: Path) -> Settings:
    return settings.model_copy(update={"state_dir": root, "mirrors_dir": None})


def _index(host: Settings, graph: Graph, repo: Path) -> str:
    """Index ``repo`` on ``host``; returns its key."""
    request = ReindexRequest(source=str(repo))
    run = Reindex(host, graph, shared_search(host), request, embedder=shared_embedder(host))
    return run.run().repo_key


def _tools(settings: Settings, graph: Graph, es: Elasticsearch) -> Tools:
    store = JobStore(graph, settings)
    return Tools(Backend(settings, graph, es, store, TokenCounter(settings)))


def _snippet(tools: Tools, key: str, path: str, **lines: Any) -> dict[str, Any]:
    return tools.call("get_snippet", None, {"repo": key, "path": path, **lines})


def _same(answer: dict[str, Any]) -> tuple[Any, ...]:
    """What must not depend on the host or the store: the lines (a whitespace-only line the
    index does not hold comes back empty from it and verbatim from git) and the window."""
    text = tuple(line if line.strip() else "" for line in answer["text"].split("\n"))
    return (*(answer[k] for k in KEEP), text)


def test_snippets_are_the_same_from_any_host(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "src", FILES)
    host_a = _host(settings, tmp_path / "host-a")
    key = _index(host_a, graph, repo)
    on_a = _tools(host_a, graph, es)
    host_b = _host(settings, tmp_path / "host-b")
    on_b = _tools(host_b, graph, es)

    windows: list[dict[str, Any]] = [{}, {"end_line": 5}, {"start_line": 6}, {"start_line": 9}]
    indexed = [_snippet(on_a, key, "pkg/mod.py", **w) for w in windows]
    assert [a["source"] for a in indexed] == ["search_index"] * 4, indexed
    assert indexed[0]["file_last_line"] == 12 and indexed[0]["end_line"] == 12
    assert "def first(a, b):" in indexed[0]["text"]
    assert [_same(_snippet(on_b, key, "pkg/mod.py", **w)) for w in windows] == [
        _same(a) for a in indexed
    ]
    assert not (tmp_path / "host-b").exists()  # host B read nothing of its own disk

    # Elasticsearch unreachable from host C: the same lines, from git
    host_c = _host(settings, tmp_path / "host-c").model_copy(
        update={"es_url": "http://127.0.0.1:9", "es_request_timeout_s": 2.0}
    )
    with closing(connect_search(host_c)) as dead:
        on_c = _tools(host_c, graph, dead)
        unreachable = [_snippet(on_c, key, "pkg/mod.py", **w) for w in windows]
    assert [a["source"] for a in unreachable] == ["git"] * 4, unreachable
    assert [_same(a) for a in unreachable] == [_same(a) for a in indexed]

    # the index loses the repository, and the source moves on: both hosts read the
    # published blob from git; host B fetches a mirror of its own to do so
    live = SearchIndex(es, host_a).live_index(key)
    assert live is not None
    es.indices.delete(index=live)
    commit(repo, {"pkg/mod.py": "def moved_on():\n    return 0\n"}, "not indexed")
    for tools in (on_b, on_a):
        from_git = [_snippet(tools, key, "pkg/mod.py", **w) for w in windows]
        assert [a["source"] for a in from_git] == ["git"] * 4, from_git
        assert [_same(a) for a in from_git] == [_same(a) for a in indexed]
        assert from_git[0]["text"].split("\n")[5] == "    "  # git keeps what the index drops
        assert from_git[0]["completeness"]["status"] == "exact"
    assert (host_b.mirrors_path / f"{key}.git" / "HEAD").is_file()

    # a blob the source never had is a miss, never other bytes
    graph.query(
        "test: a blob id the source lacks",
        "MATCH (f:File {repo: $repo, path: 'README.md'}) SET f.blob_sha = $sha",
        repo=key,
        sha="0" * 40,
    )
    miss = _snippet(on_b, key, "README.md")
    assert miss["status"] == "empty" and not miss.get("text"), miss


def test_hostile_paths_and_ranges_are_invalid_arguments(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "src", FILES)
    key = _index(_host(settings, tmp_path / "host-a"), graph, repo)
    tools = _tools(_host(settings, tmp_path / "host-b"), graph, es)
    for path, lines in (
        ("../src/pkg/mod.py", {}),
        ("pkg/../../etc/passwd", {}),
        ("pkg/./../..", {}),
        ("/etc/passwd", {}),
        ("pkg\\mod.py", {}),
        ("pkg/mod.py\x00", {}),
        ("x" * 5000, {}),
        ("pkg/mod.py", {"start_line": 0}),
        ("pkg/mod.py", {"start_line": -5}),
        ("pkg/mod.py", {"start_line": 10, "end_line": 9}),
        ("pkg/mod.py", {"start_line": 1, "end_line": 401}),
        ("pkg/mod.py", {"end_line": 10**12}),
        ("pkg/mod.py", {"start_line": 2**31 + 7}),
    ):
        answer = _snippet(tools, key, path, **lines)
        assert answer.get("error", {}).get("code") == "invalid_argument", (path, lines, answer)
    far = _snippet(tools, key, "pkg/mod.py", start_line=1000)
    assert far["status"] == "empty" and far["source"] == "search_index", far
    assert not (tmp_path / "host-b" / "mirrors").exists()  # nothing fetched for bad input
