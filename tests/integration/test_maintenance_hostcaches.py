"""Removal clears every host's caches (issue 26, item 3): a repository indexed on two hosts
(two state directories) and removed on host A leaves host B's parse cache, resolution, work
tree and mirror behind, until host B's maintenance sweep deletes them; the caches of a live
repository, of a repository that has only a pending job, entries a job of the host holds
locked, young entries and names of no known shape stay."""

from __future__ import annotations

import fcntl
import time
from pathlib import Path

from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.faults import Faults
from semgraph.indexer.checkout import worktree_path
from semgraph.indexer.parsecache import cache_dir
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest
from semgraph.indexer.resolvecache import cache_path
from semgraph.jobs import register_job_kinds
from semgraph.maintenance import hostcaches
from semgraph.queue import registry
from semgraph.queue.store import JobStore
from semgraph.repos import removal
from tests.repos import commit, make_repo
from tests.shared_kinds import KINDS, shared_embedder, shared_search

FILES = {
    "app/models.py": "class Order:\n    def total(self):\n        return helper(1)\n",
    "app/util.py": "def helper(x):\n    return x + 1\n",
}


def _host(settings: Settings, root: Path, min_age_s: float = 0.0) -> Settings:
    return settings.model_copy(
        update={"state_dir": root, "mirrors_dir": None, "host_cache_gc_min_age_s": min_age_s}
    )


def _index(host: Settings, graph: Graph, repo: Path) -> str:
    request = ReindexRequest(source=str(repo))
    run = Reindex(host, graph, shared_search(host), request, embedder=shared_embedder(host))
    return run.run().repo_key


def _cached(host: Settings, key: str) -> list[str]:
    """Which of the repository's caches this host holds."""
    held = {
        "parse": cache_dir(host, key),
        "resolve": cache_path(host, key),
        "worktree": worktree_path(host, key),
        "mirror": host.mirrors_path / f"{key}.git",
    }
    return sorted(name for name, path in held.items() if path.exists())


ALL = ["mirror", "parse", "resolve", "worktree"]


def test_every_host_sweeps_the_caches_of_a_removed_repository(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    a = _host(settings, tmp_path / "host-a")
    b = _host(settings, tmp_path / "host-b")
    gone_repo = make_repo(tmp_path / "gone", FILES)
    kept_repo = make_repo(tmp_path / "kept", {**FILES, "app/more.py": "def more():\n  pass\n"})
    gone = _index(a, graph, gone_repo)
    commit(gone_repo, {"app/util.py": "def helper(x):\n    return x + 2\n"})
    assert _index(b, graph, gone_repo) == gone  # the push ran on host B
    kept = _index(b, graph, kept_repo)
    assert _cached(a, gone) == _cached(b, gone) == _cached(b, kept) == ALL

    # a repository with only a pending job (its record gone, a job queued): its caches stay
    pending = "pending-0123456789"
    JobStore(graph, b).enqueue(pending, now=time.time(), args={"source": str(kept_repo)})
    graph.query("test: no record", "MATCH (r:RepoRecord {key: $k}) DELETE r", k=pending)
    for path in (cache_dir(b, pending), worktree_path(b, pending)):
        path.mkdir(parents=True)
    (b.mirrors_path / f"{pending}.git").mkdir()
    # names of no known shape, and the published state of an older semgraph
    strangers = [b.state_dir / "cache" / "README", b.mirrors_path / "Not-A-Key.git"]
    for path in strangers:
        path.write_text("mine")
    (b.state_dir / "graph-state").mkdir()
    (b.state_dir / "graph-state" / f"{'a' * 32}.sqlite").write_bytes(b"old")

    report = removal.Removal(
        a, graph, es, gone, job_id="job-test", requested_at=time.time(), faults=Faults()
    ).run()
    assert report.repository_deleted == 1
    assert _cached(a, gone) == []  # the removal's own host, at once
    assert _cached(b, gone) == ALL  # another host's disk: the removal cannot reach it

    # young entries wait (four caches, two lock files); an entry a job of host B holds
    # locked is skipped this pass
    assert hostcaches.sweep_caches(_host(b, b.state_dir, 3600), graph).young == 6
    lock = b.mirrors_path / f"{gone}.lock"
    with open(lock, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        busy = hostcaches.sweep_caches(b, graph)
        assert busy.busy == [str(b.mirrors_path / f"{gone}.git")], busy
        assert _cached(b, gone) == ["mirror"] and lock.exists()
    swept = hostcaches.sweep_caches(b, graph)
    assert _cached(b, gone) == [] and not lock.exists(), swept
    assert not (b.state_dir / "graph-state").exists()
    assert _cached(b, kept) == ALL  # a live repository's caches stay
    assert cache_dir(b, pending).is_dir() and worktree_path(b, pending).is_dir()
    assert (b.mirrors_path / f"{pending}.git").is_dir()
    assert all(path.read_text() == "mine" for path in strangers)
    assert hostcaches.sweep_caches(b, graph).deleted == []  # nothing more to do

    # a push after the removal makes the repository live again: host A indexes it afresh
    # and host B's sweep keeps what host A now holds (each host sweeps only its own disk)
    assert _index(a, graph, gone_repo) == gone
    assert hostcaches.sweep_caches(a, graph).deleted == []
    assert _cached(a, gone) == ALL


def test_the_worker_maintenance_runs_the_sweep() -> None:
    register_job_kinds()
    register_job_kinds(KINDS)  # built again: its passes take the older ones' places
    hooks = registry.maintenance_hooks()
    names = [getattr(hook, "__name__", "") for hook in hooks]
    assert names.count("sweep_host_caches") == 1 and names.count("maintain_search") == 1
    assert any(getattr(hook, "__self__", None) is KINDS for hook in hooks)
