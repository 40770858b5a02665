"""The parse driver: walk a workspace, parse its files in the job's pool in a bounded
window, append every result to the spill as it arrives (then drop it).

Memory is a function of ``parse_window_files``, not of the repository: at most that many
files are in flight, results are written to the spill one by one, and the only per-file
state kept is the list of parse failures (path + reason).

With a parse cache, an unchanged file costs a copy: its blob id comes from git's index when
that is the hash of its bytes (:mod:`semgraph.indexer.gitblobs`; otherwise the file is read
and hashed), the walk neither stats nor reads it, and its cached record goes into the spill
as the cache's compressed frame. The phase's steps are timed (``ParseStats.timings_s``).

The module is over 300 lines because the run's bookkeeping (windows, retries, the cache and
the steps' timings) shares one state.
"""

from __future__ import annotations

import concurrent.futures
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from semgraph.config import Settings
from semgraph.faults import PROCESS, Faults
from semgraph.indexer.extract import blob_sha, failed_file
from semgraph.indexer.gitblobs import index_blobs
from semgraph.indexer.parsecache import CachedResult, ParseCache
from semgraph.indexer.pool import ParsePool, TaskResult
from semgraph.indexer.spill import SpillWriter
from semgraph.indexer.walk import walk
from semgraph.logs import event
from semgraph.memory import rss_bytes
from semgraph.model import ParseStatus, SkippedFile

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ParseFailureRecord:
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class ParseProgress:
    files_done: int  # files parsed (or given up) so far
    files_skipped: int
    files_failed: int
    in_flight: int
    elapsed_s: float
    files_total: int | None = None  # candidates found by the walk (indexed + skipped)


@dataclass(slots=True)
class ParseStats:
    files_by_status: dict[str, int] = field(default_factory=dict)  # ok/partial/text/parse_failed
    skipped_by_reason: dict[str, int] = field(default_factory=dict)
    parse_failures: list[ParseFailureRecord] = field(default_factory=list)
    retries: int = 0
    files_reused: int = 0  # results taken from the parse cache (unchanged path + blob)
    bytes_parsed: int = 0
    spill_bytes: int = 0
    duration_s: float = 0.0
    parent_peak_rss_bytes: int = 0
    child_peak_rss_bytes: int = 0
    pool_size: int = 0
    child_pids: set[int] = field(default_factory=set)
    # seconds inside the phase: walk (listing + classifying candidates), hash
    # (reading files for their blob id), cache_read / cache_write (the parse cache),
    # spill_reused (appending cached results to the spill), pool_wait (waiting for children)
    timings_s: dict[str, float] = field(default_factory=dict)

    @property
    def files_indexed(self) -> int:
        return sum(self.files_by_status.values())

    @property
    def files_skipped(self) -> int:
        return sum(self.skipped_by_reason.values())


