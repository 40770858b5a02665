"""The sequential worker: claim one job, run it in a thread, watch it from the main thread.

The main thread heartbeats (job lease + ``:Worker`` node), enforces the time limit, notices
an operator's abandon and a shutdown signal, and records the outcome; the job's own code
only has to call ``ctx.checkpoint(name)``. A job that does not reach a checkpoint within
``job_cancel_grace_s`` after being told to stop has its outcome recorded and the worker
process exits (status 3) so that nothing keeps running a job it no longer owns.

The worker outlives a graph-server outage: a claim, maintenance pass or outcome write that
cannot reach the server is retried with a capped backoff (the driver reconnects), and a
claim whose COMMIT was cut (outcome unknown) is handed back once the server answers again,
since an idle worker owns no running job.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

from semgraph.alerts import Alerter
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import ConfigError, GraphError, JobCancelled, SemgraphError
from semgraph.logs import event
from semgraph.queue import metrics, registry
from semgraph.queue.models import FailureKind, Job, JobStatus
from semgraph.queue.registry import JobContext, JobInfo
from semgraph.queue.store import JobStore
from semgraph.queue.sweep import Identity, sweep

log = logging.getLogger(__name__)

EXIT_STUCK = 3  # a job ignored its cancellation past the grace period
OUTAGE_WAIT_CAP_S = 5.0  # longest wait between tries while the graph server is unreachable
Clock = Callable[[], float]


def check_settings(settings: Settings) -> None:
    """Queue settings that only make sense together."""
    if settings.heartbeat_s >= settings.lease_s:
        raise ConfigError(
            f"SEMGRAPH_HEARTBEAT_S ({settings.heartbeat_s}) must be smaller than "
            f"SEMGRAPH_LEASE_S ({settings.lease_s})"
        )
    if settings.backoff_cap_s < settings.backoff_base_s:
        raise ConfigError("SEMGRAPH_BACKOFF_CAP_S must be >= SEMGRAPH_BACKOFF_BASE_S")


@dataclass
class _Outcome:
    error: BaseException | None = None


class Worker:
    def __init__(
        self,
        settings: Settings,
        graph: Graph,
        *,
        store: JobStore | None = None,
        clock: Clock = time.time,
        hard_exit: Callable[[int], Any] = os._exit,
        alerter: Alerter | None = None,
        tick_s: float = 0.05,
    ) -> None:
        check_settings(settings)
        self.settings = settings
        self.graph = graph
        self.store = store or JobStore(graph, settings)
        self.clock = clock
        self.hard_exit = hard_exit
        self.alerter = alerter or Alerter(settings)
        self.tick_s = min(tick_s, settings.heartbeat_s)
        self.worker_id = uuid.uuid4().hex
        self.identity = Identity.current()
        self.jobs_done = 0
        self._uncertain_claim = False
        self._stop = threading.Event()
        self._signals = 0

    # -- lifecycle -----------------------------------------------------------------------------

    def request_stop(self) -> None:
        """Finish the current checkpoint, hand the job back, then exit (graceful stop)."""
        self._stop.set()

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
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
        self.request_stop()

    def install_signal_handlers(self) -> None:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)

    def register(self) -> None:
        name = self.settings.worker_name or socket.gethostname()
        props = {"name": name, **self.identity.to_props()}
        self.store.register_worker(self.worker_id, props, now=self.clock())
        event(
            log,
            logging.INFO,
            "worker_started",
            f"worker {name} pid {self.identity.pid}, kinds {', '.join(registry.kinds())}",
            worker_id=self.worker_id,
        )

    def maintain(self) -> None:
        """The periodic rescue: recover jobs of dead workers, prune old jobs, publish stats."""
        now = self.clock()
        sweep(
            self.store,
            now=now,
            me=self.identity,
            my_worker_id=self.worker_id,
            alerter=self.alerter,
        )
        for hook in registry.maintenance_hooks():
            try:
                hook(self.settings, self.graph)
            except Exception as exc:  # a failing hook is logged; the worker goes on
                event(
                    log,
                    logging.ERROR,
                    "maintenance_hook_failed",
                    str(exc),
                    hook=getattr(hook, "__name__", repr(hook)),
                    worker_id=self.worker_id,
                )
        pruned = self.store.purge(older_than_s=self.settings.job_retention_s, now=now)
        if pruned:
            event(log, logging.INFO, "jobs_pruned", f"pruned {pruned} old jobs", count=pruned)
        metrics.publish_stats(self.store.stats(now))

    def run(
        self,
        *,
        once: bool = False,
        max_jobs: int | None = None,
        idle_exit_s: float | None = None,
        job_id: str | None = None,
    ) -> int:
        """Run jobs until stopped; returns the process exit status (0 on a clean stop). With
        ``job_id`` only that job is ever claimed (other pending jobs wait for a worker)."""
        kinds = registry.kinds()
        self.register()
        last_maintain = float("-inf")
        idle_since = self.clock()
        outages = 0
        try:
            while not self._stop.is_set():
                now = self.clock()
                try:
                    if self._uncertain_claim:
                        self._release_own_running(now)
                    if now - last_maintain >= self.settings.sweep_interval_s:
                        self.maintain()
                        last_maintain = now
                    job = self._claim(kinds, now, job_id)
                    if job is None:
                        self.store.worker_heartbeat(self.worker_id, now=now)
                except GraphError as exc:
                    outages += 1
                    self._outage_wait("worker_loop", exc, outages)
                    continue
                outages = 0
                if job is None:
                    if once or (idle_exit_s is not None and now - idle_since >= idle_exit_s):
                        break
                    self._stop.wait(self.settings.poll_interval_s)
                    continue
                self.run_job(job)
                idle_since = self.clock()
                if once or (max_jobs is not None and self.jobs_done >= max_jobs):
                    break
        finally:
            try:
                self.store.stop_worker(self.worker_id, now=self.clock())
            except SemgraphError as exc:  # the next start's sweep sees the pid is gone
                event(log, logging.WARNING, "worker_stop_unrecorded", str(exc))
            event(log, logging.INFO, "worker_stopped", worker_id=self.worker_id)
        return 0

    # -- graph-server outages ---------------------------------------------------------------------

    def _outage_wait(self, action: str, exc: BaseException, tries: int) -> None:
        wait_s = min(OUTAGE_WAIT_CAP_S, self.settings.poll_interval_s * 2 ** min(tries, 10))
        event(
            log,
            logging.WARNING,
            "graph_unavailable",
            f"{action}: {exc}; retrying in {wait_s:.2f}s",
            worker_id=self.worker_id,
            tries=tries,
        )
        self._stop.wait(wait_s)

    def _claim(self, kinds: list[str], now: float, job_id: str | None = None) -> Job | None:
        try:
            return self.store.claim(self.worker_id, kinds, now=now, job_id=job_id)
        except GraphError:
            # a cut during COMMIT may have claimed a job that nobody will run
            self._uncertain_claim = True
            raise

    def _release_own_running(self, now: float) -> None:
        """Hand back every job still marked running under this worker: between jobs it owns
        none, so such a job was claimed by a COMMIT whose answer was lost."""
        for running in self.store.running_jobs():
            if (running.worker or {}).get("id") != self.worker_id:
                continue
            job = self.store.release(running.id, running.claim_token, now=now)
            event(
                log,
                logging.WARNING,
                "claim_released",
                "a claim whose answer was lost is handed back",
                job_id=running.id,
                repo=running.repo_key,
                status=job.status.value if job else "changed hands",
            )
        self._uncertain_claim = False

    # -- one job -------------------------------------------------------------------------------

    def run_job(self, job: Job) -> None:
        event(
            log,
            logging.INFO,
            "job_claimed",
            f"attempt {job.attempts}/{job.max_attempts} of {job.kind}",
            job_id=job.id,
            repo=job.repo_key,
            worker_id=self.worker_id,
        )
        token = job.claim_token or ""
        fn = registry.lookup(job.kind)
        ctx = JobContext(
            job=JobInfo(
                id=job.id,
                kind=job.kind,
                repo_key=job.repo_key,
                args=job.args,
                ref=job.ref,
                commit=job.commit,
                attempts=job.attempts,
                crash_count=job.crash_count,
            ),
            settings=self.settings,
            graph=self.graph,
            worker_id=self.worker_id,
        )
        outcome = _Outcome()
        started = time.monotonic()
        if fn is None:
            outcome.error = SemgraphError(f"no job kind {job.kind!r} is registered")
        else:
            thread = threading.Thread(
                target=_run_fn, args=(fn, ctx, outcome), name=f"job-{job.id}", daemon=True
            )
            began = self.clock()  # before the job can run: its own time counts
            thread.start()
            if not self._watch(job, token, ctx, thread, began):
                # the job ignored its cancellation: record what we know, then leave
                if outcome.error is None:  # still running: it did not succeed
                    outcome.error = JobCancelled(
                        "the job ignored its cancellation", reason=ctx.cancel_requested or ""
                    )
                self._record(job, token, ctx, outcome, started)
                event(
                    log,
                    logging.CRITICAL,
                    "worker_abort",
                    f"job did not stop within {self.settings.job_cancel_grace_s}s of being "
                    "cancelled; exiting the worker",
                    job_id=job.id,
                    repo=job.repo_key,
                )
                self.hard_exit(EXIT_STUCK)
                return
        self._record(job, token, ctx, outcome, started)
        self.jobs_done += 1

    def _watch(
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
            if self._stop.is_set() and ctx.cancel_requested is None:
                ctx.cancel("shutdown")  # no deadline: the job stops at its next checkpoint
            if now >= next_beat:
                next_beat = now + self.settings.heartbeat_s
                self._beat(job, token, ctx, now)
            over = now - start > self.settings.job_timeout_s
            if over and ctx.cancel_requested in {None, "shutdown"}:
                event(log, logging.WARNING, "job_timeout", job_id=job.id, repo=job.repo_key)
                ctx.cancel("timeout", override=True)
            if deadline is None and ctx.cancel_requested in {"timeout", "abandoned", "lost"}:
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
            ctx.cancel("lost")
        elif beat.cancel_reason is not None:
            event(
                log,
                logging.INFO,
                "job_abandon_seen",
                beat.cancel_reason,
                job_id=job.id,
                repo=job.repo_key,
            )
            ctx.cancel("abandoned")

    def _record(
        self, job: Job, token: str, ctx: JobContext, outcome: _Outcome, started: float
    ) -> None:
        """Write the attempt's outcome (fenced); alert on permanent failure."""
        now = self.clock()
        reason = ctx.cancel_requested
        error = outcome.error
        result: Job | bool | None
        cancelled = isinstance(error, JobCancelled) and reason is not None
        store = self.store
        if error is None:
            result = self._persist(lambda: store.complete(job.id, token, now=now))
            label = "succeeded"
        elif reason == "timeout":
            message = f"timeout: over {self.settings.job_timeout_s}s"
            result = self._persist(
                lambda: store.fail(
                    job.id, token, now=now, message=message, kind=FailureKind.TIMEOUT
                )
            )
            label = "timeout"
        elif reason == "lost":
            result = None
            label = "lost"
        elif cancelled and reason == "shutdown":
            result = self._persist(lambda: store.release(job.id, token, now=now))
            label = "released"
        elif cancelled and reason == "abandoned":
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
                if self._stop.is_set() and tries > 1:
                    raise
                self._outage_wait("record_outcome", exc, tries)

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


def _run_fn(fn: registry.JobFn, ctx: JobContext, outcome: _Outcome) -> None:
    try:
        fn(ctx)
    except BaseException as exc:  # the job's failure is data, recorded by the main thread
        outcome.error = exc
