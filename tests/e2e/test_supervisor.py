"""The supervisor tier (issue 19): real worker processes, restarted the way Kubernetes
restarts a pod, and a real SIGKILL from a watcher, on real repositories made by the test.

The scenario that lost a push: the first index of one repository dies every time while it
parses (SIGKILL from outside, as an OOM killer would), a supervisor restarts the worker,
and another repository waits in the queue behind it. Each restarted worker runs the crash
sweep and ``check --repair`` at start. Afterwards:

- the crashing job is quarantined after ``max_crashes`` starts, its source and commit
  intact (the repair never rewrote them);
- the other repository's job succeeded;
- no ``index_diverged`` alert fired for the repository that was never published;
- ``semgraph check`` exits 0;
- once the cause is gone, ``semgraph jobs requeue`` of the quarantined job indexes it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.runs import RunStore
from semgraph.indexer.sources import normalize_source, repo_key_for
from semgraph.queue.models import Job, JobStatus
from semgraph.queue.store import JobStore
from tests.cli import REPO_ROOT, run_cli
from tests.optional import some
from tests.repos import git, make_repo

pytestmark = [pytest.mark.e2e, pytest.mark.supervisor]

MAX_CRASHES = 2
DEADLINE_S = 240.0
# every start: the crash sweep and check --repair run at once; a dead job is claimable again
# at once (no backoff), so each restart goes straight back to the crashing repository
ENV = {
    "SEMGRAPH_JOB_MAX_CRASHES": str(MAX_CRASHES),
    "SEMGRAPH_JOB_MAX_ATTEMPTS": "10",
    "SEMGRAPH_BACKOFF_BASE_S": "0",
    "SEMGRAPH_BACKOFF_CAP_S": "0",
    "SEMGRAPH_LEASE_S": "30",
}
CAUSE = {"SEMGRAPH_FAULTS": "parse.file=marker"}  # the parse of the marked file hangs


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=ENV)


class Supervisor:
    """Starts ``semgraph worker`` processes, each in its own process group (a pod: killing
    it kills its parse pool too), and keeps their output."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[subprocess.Popen[str]] = []
        self.logs: list[Path] = []

    def start(self, env: dict[str, str]) -> subprocess.Popen[str]:
        log = self.tmp / f"worker{len(self.procs)}.log"
        with log.open("w") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "semgraph.cli", "worker"],
                cwd=REPO_ROOT,
                env={**os.environ, **ENV, **env},
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        self.procs.append(proc)
        self.logs.append(log)
        return proc

    @staticmethod
    def kill(proc: subprocess.Popen[str], sig: signal.Signals) -> int:
        os.killpg(proc.pid, sig)
        return proc.wait(timeout=60)

    def output(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()}" for p in self.logs)

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                self.kill(proc, signal.SIGKILL)


@pytest.fixture
def supervisor(tmp_path: Path) -> Iterator[Supervisor]:
    sup = Supervisor(tmp_path)
    yield sup
    sup.close()


def wait_for(
    what: str, ready: Callable[[], bool], sup: Supervisor, proc: subprocess.Popen[str]
) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not ready():
        if proc.poll() is not None:
            pytest.fail(f"worker exited {proc.returncode} waiting for {what}\n{sup.output()}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}\n{sup.output()}")
        time.sleep(0.2)


def parsing(graph: Graph, job: Job) -> bool:
    """Whether ``job``'s current attempt got past its checkout (its run is recorded)."""
    runs = RunStore(graph).list(repo=job.repo_key, status="running", limit=10)
    return any(r.get("job_id") == job.id for r in runs)


def test_a_first_index_that_always_dies_is_quarantined_and_nothing_is_lost(
    graph: Graph, settings: Settings, supervisor: Supervisor, tmp_path: Path
) -> None:
    crashing = make_repo(
        tmp_path / "crashing",
        {
            "app.py": "def serve():\n    return handle()\n\n\ndef handle():\n    return 1\n",
            "slow.py": "# SEMGRAPH_FAULT:hang\nX = 1\n",
        },
    )
    fine = make_repo(tmp_path / "fine", {"lib.py": "def helper():\n    return 2\n"})
    sha = git(crashing, "rev-parse", "HEAD")
    queued = cli("enqueue", str(crashing), "--commit", sha, "--priority", "5")
    assert queued.returncode == 0, queued.stderr
    assert cli("enqueue", str(fine)).returncode == 0
    store = JobStore(graph, settings)
    (job_a,) = store.list(repo=repo_key_for(str(crashing)))
    (job_b,) = store.list(repo=repo_key_for(str(fine)))

    def settled() -> bool:
        return some(store.get(job_a.id)).status is JobStatus.QUARANTINED

    kills = 0
    while True:
        worker = supervisor.start(CAUSE)  # the supervisor restarts the pod
        current = some(store.get(job_a.id))

        def in_parse(job: Job = current) -> bool:
            """This start's attempt is parsing (not the dead one's, still running until
            the sweep of this start recovers it)."""
            latest = some(store.get(job.id))
            fresh = latest.status is JobStatus.RUNNING and latest.attempts > job.attempts
            return fresh and parsing(graph, latest)

        wait_for(
            "the crashing job to parse or be quarantined",
            lambda: in_parse() or settled(),
            supervisor,
            worker,
        )
        if settled():
            break  # this start's sweep quarantined it: this worker goes on to the next job
        time.sleep(1.0)  # well inside the parse of the hanging file
        assert supervisor.kill(worker, signal.SIGKILL) == -signal.SIGKILL
        kills += 1
        assert kills <= MAX_CRASHES, supervisor.output()

    wait_for(
        "the waiting repository's job to succeed",
        lambda: some(store.get(job_b.id)).status is JobStatus.SUCCEEDED,
        supervisor,
        worker,
    )
    supervisor.kill(worker, signal.SIGTERM)

    a = some(store.get(job_a.id))
    assert a.status is JobStatus.QUARANTINED and a.crash_count == MAX_CRASHES == kills
    assert a.commit == sha and a.args["commit"] == sha
    assert a.args["source"] == str(crashing)  # the source it was queued with, untouched
    assert some(store.record(a.repo_key)).source == normalize_source(str(crashing))
    logs = supervisor.output()
    assert "index_diverged" not in logs, logs  # never published: nothing to diverge from
    checked = cli("check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "unpublished" in checked.stdout

    # the cause removed (the fault no longer armed), an operator requeues the job
    requeued = cli("jobs", "requeue", a.id)
    assert requeued.returncode == 0, requeued.stderr
    worker = supervisor.start({})
    wait_for(
        "the requeued job to succeed",
        lambda: some(store.get(job_a.id)).status is JobStatus.SUCCEEDED,
        supervisor,
        worker,
    )
    supervisor.kill(worker, signal.SIGTERM)
    final = cli("check")
    assert final.returncode == 0 and "unpublished" not in final.stdout, final.stdout
    served = cli("graph", "callers", "handle", "--repo", a.repo_key)
    assert served.returncode == 0 and "serve" in served.stdout, served.stdout + served.stderr