class _Run:
    def __init__(
        self,
        settings: Settings,
        pool: ParsePool,
        spill: SpillWriter,
        progress: Callable[[ParseProgress], None] | None,
        cache: ParseCache | None = None,
    ) -> None:
        self.settings = settings
        self.pool = pool
        self.spill = spill
        self.progress = progress
        self.cache = cache
        self.blobs: dict[str, str] = {}  # path -> blob sha of the files in flight (cache only)
        self.index_blobs: dict[str, str] = {}  # path -> blob id from git's index (trusted)
        self.stats = ParseStats(pool_size=pool.size)
        self.status: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.inflight: dict[concurrent.futures.Future[TaskResult], tuple[str, int]] = {}
        self.done = 0
        self.total: int | None = None
        self.started = time.monotonic()
        self.timings: dict[str, float] = {}

    def timed(self, name: str, started: float) -> None:
        self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - started

    def skip(self, item: SkippedFile) -> None:
        self.spill.append(item)
        self.skipped[item.reason] += 1

    def submit(self, path: str) -> None:
        if self.cache is not None:
            t0 = time.perf_counter()
            blob = self.index_blobs.get(path) or self.hash_file(path)
            self.timed("hash", t0)
            hit = self.cache.lookup(path, blob) if blob else None
            if hit is not None:
                self.reuse(path, hit)
                return
            if blob:
                self.blobs[path] = blob
        self.inflight[self.pool.submit(path)] = (path, 1)

    def hash_file(self, path: str) -> str:
        try:
            with open(Path(self.pool.config.root) / path, "rb") as fh:
                return blob_sha(fh.read(self.pool.config.max_file_bytes + 1))
        except OSError:
            return ""  # the child reports the read error; nothing is cached

    def known(self, path: str) -> bool:
        """Whether the cache holds this file's bytes (by git's blob id): the walk need
        not read it."""
        blob = self.index_blobs.get(path)
        return blob is not None and self.cache is not None and self.cache.has(path, blob)

    def use_index_blobs(self, workspace: Path) -> None:
        """Take blob ids from git's index when they are the files' hashes."""
        blobs, why = index_blobs(workspace, self.settings.git_timeout_s)
        if blobs is None:
            event(logger, logging.INFO, "parse.hash_files", f"hashing every file: {why}")
            return
        self.index_blobs = blobs

    def reuse(self, path: str, hit: CachedResult) -> None:
        t0 = time.perf_counter()
        if hit.compressed and self.settings.spill_cached_frames:
            summary = (hit.language, hit.status, hit.row_digest) if hit.row_digest else None
            # copied, not recompressed; the summary spares the resolver decoding it
            self.spill.append_compressed(hit.kind, path, hit.compressed, summary)
        else:
            self.spill.append_packed(hit.kind, hit.packed)
        self.timed("spill_reused", t0)
        self.stats.files_reused += 1
        if hit.status.startswith("skipped:"):
            self.skipped[hit.status.removeprefix("skipped:")] += 1
        else:
            self.status[hit.status] += 1
            self.done += 1

    def drain(self, *, until: int) -> None:
        """Collect results until at most ``until`` files are in flight."""
        while len(self.inflight) > until:
            t0 = time.perf_counter()
            finished, _ = concurrent.futures.wait(
                self.inflight, return_when=concurrent.futures.FIRST_COMPLETED
            )
            self.timed("pool_wait", t0)
            for fut in finished:
                path, attempt = self.inflight.pop(fut)
                self.collect(fut, path, attempt)
            self.stats.parent_peak_rss_bytes = max(self.stats.parent_peak_rss_bytes, rss_bytes())

    def collect(self, fut: concurrent.futures.Future[TaskResult], path: str, attempt: int) -> None:
        try:
            result = fut.result()
        except Exception as exc:
            reason = self.pool.describe(exc)
            if attempt == 1:
                event(
                    logger,
                    logging.WARNING,
                    "parse.retry",
                    f"retrying {path}: {reason}",
                    path=path,
                    reason=reason,
                )
                self.stats.retries += 1
                self.inflight[self.pool.retry(path)] = (path, 2)
                return
            self.blobs.pop(path, None)
            self.give_up(path, reason)
            return
        self.spill.append_packed(result.kind, result.packed)
        blob = self.blobs.pop(path, None)
        if self.cache is not None and blob is not None:
            kept = CachedResult(
                result.kind,
                result.status,
                result.size_bytes,
                result.packed,
                language=result.language,
                row_digest=result.row_digest,
            )
            self.cache.keep(path, blob, kept)
        if result.status.startswith("skipped:"):
            self.skipped[result.status.removeprefix("skipped:")] += 1
        else:
            self.status[result.status] += 1
            self.stats.bytes_parsed += result.size_bytes
            self.done += 1
        self.stats.child_pids.add(result.child_pid)
        self.stats.child_peak_rss_bytes = max(
            self.stats.child_peak_rss_bytes, result.child_peak_rss_bytes
        )

    def give_up(self, path: str, reason: str) -> None:
        """Second failure: index the file as plain text with ``parse_failed``."""
        event(
            logger,
            logging.WARNING,
            "parse.failed",
            f"parse failed for {path}: {reason}",
            path=path,
            reason=reason,
        )
        config = self.pool.config
        try:
            with open(Path(config.root) / path, "rb") as fh:
                data = fh.read(config.max_file_bytes)
        except OSError as exc:
            self.skip(SkippedFile(path, "unreadable", f"cannot read: {exc.strerror}"))
            return
        self.spill.append(failed_file(path, data, reason, config.options))
        self.status[ParseStatus.PARSE_FAILED] += 1
        self.stats.bytes_parsed += len(data)
        self.stats.parse_failures.append(ParseFailureRecord(path, reason))
        self.done += 1

    def report(self) -> None:
        if self.progress is not None:
            self.progress(
                ParseProgress(
                    files_done=self.done,
                    files_skipped=sum(self.skipped.values()),
                    files_failed=len(self.stats.parse_failures),
                    in_flight=len(self.inflight),
                    elapsed_s=time.monotonic() - self.started,
                    files_total=self.total,
                )
            )

    def finish(self) -> ParseStats:
        self.stats.files_by_status = dict(self.status)
        self.stats.skipped_by_reason = dict(self.skipped)
        self.stats.duration_s = time.monotonic() - self.started
        self.stats.timings_s = {k: round(v, 4) for k, v in sorted(self.timings.items())}
        self.stats.parent_peak_rss_bytes = max(self.stats.parent_peak_rss_bytes, rss_bytes())
        return self.stats


