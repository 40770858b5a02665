"""Group commit of webhook enqueues: many requests, one graph transaction.

Each webhook request hands its validated :class:`EnqueueRequest` to :meth:`submit` and waits
for its own result. One committer task gathers the requests that arrive within
``window_s`` of the first (or while the previous batch is committing), at most
``max_requests`` of them, and commits them together with :meth:`JobStore.enqueue_many` on a
dedicated thread (never the request thread pool, so slow API calls cannot starve it). Every
request of a batch gets its answer only after the batch committed; a failed commit raises the
same error in every request of the batch (the web layer answers 503: nothing was stored, the
host retries). :meth:`close` commits what is queued and refuses anything later.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from semgraph.errors import ShuttingDown
from semgraph.logs import event
from semgraph.queue.models import EnqueueRequest, EnqueueResult
from semgraph.web.metrics import WEBHOOK_BATCH_SIZE, WEBHOOK_PHASE_SECONDS

log = logging.getLogger(__name__)

CommitFn = Callable[[Sequence[EnqueueRequest], float], list[EnqueueResult]]


@dataclass
class _Waiting:
    request: EnqueueRequest
    now: float
    future: asyncio.Future[EnqueueResult]
    queued_at: float


class EnqueueBatcher:
    """One per web application; bound to the event loop of its first :meth:`submit`."""

    def __init__(self, commit: CommitFn, *, window_s: float, max_requests: int) -> None:
        if window_s < 0 or max_requests < 1:
            raise ValueError("window_s must be >= 0 and max_requests >= 1")
        self._commit = commit
        self.window_s = window_s
        self.max_requests = max_requests
        self._queue: asyncio.Queue[_Waiting | None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._closed = False
        self.batches = 0  # committed or failed batches, for tests and logs

    async def submit(self, request: EnqueueRequest, *, now: float) -> EnqueueResult:
        """Enqueue ``request`` in the next batch; returns once that batch committed."""
        if self._closed:
            raise ShuttingDown()
        queue = self._start()
        loop = asyncio.get_running_loop()
        waiting = _Waiting(request, now, loop.create_future(), time.perf_counter())
        queue.put_nowait(waiting)
        return await waiting.future

    def _start(self) -> asyncio.Queue[_Waiting | None]:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="semgraph-enqueue")
            self._task = asyncio.get_running_loop().create_task(
                self._run(self._queue), name="semgraph-enqueue-batcher"
            )
        return self._queue

    async def close(self) -> None:
        """Commit everything already submitted, then stop; later submits are refused."""
        self._closed = True
        if self._queue is None or self._task is None:
            return
        self._queue.put_nowait(None)
        await self._task
        if self._executor is not None:
            self._executor.shutdown(wait=True)

    async def _run(self, queue: asyncio.Queue[_Waiting | None]) -> None:
        stopping = False
        while not stopping:
            first = await queue.get()
            if first is None:
                break
            batch = [first]
            stopping = await self._gather(queue, batch)
            await self._commit_batch(batch)
        rest: list[_Waiting] = []  # submitted before close() but behind the stop marker
        while not queue.empty():
            item = queue.get_nowait()
            if item is not None:
                rest.append(item)
        for start in range(0, len(rest), self.max_requests):
            await self._commit_batch(rest[start : start + self.max_requests])

    async def _gather(self, queue: asyncio.Queue[_Waiting | None], batch: list[_Waiting]) -> bool:
        """Add to ``batch`` what arrives within the window, up to the size bound; True when
        the stop marker was met."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.window_s
        while len(batch) < self.max_requests:
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return False
                try:
                    item = await asyncio.wait_for(queue.get(), remaining)
                except TimeoutError:
                    return False
            if item is None:
                return True
            batch.append(item)
        return False

    async def _commit_batch(self, batch: list[_Waiting]) -> None:
        started = time.perf_counter()
        for waiting in batch:
            WEBHOOK_PHASE_SECONDS.labels(phase="batch_wait").observe(started - waiting.queued_at)
        WEBHOOK_BATCH_SIZE.observe(len(batch))
        self.batches += 1
        now = max(w.now for w in batch)
        requests = [w.request for w in batch]
        loop = asyncio.get_running_loop()
        try:
            results = await loop.run_in_executor(self._executor, self._commit, requests, now)
            if len(results) != len(batch):
                raise RuntimeError(f"{len(results)} results for a batch of {len(batch)}")
        except Exception as exc:  # the store's error goes to every request of the batch
            event(
                log,
                logging.WARNING,
                "webhook_batch_failed",
                str(exc),
                size=len(batch),
                error=type(exc).__name__,
            )
            for waiting in batch:
                if not waiting.future.done():
                    waiting.future.set_exception(exc)
            return
        finally:
            WEBHOOK_PHASE_SECONDS.labels(phase="commit").observe(time.perf_counter() - started)
        for waiting, result in zip(batch, results, strict=True):
            if not waiting.future.done():  # a client that went away was cancelled
                waiting.future.set_result(result)
