"""The job's resolution, incremental from the last one this host kept for the repository
(:mod:`semgraph.resolve.incremental`; docs/architecture.md, "Scale-out": a host's disk
holds caches only).

The cache is ``<state_dir>/resolve-cache/<sha256 of the repo key>.sqlite``: the resolution's
own SQLite file, moved there (one rename) after a job whose graph publish committed. A job
moves it into its work directory (one rename, not a copy of hundreds of megabytes: a
one-second resolve), so a job that fails leaves no cache and the next one resolves fully;
only one job of a repository runs at a time. It is
tagged with the job fingerprint (parser, grammars, options) and the resolver's version; a
missing, foreign, stale or corrupt one is a full resolve, and deleting the directory is
always safe. A forced job resolves fully (and refreshes the cache).
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from semgraph.config import Settings
from semgraph.indexer.spill import SpillReader
from semgraph.logs import event
from semgraph.resolve.incremental import resolve_incremental
from semgraph.resolve.resolution import Resolution

log = logging.getLogger(__name__)


def cache_path(settings: Settings, repo_key: str) -> Path:
    """The repository's cached resolution (a hash of the key: no key escapes the root)."""
    digest = hashlib.sha256(repo_key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return settings.state_dir / "resolve-cache" / f"{digest}.sqlite"


def resolve_job(
    settings: Settings, spill: Path, repo_key: str, workdir: Path, fp: str, *, force: bool
) -> Resolution:
    """Resolve the spill under ``workdir``: from the cache where it serves, else fully."""
    previous = None
    if settings.resolve_cache and not force:
        previous = cache_path(settings, repo_key)
    res = resolve_incremental(
        lambda: iter(SpillReader(spill)),
        repo_key,
        workdir,
        previous,
        tag=fp,
        max_fraction=settings.resolve_incremental_max_fraction,
        summaries=lambda: SpillReader(spill).summaries(),
        consume=True,
    )
    if force:
        res.incremental["reason"] = "forced job"
    elif not settings.resolve_cache:
        res.incremental["reason"] = "resolve cache disabled"
    info = res.incremental
    event(
        log,
        logging.INFO,
        "resolve_mode",
        f"{info.get('mode')} resolution of {info.get('files_resolved')} files"
        + (f" ({info['reason']})" if info.get("reason") else ""),
        repo=repo_key,
    )
    return res


def keep(settings: Settings, repo_key: str, resolution_file: Path) -> None:
    """Make the job's (closed) resolution file the repository's cache: one atomic rename. A
    failure only costs the next job time."""
    if not settings.resolve_cache or not resolution_file.is_file():
        return
    target = cache_path(settings, repo_key)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(resolution_file, target)
    except OSError as exc:
        event(log, logging.WARNING, "resolve_cache_not_kept", f"{exc}", repo=repo_key)
