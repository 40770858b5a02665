"""The per-job parse pool: tree-sitter runs in child processes so that a bad file costs one
file (docs/architecture.md, invariant 6).

* A pebble ``ProcessPool`` with the ``spawn`` start method (children share nothing with the
  worker, and leave no fork server behind), ``pool_size`` children recycled after
  ``child_max_tasks`` files, each with an address-space cap of ``child_memory_mb``.
* The per-file timeout is enforced by the parent: pebble kills the child.
* A file whose child crashed, timed out, hit the memory cap or raised is retried once in a
  *fresh* child (a one-child pool that replaces its child after every task); the caller
  turns a second failure into ``parse_failed``.
* ``pool_size=1`` runs everything inline in the calling process (debugging, profiling):
  no isolation, no timeout.
* Leaving the ``with`` block closes the pool: on success it waits for the (idle) children,
  on any exception it stops them at once, cancelling queued work and killing stragglers.

**Fault point** ``parse.file`` (:mod:`semgraph.faults`), reached in a child with the file's
bytes before it is parsed. Children arm it from ``SEMGRAPH_FAULTS`` as the pool's creator
saw it: with ``parse.file=marker``, a file containing ``SEMGRAPH_FAULT:segfault`` (or
``abort``, ``hang``, ``oom``, ``raise``) crashes, hangs, allocates until it hits its memory
cap, or raises. The inline mode never reaches the point; only the tests set the variable.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import multiprocessing
import os
import resource
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.queues import SimpleQueue
from pathlib import Path
from typing import TYPE_CHECKING

import pebble
from pebble.pool.process import WORKERS_NAME

from semgraph import faults
from semgraph.indexer.extract import ExtractOptions, extract_file
from semgraph.indexer.spill import pack_record
from semgraph.indexer.spillblocks import KIND_FILE, KIND_SKIP
from semgraph.model import SkippedFile, SkipReason
from semgraph.resolve.ledger import row_digest

if TYPE_CHECKING:  # children import this module: keep pydantic out of their start-up
    from semgraph.config import Settings

STARTUP_WAIT_S = 30.0  # a spawned child imports tree-sitter and its grammars: seconds under load
STOP_STARTUP_WAIT_S = 5.0


@dataclass(frozen=True, slots=True)
class ChildConfig:
    root: str
    options: ExtractOptions
    max_file_bytes: int
    memory_mb: int
    faults: str  # SEMGRAPH_FAULTS as the parent saw it


@dataclass(frozen=True, slots=True)
class TaskResult:
    kind: str  # spill record kind
    packed: bytes  # msgpack of the record
    status: str  # parse status, or "skipped:<reason>"
    size_bytes: int
    child_pid: int
    child_peak_rss_bytes: int
    language: str = ""  # a parsed file's, with its row digest (the parse cache keeps both)
    row_digest: bytes = b""


class ParseFailure(Exception):
    """A file could not be parsed in its child (crash, timeout, memory cap, error)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_CONFIG: ChildConfig | None = None  # set by child_init, in pool children only


def child_init(config: ChildConfig, started: SimpleQueue[int] | None = None) -> None:
    """Pool child initializer: remember the config, cap the address space, say it is up."""
    global _CONFIG
    _CONFIG = config
    limit = config.memory_mb * 1024 * 1024
    with contextlib.suppress(ValueError, OSError):  # platforms without RLIMIT_AS
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    faults.PROCESS.arm_spec(config.faults)
    if started is not None:
        started.put(os.getpid())


def _peak_rss() -> int:
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def parse_one(config: ChildConfig, path: str, *, in_child: bool) -> TaskResult:
    """Read and extract one file, returning its packed spill record."""
    try:
        with open(Path(config.root) / path, "rb") as fh:
            data = fh.read(config.max_file_bytes + 1)
    except OSError as exc:
        skip = SkippedFile(path, SkipReason.UNREADABLE, f"cannot read: {exc.strerror}")
        return TaskResult(KIND_SKIP, pack_record(skip)[1], "skipped:unreadable", 0, os.getpid(), 0)
    if len(data) > config.max_file_bytes:  # grew since the walk
        skip = SkippedFile(path, SkipReason.TOO_LARGE, "grew past max_file_bytes")
        return TaskResult(KIND_SKIP, pack_record(skip)[1], "skipped:too_large", 0, os.getpid(), 0)
    if in_child:
        faults.PROCESS.point("parse.file", data=data)
    try:
        facts = extract_file(path, data, config.options)
    except MemoryError:
        raise ParseFailure(f"memory cap exceeded (child_memory_mb={config.memory_mb})") from None
    kind, packed = pack_record(facts)
    assert kind == KIND_FILE
    return TaskResult(
        kind,
        packed,
        facts.parse_status,
        len(data),
        os.getpid(),
        _peak_rss() if in_child else 0,
        facts.language,
        row_digest(facts),
    )


def child_task(path: str) -> TaskResult:
    """The function pool children run (module level, so ``spawn`` can import it)."""
    if _CONFIG is None:  # pragma: no cover - only reachable if the initializer did not run
        raise RuntimeError("parse child was not initialised")
    return parse_one(_CONFIG, path, in_child=True)


