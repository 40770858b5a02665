"""Group commit of webhook enqueues: many requests, one graph transaction.

Each webhook request hands its validated :class:`EnqueueRequest` to :meth:`submit` and waits
for its own result. One committer thread gathers the requests that arrive within
``window_s`` of the first (or while the previous batch was committing), at most
``max_requests`` of them, and commits them together with :meth:`JobStore.enqueue_many`.

The committer is a thread of its own, not a task on the event loop: under a burst the loop
is busy with dozens of connections, and a committer that had to wait for its turn on the
loop between two batches would leave the graph idle while requests pile up. The thread goes
from one commit straight to the next; the loop only hands requests over and receives the
answers (one wake-up per batch).

Every request of a batch gets its answer only after the batch committed; a failed commit
raises the same error in every request of the batch (the web layer answers 503: nothing was
stored, the host retries). :meth:`close` commits what is queued and refuses anything later.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from semgraph.errors import ConfigError, ShuttingDown
from semgraph.logs import event
from semgraph.queue.models import EnqueueRequest, EnqueueResult
from semgraph.web.metrics import WEBHOOK_BATCH_SIZE, WEBHOOK_PHASE_SECONDS

log = logging.getLogger(__name__)

CommitFn = Callable[[Sequence[EnqueueRequest], float], list[EnqueueResult]]


@dataclass
class _Waiting:
    request: EnqueueRequest
    now: float
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[EnqueueResult]
    queued_at: float


_STOP = None  # the queue's end marker
_Answer = EnqueueResult | BaseException


class EnqueueBatcher:
    """One per web application; its thread starts with the first :meth:`submit`."""

    def __init__(self, commit: CommitFn, *, window_s: float, max_requests: int) -> None:
        if window_s < 0 or max_requests < 1:
            raise ConfigError("window_s must be >= 0 and max_requests >= 1")
        self._commit = commit
        self.window_s = window_s
        self.max_requests = max_requests
        self._queue: queue.SimpleQueue[_Waiting | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.batches = 0  # committed or failed batches, for tests and logs

    async def submit(self, request: EnqueueRequest, *, now: float) -> EnqueueResult:
        """Enqueue ``request`` in the next batch; returns once that batch committed."""
        loop = asyncio.get_running_loop()
        waiting = _Waiting(request, now, loop, loop.create_future(), time.perf_counter())
        with self._lock:
            if self._closed:
                raise ShuttingDown()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="semgraph-enqueue-batcher", daemon=True
                )
                self._thread.start()
            self._queue.put(waiting)
        return await waiting.future

    async def close(self) -> None:
        """Commit everything already submitted, then stop; later submits are refused."""
        with self._lock:
            self._closed = True
            thread = self._thread
            if thread is not None:
                self._queue.put(_STOP)
        if thread is not None:
            await asyncio.get_running_loop().run_in_executor(None, thread.join)

    # -- the committer thread ---------------------------------------------------------------

    def _run(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is _STOP:
                return
            batch = [first]
            stopping = self._gather(batch)
            self._commit_batch(batch)

    def _gather(self, batch: list[_Waiting]) -> bool:
        """Add what arrives within the window, up to the size bound; True at the end marker
        (everything submitted before :meth:`close` is ahead of it)."""
        deadline = time.monotonic() + self.window_s
        while len(batch) < self.max_requests:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                try:
                    item = self._queue.get(timeout=remaining)
                except queue.Empty:
                    return False
            if item is _STOP:
                return True
            batch.append(item)
        return False

    def _commit_batch(self, batch: list[_Waiting]) -> None:
        started = time.perf_counter()
        for waiting in batch:
            WEBHOOK_PHASE_SECONDS.labels(phase="batch_wait").observe(started - waiting.queued_at)
        WEBHOOK_BATCH_SIZE.observe(len(batch))
        self.batches += 1
        outcome: list[EnqueueResult] | BaseException
        try:
            results = self._commit([w.request for w in batch], max(w.now for w in batch))
            if len(results) != len(batch):
                raise RuntimeError(f"{len(results)} results for a batch of {len(batch)}")
            outcome = results
        except Exception as exc:  # the store's error goes to every request of the batch
            event(
                log,
                logging.WARNING,
                "webhook_batch_failed",
                str(exc),
                size=len(batch),
                error=type(exc).__name__,
            )
            outcome = exc
        WEBHOOK_PHASE_SECONDS.labels(phase="commit").observe(time.perf_counter() - started)
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[_Waiting, _Answer]]] = {}
        for i, waiting in enumerate(batch):
            answer = outcome if isinstance(outcome, BaseException) else outcome[i]
            by_loop.setdefault(waiting.loop, []).append((waiting, answer))
        for loop, answers in by_loop.items():  # one wake-up of each loop per batch
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for them
                loop.call_soon_threadsafe(_answer, answers)


def _answer(answers: list[tuple[_Waiting, _Answer]]) -> None:
    """On the event loop: resolve each request's future (a client that went away was
    cancelled; its push is committed all the same, and the host's retry is a duplicate)."""
    for waiting, answer in answers:
        if waiting.future.done():
            continue
        if isinstance(answer, BaseException):
            waiting.future.set_exception(answer)
        else:
            waiting.future.set_result(answer)
