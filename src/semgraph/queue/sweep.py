"""Crash recovery: find jobs whose worker is dead and hand them back (or quarantine them).

A worker records who it is (host, boot id, pid and the pid's start time) on its ``:Worker``
node. An owner counts as dead when its record is missing or marked stopped, when it ran on
this host and its process is gone (or the host rebooted since), or, for an owner on another
host, when the job's lease expired. An owner that is provably alive on this host is never
touched, whatever the lease says.
"""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass
from typing import Any

from semgraph.alerts import Alerter
from semgraph.logs import event
from semgraph.queue import metrics
from semgraph.queue.models import Job, JobStatus, RunningJob
from semgraph.queue.store import JobStore

log = logging.getLogger(__name__)


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def process_start(pid: int) -> str | None:
    """The start time of ``pid`` in clock ticks since boot (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    # after "pid (comm)": field 3 is state ... field 22 is starttime (index 19 here)
    if len(fields) < 20 or fields[0] == "Z":
        return None
    return fields[19]


@dataclass(frozen=True)
class Identity:
    """Who a worker process is, precisely enough to tell whether it still lives."""

    host: str
    boot_id: str
    pid: int
    pid_start: str | None

    @classmethod
    def current(cls) -> Identity:
        pid = os.getpid()
        return cls(socket.gethostname(), _boot_id(), pid, process_start(pid))

    def to_props(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "boot_id": self.boot_id,
            "pid": self.pid,
            "pid_start": self.pid_start,
        }


def death_reason(
    running: RunningJob, me: Identity, my_worker_id: str | None, now: float
) -> str | None:
    """Why the owner of ``running`` is dead, or None when it may be alive."""
    worker = running.worker
    if worker is None:
        return "worker record missing"
    if worker.get("id") == my_worker_id:
        return None
    if worker.get("status") == "stopped":
        return "worker stopped without finishing the job"
    if worker.get("host") == me.host:
        if worker.get("boot_id") and me.boot_id and worker.get("boot_id") != me.boot_id:
            return "host rebooted"
        pid = worker.get("pid")
        if isinstance(pid, int) and pid > 0:
            start = process_start(pid)
            if start is not None and start == worker.get("pid_start"):
                return None  # provably alive here
            return f"process {pid} on {me.host} is gone"
    lease = running.lease_expires_at
    if lease is None or lease < now:
        return f"lease expired at {lease}"
    return None


def sweep(
    store: JobStore,
    *,
    now: float,
    me: Identity,
    my_worker_id: str | None = None,
    alerter: Alerter | None = None,
) -> list[Job]:
    """Recover every running job whose owner is dead; returns the jobs it changed."""
    changed: list[Job] = []
    for running in store.running_jobs():
        reason = death_reason(running, me, my_worker_id, now)
        if reason is None:
            continue
        job = store.recover(running.id, running.claim_token, now=now, reason=reason)
        if job is None:
            event(
                log,
                logging.INFO,
                "sweep_skipped",
                "job changed hands before the sweep could recover it",
                job_id=running.id,
                repo=running.repo_key,
            )
            continue
        changed.append(job)
        event(
            log,
            logging.WARNING,
            "job_recovered",
            f"worker died ({reason}); job is now {job.status.value}",
            job_id=job.id,
            repo=job.repo_key,
            status=job.status.value,
            crash_count=job.crash_count,
            attempts=job.attempts,
        )
        if job.status is JobStatus.QUARANTINED:
            metrics.QUARANTINES.inc()
            (alerter or Alerter(store.settings)).fire(
                "job_quarantined",
                f"job {job.id} ({job.kind}) quarantined after {job.crash_count} crashes "
                f"and {job.attempts} attempts: {reason}",
                job_id=job.id,
                repo=job.repo_key,
            )
    return changed
