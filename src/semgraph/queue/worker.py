"""The sequential worker's loop: register, claim one job, run it in a thread, repeat until
stopped.

The main thread supervises the job (:class:`semgraph.queue.supervise.Supervisor`: heartbeats,
the time limit, an operator's abandon, a shutdown signal) and then records the outcome
(:class:`semgraph.queue.outcome.OutcomeRecorder`); the job's own code only has to call
``ctx.checkpoint(name)``. A job that does not reach a checkpoint within
``job_cancel_grace_s`` after being told to stop has its outcome recorded and the worker
process exits (status 3) so that nothing keeps running a job it no longer owns. Every
``sweep_interval_s`` the loop runs the maintenance pass (:func:`semgraph.queue.supervise.maintain`).

The worker outlives a graph-server outage: a claim, maintenance pass or outcome write that
cannot reach the server is retried with a capped backoff (the driver reconnects), and a
claim whose COMMIT was cut (outcome unknown) is handed back once the server answers again,
since an idle worker owns no running job. An idle worker with pending jobs in backoff logs
when the next may run (``worker_waiting``).

The module is over 300 lines because the loop, its outage handling and the idle report
share the worker's state; supervising a job and recording its outcome live elsewhere.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from semgraph.alerts import Alerter
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import CancelReason, ConfigError, GraphError, JobCancelled, SemgraphError
from semgraph.logs import event
from semgraph.queue import registry
from semgraph.queue.lanes import ClaimScope, parse_lane
from semgraph.queue.models import Job, role_kinds
from semgraph.queue.outcome import Outcome, OutcomeRecorder, run_fn
from semgraph.queue.registry import JobContext, JobInfo
from semgraph.queue.store import JobStore
from semgraph.queue.supervise import Supervisor, maintain
from semgraph.queue.sweep import Identity
from semgraph.queue.wake import WakeListener

log = logging.getLogger(__name__)
WAITING_CHECK_EVERY_S = 10.0
WAITING_LOG_EVERY_S = 60.0

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
        self._waiting_for: float | None = None  # the next run_after last logged while idle
        self._waiting_logged_at = self._waiting_checked_at = float("-inf")
        self.identity = Identity.current()
        self.name = settings.worker_name or socket.gethostname()
        # its lane, and its name for the soft affinity (semgraph.queue.lanes)
        self.scope = ClaimScope(parse_lane(settings.worker_lane), self.name)
        self.jobs_done = 0
        self._uncertain_claim = False
        self._stop = threading.Event()
        self.supervisor = Supervisor(
            settings,
            self.store,
            worker_id=self.worker_id,
            clock=clock,
            tick_s=self.tick_s,
            stop=self._stop,
            hard_exit=hard_exit,
        )
        self.recorder = OutcomeRecorder(
            settings,
            self.store,
            self.alerter,
            worker_id=self.worker_id,
            clock=clock,
            stop=self._stop,
            outage_wait=self._outage_wait,
        )

    # -- lifecycle -----------------------------------------------------------------------------

    def request_stop(self) -> None:
        """Finish the current checkpoint, hand the job back, then exit (graceful stop)."""
        self._stop.set()

    def install_signal_handlers(self) -> None:
        """SIGTERM/SIGINT: a first one stops after the current checkpoint, a second exits."""
        self.supervisor.install_signal_handlers()

    def register(self) -> None:
        name, lane = self.name, self.scope.lane.value
        props = {"name": name, "lane": lane, **self.identity.to_props()}
        self.store.register_worker(self.worker_id, props, now=self.clock())
        event(
            log,
            logging.INFO,
            "worker_started",
            f"worker {name} pid {self.identity.pid}, lane {lane}, "
            f"role {self.settings.worker_role}, kinds {', '.join(self.kinds())}",
            worker_id=self.worker_id,
        )

    def kinds(self) -> list[str]:
        """The registered kinds this worker's role claims (``worker_role``)."""
        return role_kinds(self.settings.worker_role, registry.kinds())

    def maintain(self) -> None:
        """The periodic rescue: recover jobs of dead workers, prune old jobs, publish stats."""
        maintain(
            self.settings,
            self.graph,
            self.store,
            now=self.clock(),
            identity=self.identity,
            worker_id=self.worker_id,
            alerter=self.alerter,
        )

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
        kinds = self.kinds()
        self.register()
        wake = WakeListener(self.settings.state_dir, self.worker_id[:16])
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
                        # the sweep returned dead workers' jobs to pending as of its own
                        # clock reading: claim at a reading no earlier (`--once` right after
                        # a crash found the recovered job "not yet due" and exited)
                        now = self.clock()
                    job = self._claim(kinds, now, job_id)
                    if job is None:
                        self.store.worker_heartbeat(self.worker_id, now=now)
                except GraphError as exc:
                    outages += 1
                    self._outage_wait("worker_loop", exc, outages)
                    continue
                outages = 0
                if job is None:
                    self._report_waiting(now)
                    if once or (idle_exit_s is not None and now - idle_since >= idle_exit_s):
                        break
                    # a local enqueue nudges the socket (semgraph.queue.wake); else poll
                    wake.wait(self.settings.poll_interval_s, self._stop)
                    continue
                self.run_job(job)
                idle_since = self.clock()
                if once or (max_jobs is not None and self.jobs_done >= max_jobs):
                    break
        finally:
            wake.close()
            try:
                self.store.stop_worker(self.worker_id, now=self.clock())
            except SemgraphError as exc:  # the next start's sweep sees the pid is gone
                event(log, logging.WARNING, "worker_stop_unrecorded", str(exc))
            event(log, logging.INFO, "worker_stopped", worker_id=self.worker_id)
        return 0

    def _report_waiting(self, now: float) -> None:
        """While idle with pending jobs in backoff, log when the next one may run (looked up
        every 10 s; logged when that time changes, else once a minute): an operator tells
        "waiting" from "stuck"."""
        if now - self._waiting_checked_at < WAITING_CHECK_EVERY_S:
            return
        self._waiting_checked_at = now
        try:
            _, next_run = self.store.pending_times()
        except GraphError:
            return  # the loop's next claim meets the outage
        if next_run is None or next_run <= now:
            self._waiting_for = None
            return
        if next_run == self._waiting_for and now - self._waiting_logged_at < WAITING_LOG_EVERY_S:
            return
        self._waiting_for, self._waiting_logged_at = next_run, now
        event(
            log,
            logging.INFO,
            "worker_waiting",
            f"idle: the next pending job may run in {next_run - now:.0f}s (backoff)",
            worker_id=self.worker_id,
            next_eligible_at=next_run,
            next_eligible_in_s=round(next_run - now, 1),
        )

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
            return self.store.claim(self.worker_id, kinds, now=now, job_id=job_id, scope=self.scope)
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
        outcome = Outcome()
        started = time.monotonic()
        if fn is None:
            outcome.error = SemgraphError(f"no job kind {job.kind!r} is registered")
        else:
            thread = threading.Thread(
                target=run_fn, args=(fn, ctx, outcome), name=f"job-{job.id}", daemon=True
            )
            began = self.clock()  # before the job can run: its own time counts
            thread.start()
            if not self.supervisor.watch(job, token, ctx, thread, began):
                # the job ignored its cancellation: record what we know, then leave
                if outcome.error is None:  # still running: it did not succeed
                    outcome.error = JobCancelled(
                        "the job ignored its cancellation",
                        reason=ctx.cancel_requested or CancelReason.CANCELLED,
                    )
                self.recorder.record(job, token, ctx, outcome, started)
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
        self.recorder.record(job, token, ctx, outcome, started)
        self.jobs_done += 1
