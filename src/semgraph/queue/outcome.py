"""Recording one attempt's outcome: what the job thread left (:class:`Outcome`), the fenced
write that records it (retried while the graph server is unreachable: a late write is
harmless), and the log line, duration metric and alert it leaves.

The outcome follows from the job's error and the reason it was asked to stop: none is
``complete``; a timeout is ``fail`` (kind timeout); a lost job records nothing (another
owner has it); a stop at shutdown is ``release``; an operator's abandon is
``acknowledge_abandon``; any other error is ``fail``, retried with backoff while attempts
remain. A job that failed for good fires the ``job_failed`` alert.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from semgraph.alerts import Alerter
from semgraph.config import Settings
from semgraph.errors import CancelReason, GraphError, JobCancelled
from semgraph.logs import event
from semgraph.queue import metrics, registry
from semgraph.queue.models import FailureKind, Job, JobStatus
from semgraph.queue.registry import JobContext
from semgraph.queue.store import JobStore

log = logging.getLogger(__name__)

#: how the worker waits out a graph outage: (action, error, tries so far)
OutageWait = Callable[[str, BaseException, int], None]


@dataclass
class Outcome:
    """What the job thread left: the exception it raised, if any."""

    error: BaseException | None = None


def run_fn(fn: registry.JobFn, ctx: JobContext, outcome: Outcome) -> None:
    """The job thread's body."""
    try:
        fn(ctx)
    except BaseException as exc:  # the job's failure is data, recorded by the main thread
        outcome.error = exc


class OutcomeRecorder:
    """Writes each attempt's outcome for the worker (fenced by the claim token)."""

    def __init__(
        self,
        settings: Settings,
        store: JobStore,
        alerter: Alerter,
        *,
        worker_id: str,
        clock: Callable[[], float],
        stop: threading.Event,
        outage_wait: OutageWait,
    ) -> None:
        self.settings = settings
        self.store = store
        self.alerter = alerter
        self.worker_id = worker_id
        self.clock = clock
        self.stop = stop
        self.outage_wait = outage_wait

    def record(
        self, job: Job, token: str, ctx: JobContext, outcome: Outcome, started: float
    ) -> None:
        """Write the attempt's outcome (fenced); alert on permanent failure."""
        now = self.clock()
        reason = ctx.cancel_requested
        error = outcome.error
        result: Job | bool | None
        cancelled = isinstance(error, JobCancelled) and reason is not None
        store = self.store
        if error is None:
            files = ctx.files
            result = self._persist(lambda: store.complete(job.id, token, now=now, files=files))
            label = "succeeded"
        elif reason is CancelReason.TIMEOUT:
            message = f"timeout: over {self.settings.job_timeout_s}s"
            result = self._persist(
                lambda: store.fail(
                    job.id, token, now=now, message=message, kind=FailureKind.TIMEOUT
                )
            )
            label = "timeout"
        elif reason is CancelReason.LOST:
            result = None
            label = "lost"
        elif cancelled and reason is CancelReason.SHUTDOWN:
            result = self._persist(lambda: store.release(job.id, token, now=now))
            label = "released"
        elif cancelled and reason is CancelReason.ABANDONED:
            result = self._persist(lambda: store.acknowledge_abandon(job.id, token, now=now))
            label = "abandoned"
        else:
            message = f"{type(error).__name__}: {error}"
            result = self._persist(lambda: store.fail(job.id, token, now=now, message=message))
            label = "error"
        metrics.JOB_DURATION.labels(kind=job.kind, outcome=label).observe(
            time.monotonic() - started
        )
        self._log_result(job, label, result, error)

    def _persist(self, write: Callable[[], Job | bool | None]) -> Job | bool | None:
        """Run an outcome write, retrying while the graph server is unreachable (the write is
        fenced, so a late one is harmless). Gives up only when the worker is stopping: the
        next start's sweep then recovers the job."""
        tries = 0
        while True:
            try:
                return write()
            except GraphError as exc:
                tries += 1
                if self.stop.is_set() and tries > 1:
                    raise
                self.outage_wait("record_outcome", exc, tries)

    def _log_result(
        self, job: Job, label: str, result: Job | bool | None, error: BaseException | None
    ) -> None:
        fields = {"job_id": job.id, "repo": job.repo_key, "worker_id": self.worker_id}
        if result is None or result is False:
            event(log, logging.WARNING, "job_lost", f"outcome {label} not recorded", **fields)
            return
        if result is True:
            event(log, logging.INFO, "job_succeeded", **fields)
            return
        status = result.status
        if status is JobStatus.PENDING and label in {"error", "timeout"}:
            metrics.RETRIES.labels(reason=label).inc()
            event(
                log,
                logging.WARNING,
                "job_retry",
                f"{label}: {error}; retry at {result.run_after:.3f}",
                **fields,
            )
        elif status is JobStatus.FAILED:
            event(log, logging.ERROR, "job_failed", f"{label}: {error}", **fields)
            self.alerter.fire(
                "job_failed",
                f"job {job.id} ({job.kind}) failed after {result.attempts} attempts: "
                f"{result.last_error}",
                job_id=job.id,
                repo=job.repo_key,
            )
        else:
            event(log, logging.INFO, f"job_{label}", f"job is now {status.value}", **fields)