def describe_failure(exc: BaseException, config: ChildConfig, timeout_s: float) -> str:
    """A one-line reason for a failed task."""
    if isinstance(exc, ParseFailure):
        return exc.reason
    if isinstance(exc, concurrent.futures.TimeoutError | TimeoutError):
        return f"timed out after {timeout_s:g}s (child killed)"
    if isinstance(exc, pebble.ProcessExpired):
        code = exc.exitcode
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"child crashed ({name})"
        return f"child exited with status {code}"
    if isinstance(exc, MemoryError):
        return f"memory cap exceeded (child_memory_mb={config.memory_mb})"
    return f"extractor error: {type(exc).__name__}: {str(exc)[:300]}"


def _done_future(fn: Callable[[], TaskResult]) -> concurrent.futures.Future[TaskResult]:
    """Run ``fn`` inline (``pool_size=1``: no fault hook, no isolation)."""
    fut: concurrent.futures.Future[TaskResult] = concurrent.futures.Future()
    try:
        fut.set_result(fn())
    except Exception as exc:  # a failure is carried by the future, as in the pool
        fut.set_exception(exc)
    return fut


class ParsePool:
    """The pool of one job. Use as a context manager."""

    def __init__(self, settings: Settings, root: Path) -> None:
        size = settings.pool_size or len(os.sched_getaffinity(0)) or 1
        self.size = size
        self.inline = size == 1
        self.timeout_s = settings.parse_timeout_s
        self.config = ChildConfig(
            root=str(Path(root).resolve()),
            options=ExtractOptions(
                chunk_max_lines=settings.chunk_max_lines,
                chunk_max_chars=settings.chunk_max_chars,
            ),
            max_file_bytes=settings.max_file_bytes,
            memory_mb=settings.child_memory_mb,
            faults=os.environ.get(faults.ENV, ""),
        )
        self._max_tasks = settings.child_max_tasks
        self._context = multiprocessing.get_context("spawn")
        self._started: SimpleQueue[int] = self._context.SimpleQueue()
        self._started_pids: set[int] = set()
        self._pool: pebble.ProcessPool | None = None
        self._retry_pool: pebble.ProcessPool | None = None
        if not self.inline:
            self._pool = self._new_pool(size, self._max_tasks)

    def _new_pool(self, workers: int, max_tasks: int) -> pebble.ProcessPool:
        return pebble.ProcessPool(
            max_workers=workers,
            max_tasks=max_tasks,
            initializer=child_init,
            initargs=(self.config, self._started),
            context=self._context,
        )

    def submit(self, path: str) -> concurrent.futures.Future[TaskResult]:
        if self._pool is None:
            return _done_future(functools.partial(parse_one, self.config, path, in_child=False))
        future: concurrent.futures.Future[TaskResult] = self._pool.schedule(
            child_task, args=(path,), timeout=self.timeout_s
        )
        return future

    def retry(self, path: str) -> concurrent.futures.Future[TaskResult]:
        """Run ``path`` again in a fresh child (one that has parsed nothing else)."""
        if self.inline:
            return self.submit(path)
        if self._retry_pool is None:
            self._retry_pool = self._new_pool(1, 1)
        future: concurrent.futures.Future[TaskResult] = self._retry_pool.schedule(
            child_task, args=(path,), timeout=self.timeout_s
        )
        return future

    def describe(self, exc: BaseException) -> str:
        return describe_failure(exc, self.config, self.timeout_s)

    def _await_children(self, timeout_s: float = STARTUP_WAIT_S) -> None:
        """Wait until every pool child of this process has started (at most ``timeout_s``).

        pebble unlinks its channel's lock when it stops a pool and only then stops the
        children, so a child still starting (a spare one the work never needed, or the
        replacement for a recycled one) died with a ``FileNotFoundError`` traceback on the
        user's terminal. A child that has run its initializer holds the lock and stops quietly.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            while not self._started.empty():
                self._started_pids.add(self._started.get())
            starting = [
                child
                for child in multiprocessing.active_children()
                if child.name == WORKERS_NAME and child.pid not in self._started_pids
            ]
            if not starting or time.monotonic() >= deadline:
                return
            time.sleep(0.02)

    def close(self, *, graceful: bool) -> None:
        """Close both pools; ``graceful=False`` cancels queued work and kills children."""
        if not self.inline:  # a stop waits less: it is the failure or cancel path
            self._await_children(STARTUP_WAIT_S if graceful else STOP_STARTUP_WAIT_S)
        for pool in (self._pool, self._retry_pool):
            if pool is None:
                continue
            if graceful:
                pool.close()  # type: ignore[no-untyped-call]
                try:
                    pool.join(timeout=self.timeout_s + 10)
                    continue
                except TimeoutError:
                    pass  # a straggler: fall through and kill it
            pool.stop()  # type: ignore[no-untyped-call]
            pool.join()
        self._pool = self._retry_pool = None
        self._started.close()

    def __enter__(self) -> ParsePool:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        self.close(graceful=exc_type is None)