def parse_repository(
    settings: Settings,
    workspace: Path,
    spill_path: Path,
    *,
    checkpoint: Callable[[str], None] | None = None,
    progress: Callable[[ParseProgress], None] | None = None,
    cache: ParseCache | None = None,
    faults: Faults = PROCESS,
) -> ParseStats:
    """Parse every indexable file of ``workspace`` into a new spill at ``spill_path``.

    ``checkpoint("parse")`` is called between windows of ``parse_window_files`` results; it
    may raise to cancel the job, in which case the pool is stopped (children killed) and the
    partial spill removed before the exception propagates. ``progress`` gets a
    :class:`ParseProgress` at the same points. With a ``cache``, a file whose path and blob
    are in it is copied to the spill instead of parsed, and every parsed result is kept for
    the next job (the caller commits or discards the cache). Fault point ``parse.window``
    after each window's checkpoint, mid-parse with the spill half written.
    """
    window = settings.parse_window_files
    with (
        SpillWriter(
            spill_path, compression=settings.spill_compression, level=settings.spill_zstd_level
        ) as spill,
        ParsePool(settings, workspace) as pool,
    ):
        run = _Run(settings, pool, spill, progress, cache)
        t0 = time.perf_counter()
        if cache is not None and settings.parse_git_blob_ids:
            run.use_index_blobs(Path(workspace))
        run.timed("walk", t0)
        event(
            logger,
            logging.INFO,
            "parse.start",
            f"parsing {workspace}",
            pool_size=pool.size,
            inline=pool.inline,
            rss_bytes=rss_bytes(),
        )
        next_checkpoint = window
        entries = walk(
            Path(workspace),
            max_file_bytes=settings.max_file_bytes,
            git_timeout_s=settings.git_timeout_s,
            on_total=lambda n: setattr(run, "total", n),
            known=run.known if run.index_blobs else None,
        )
        while True:
            t0 = time.perf_counter()
            item = next(entries, None)
            run.timed("walk", t0)
            if item is None:
                break
            if isinstance(item, SkippedFile):
                run.skip(item)
                continue
            run.drain(until=window - 1)
            run.submit(item.path)
            if run.done >= next_checkpoint:
                next_checkpoint = run.done + window
                run.report()
                if checkpoint is not None:
                    checkpoint("parse")
                faults.point("parse.window", done=run.done)
        run.drain(until=0)
        run.report()
    stats = run.finish()
    stats.spill_bytes = spill.bytes_written
    if cache is not None:
        stats.timings_s["cache_read"] = round(cache.read_s, 4)
        stats.timings_s["cache_write"] = round(cache.write_s, 4)
    event(
        logger,
        logging.INFO,
        "parse.done",
        f"parsed {stats.files_indexed} files, skipped {stats.files_skipped}, "
        f"failed {len(stats.parse_failures)} in {stats.duration_s:.1f}s",
        files=stats.files_indexed,
        reused=stats.files_reused,
        skipped=stats.files_skipped,
        failed=len(stats.parse_failures),
        parent_peak_rss_bytes=stats.parent_peak_rss_bytes,
        child_peak_rss_bytes=stats.child_peak_rss_bytes,
        rss_bytes=rss_bytes(),
    )
    return stats
