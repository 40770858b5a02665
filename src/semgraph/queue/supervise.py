"""Supervising the worker: the signals that stop it, the job thread watched from the main
thread, and the periodic maintenance pass.

While a job runs, :meth:`Supervisor.watch` heartbeats (the job's lease and the ``:Worker``
node), enforces the time limit, notices an operator's abandon, a lost job and a shutdown,
and asks the job to stop (``ctx.cancel``; the job's own code only calls
``ctx.checkpoint(name)``). A job that does not reach a checkpoint within
``job_cancel_grace_s`` after being told to stop makes :meth:`Supervisor.watch` return False
(the worker then records the outcome and exits). A first SIGTERM/SIGINT stops the worker
after the current checkpoint; a second exits at once. :func:`maintain` recovers jobs of dead
workers (:mod:`semgraph.queue.sweep`), runs the registered maintenance hooks, prunes old jobs
and publishes the queue's stats.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

from semgraph.alerts import Alerter
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import CancelReason, SemgraphError
from semgraph.logs import event
from semgraph.metrics import removed
from semgraph.queue import metrics, registry
from semgraph.queue.models import Job
from semgraph.queue.registry import JobContext
from semgraph.queue.store import JobStore
from semgraph.queue.sweep import Identity, sweep

log = logging.getLogger(__name__)
# cancels that must end within job_cancel_grace_s (a shutdown waits for the checkpoint)
_STOP_SOON = {CancelReason.TIMEOUT, CancelReason.ABANDONED, CancelReason.LOST}


class Supervisor:
    """The worker's main thread while a job runs, and its signal handlers."""

    def __init__(
        self,
        settings: Settings,
        store: JobStore,
        *,
        worker_id: str,
        clock: Callable[[], float],
        tick_s: float,
        stop: threading.Event,
        hard_exit: Callable[[int], Any],
    ) -> None:
        self.settings = settings
        self.store = store
        self.worker_id = worker_id
        self.clock = clock
        self.tick_s = tick_s
        self.stop = stop
        self.hard_exit = hard_exit
        self._signals = 0

    # -- signals --------------------------------------------------------------------------------

    def on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self._signals += 1
        if self._signals > 1:
            event(log, logging.WARNING, "worker_killed", f"second signal {signum}: exiting now")
            self.hard_exit(128 + signum)
            return
        event(
            log,
            logging.INFO,
            "worker_stopping",
            f"signal {signum}: stopping after the current checkpoint",
            worker_id=self.worker_id,
        )
        self.stop.set()

    def install_signal_handlers(self) -> None:
        signal.signal(signal.SIGTERM, self.on_signal)
        signal.signal(signal.SIGINT, self.on_signal)

    # -- the job thread -------------------------------------------------------------------------

    def watch(
        self, job: Job, token: str, ctx: JobContext, thread: threading.Thread, start: float
    ) -> bool:
        """Supervise the job thread until it ends (True) or ignores a cancel (False)."""
        next_beat = start + self.settings.heartbeat_s
        deadline: float | None = None
        while True:
            thread.join(self.tick_s)
            if not thread.is_alive():
                return True
            now = self.clock()
            if self.stop.is_set() and ctx.cancel_requested is None:
                # no deadline: the job stops at its next checkpoint
                ctx.cancel(CancelReason.SHUTDOWN)
            if now >= next_beat:
                next_beat = now + self.settings.heartbeat_s
                self._beat(job, token, ctx, now)
            over = now - start > self.settings.job_timeout_s
            if over and ctx.cancel_requested in {None, CancelReason.SHUTDOWN}:
                event(log, logging.WARNING, "job_timeout", job_id=job.id, repo=job.repo_key)
                ctx.cancel(CancelReason.TIMEOUT, override=True)
            if deadline is None and ctx.cancel_requested in _STOP_SOON:
                deadline = now + self.settings.job_cancel_grace_s
            if deadline is not None and now > deadline:
                return False

    def _beat(self, job: Job, token: str, ctx: JobContext, now: float) -> None:
        try:
            beat = self.store.heartbeat(job.id, token, now=now)
            self.store.worker_heartbeat(self.worker_id, now=now)
        except SemgraphError as exc:
            event(log, logging.WARNING, "heartbeat_failed", str(exc), job_id=job.id)
            return
        if not beat.owned:
            event(log, logging.WARNING, "job_lost", "job no longer ours", job_id=job.id)
            ctx.cancel(CancelReason.LOST)
        elif beat.cancel_reason is not None:
            event(
                log,
                logging.INFO,
                "job_abandon_seen",
                beat.cancel_reason,
                job_id=job.id,
                repo=job.repo_key,
            )
            ctx.cancel(CancelReason.ABANDONED)


def maintain(
    settings: Settings,
    graph: Graph,
    store: JobStore,
    *,
    now: float,
    identity: Identity,
    worker_id: str,
    alerter: Alerter,
) -> None:
    """The periodic rescue: recover jobs of dead workers, prune old jobs, publish stats."""
    sweep(store, now=now, me=identity, my_worker_id=worker_id, alerter=alerter)
    for hook in registry.maintenance_hooks():
        try:
            hook(settings, graph)
        except Exception as exc:  # a failing hook is logged; the worker goes on
            event(
                log,
                logging.ERROR,
                "maintenance_hook_failed",
                str(exc),
                hook=getattr(hook, "__name__", repr(hook)),
                worker_id=worker_id,
            )
    pruned = store.purge(older_than_s=settings.job_retention_s, now=now)
    if pruned:
        event(log, logging.INFO, "jobs_pruned", f"pruned {pruned} old jobs", count=pruned)
    removed("job", pruned)
    metrics.publish_stats(store.stats(now))
