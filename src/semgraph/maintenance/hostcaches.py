"""This host's caches of repositories, and the sweep that deletes those of repositories the
graph no longer knows (a removal clears every host's caches).

A removal job deletes the caches of the host that runs it (:mod:`semgraph.repos.removal`);
every other host that ever ran a job of the repository still holds its own. So each worker's
maintenance pass (:func:`sweep_host_caches`, registered in :mod:`semgraph.jobs`) deletes, on its
own disk, the caches of every repository that is not *live*: live is a ``:Repository`` node
(published, or being removed), a ``:RepoRecord`` (written at a repository's first enqueue,
deleted last by its removal) or a pending or running job. What a host keeps per repository:

* ``<state_dir>/cache/<h>/``                 the parse cache (:func:`parsecache.cache_dir`)
* ``<state_dir>/resolve-cache/<h>.sqlite*``  the last resolution (:func:`resolvecache.cache_path`)
* ``<state_dir>/worktrees/<h>`` and ``.lock`` the reused work tree (:func:`checkout.worktree_path`)
* ``<mirrors>/<key>.git``, ``.git.tmp``, ``.lock`` the bare mirror (named by the key itself)
* ``<state_dir>/graph-state/``               the published state of semgraph before it moved
  into the graph; nothing reads it, and it goes whole

``<h>`` is a hash of the key, so an entry is matched to a live key by hashing the live keys,
never the other way round; a name of no known shape is left alone. Never deleted: a cache of
a live repository. The disk is listed *before* the graph is read, and read twice: an entry
listed at t1 whose key is live at neither read after t1 had no record and no job then, and a
job that starts after it finds no cache (or, racing the delete, a half-deleted one: a cache
miss). A mirror or work tree whose lock a job of this host holds is skipped this pass, and an
entry touched within ``host_cache_gc_min_age_s`` waits for a later one.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.indexer.checkout import worktree_path
from semgraph.indexer.parsecache import cache_dir
from semgraph.indexer.resolvecache import cache_path
from semgraph.logs import event
from semgraph.queue.models import JobStatus
from semgraph.queue.records import list_records
from semgraph.queue.store import JobStore
from semgraph.repos import graph as gr

log = logging.getLogger(__name__)

LEGACY_STATE = "graph-state"
JOBS_READ = 100_000  # the most pending (and running) jobs one list reads
_HASHED = re.compile(r"^([0-9a-f]{32})(\.sqlite.*|\.lock)?$")
_MIRROR = re.compile(r"^([a-z0-9][a-z0-9_-]*)(\.git|\.git\.tmp|\.lock)$")


@dataclass(frozen=True)
class Entry:
    """One cache entry on disk, and the repository it belongs to (a key, or its hash)."""

    path: Path
    owner: str
    hashed: bool
    lock: Path | None = None  # held by a job of this host while it uses the entry


@dataclass
class CacheSweep:
    deleted: list[str] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)
    young: int = 0
    live: int = 0
    skipped: str | None = None  # why nothing was swept


def _digest(settings: Settings, key: str) -> str:
    return cache_dir(settings, key).name


def _entries(settings: Settings) -> list[Entry]:
    """Every cache entry of a shape this module knows, under this host's directories."""
    found: list[Entry] = []
    roots = {
        cache_dir(settings, "x").parent: False,
        cache_path(settings, "x").parent: False,
        worktree_path(settings, "x").parent: True,
    }
    for root, locked in roots.items():
        for path in _listdir(root):
            match = _HASHED.match(path.name)
            if match is None or (path.suffix == ".lock" and not locked):
                continue
            lock = root / f"{match.group(1)}.lock" if locked and not match.group(2) else None
            found.append(Entry(path, match.group(1), True, lock))
    mirrors = settings.mirrors_path
    for path in _listdir(mirrors):
        match = _MIRROR.match(path.name)
        if match is not None:
            lock = mirrors / f"{match.group(1)}.lock" if match.group(2) == ".git" else None
            found.append(Entry(path, match.group(1), False, lock))
    return found


def _listdir(root: Path) -> list[Path]:
    try:
        return sorted(root.iterdir())
    except OSError:
        return []


def live_keys(settings: Settings, graph: Graph) -> set[str] | None:
    """The keys of every live repository (None: too many jobs to be sure of them all)."""
    keys = {str(r["key"]) for r in gr.list_repositories(graph)}
    keys |= {str(r["key"]) for r in list_records(graph)}
    store = JobStore(graph, settings)
    for status in (JobStatus.PENDING, JobStatus.RUNNING):
        jobs = store.list(status=status.value, limit=JOBS_READ)
        if len(jobs) >= JOBS_READ:
            return None
        keys |= {job.repo_key for job in jobs}
    return keys


def _is_live(entry: Entry, keys: set[str], digests: set[str]) -> bool:
    return entry.owner in (digests if entry.hashed else keys)


def _try_lock(path: Path) -> int | None:
    """An exclusive lock on ``path`` without waiting (None: a job of this host holds it)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _delete(path: Path) -> bool:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
    return not path.exists() and not path.is_symlink()


def _age_s(path: Path, now: float) -> float:
    try:
        return now - path.lstat().st_mtime
    except OSError:
        return float("inf")


def sweep_caches(settings: Settings, graph: Graph, *, now: float | None = None) -> CacheSweep:
    """Delete this host's caches of repositories that are not live (module docstring)."""
    now = time.time() if now is None else now
    report = CacheSweep()
    entries = _entries(settings)  # listed before the graph is read: see the module docstring
    legacy = settings.state_dir / LEGACY_STATE
    first = live_keys(settings, graph)
    if first is None:
        report.skipped = f"over {JOBS_READ} pending or running jobs"
        return report
    digests = {_digest(settings, k) for k in first}
    dead = [e for e in entries if not _is_live(e, first, digests)]
    report.live = len(entries) - len(dead)
    if dead:
        second = live_keys(settings, graph)
        if second is None:
            report.skipped = f"over {JOBS_READ} pending or running jobs"
            return report
        digests |= {_digest(settings, k) for k in second}
        dead = [e for e in dead if not _is_live(e, first | second, digests)]
    busy: set[str] = set()  # owners whose lock a job holds: their lock files stay too
    for entry in dead:  # in name order: a mirror or work tree before its lock file
        if entry.owner in busy:
            continue
        if _age_s(entry.path, now) < settings.host_cache_gc_min_age_s:
            report.young += 1
            continue
        fd = _try_lock(entry.lock) if entry.lock is not None else None
        if entry.lock is not None and fd is None:
            busy.add(entry.owner)
            report.busy.append(str(entry.path))
            continue
        try:
            if _delete(entry.path):
                report.deleted.append(str(entry.path))
        finally:
            if fd is not None:
                os.close(fd)
    if legacy.is_dir() and _delete(legacy):
        report.deleted.append(str(legacy))
    if report.deleted or report.busy:
        event(
            log,
            logging.INFO,
            "host_caches_swept",
            f"deleted {len(report.deleted)} cache entries of repositories the graph no "
            f"longer knows; {len(report.busy)} in use, kept for a later pass",
            deleted=report.deleted[:20],
            busy=report.busy[:20],
        )
    return report


def sweep_host_caches(settings: Settings, graph: Graph) -> None:
    """The maintenance pass: :func:`sweep_caches` now."""
    sweep_caches(settings, graph)
