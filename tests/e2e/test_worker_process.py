"""The real worker as a subprocess: SIGKILL recovery, a crash-looping job quarantined,
graceful SIGTERM, operator abandon, a second signal. Test-only kinds: tests/jobkinds.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from semgraph.config import load_settings
from semgraph.db import Graph
from semgraph.queue.models import JobStatus
from semgraph.queue.store import JobStore
from tests.optional import some

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parents[2]
FAST = {
    "SEMGRAPH_JOB_MODULES": "tests.jobkinds",
    "SEMGRAPH_HEARTBEAT_S": "0.1",
    "SEMGRAPH_LEASE_S": "30",
    "SEMGRAPH_POLL_INTERVAL_S": "0.05",
    "SEMGRAPH_BACKOFF_BASE_S": "0",
    "SEMGRAPH_JOB_MAX_CRASHES": "2",
    "SEMGRAPH_JOB_MAX_ATTEMPTS": "5",
    "SEMGRAPH_JOB_CANCEL_GRACE_S": "60",
}


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, **FAST, **(extra or {})}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def start_worker(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "semgraph.cli", "worker", *args],
        cwd=REPO_ROOT,
        env=_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semgraph.cli", *args],
        cwd=REPO_ROOT,
        env=_env(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def wait_for(what: str, predicate: Callable[[], bool], proc: subprocess.Popen[str]) -> None:
    """Wait (bounded) for a worker subprocess to reach a state it reports in a file."""
    deadline = time.monotonic() + 60
    while not predicate():
        if proc.poll() is not None:
            raise AssertionError(f"worker exited ({proc.returncode}) before {what}: {_out(proc)}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"timed out waiting for {what}: {_out(proc)}")
        time.sleep(0.02)


def _out(proc: subprocess.Popen[str]) -> str:
    try:
        out, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return (out or "")[-4000:]


def finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    out = _out(proc)
    return proc.returncode, out


@pytest.fixture
def store(graph: Graph) -> JobStore:
    return JobStore(graph, load_settings(job_max_crashes=2, job_max_attempts=5))


def test_worker_runs_jobs_and_exits_when_idle(store: JobStore, tmp_path: Path) -> None:
    tally = tmp_path / "tally"
    ids = [
        store.enqueue(f"r/{i}", now=time.time(), kind="test_record", args={"tally": str(tally)})
        for i in range(3)
    ]
    failing = store.enqueue("r/bad", now=time.time(), kind="test_fail", args={"message": "nope"})
    proc = start_worker("--idle-exit-s", "0", env={"SEMGRAPH_JOB_MAX_ATTEMPTS": "1"})
    code, out = finish(proc)
    assert code == 0, out
    assert sorted(line.split()[0] for line in tally.read_text().splitlines()) == sorted(
        r.job_id for r in ids
    )
    assert all(some(store.get(r.job_id)).status is JobStatus.SUCCEEDED for r in ids)
    bad = some(store.get(failing.job_id))
    assert bad.status is JobStatus.FAILED and "RuntimeError: nope" in some(bad.last_error)
    assert "job_failed" in out and "job_claimed" in out


def test_sigkill_mid_job_then_restart_returns_it_to_pending(
    store: JobStore, tmp_path: Path
) -> None:
    marker = tmp_path / "started"
    jid = store.enqueue("r/kill", now=time.time(), kind="test_block", args={"marker": str(marker)})
    proc = start_worker()
    wait_for("the job to start", marker.exists, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)  # reaped, its output pipe read to the end and closed
    assert some(store.get(jid.job_id)).status is JobStatus.RUNNING  # nobody recorded anything yet
    # restart without the test kinds: the startup sweep runs, nothing is claimable
    restart = start_worker("--once", env={"SEMGRAPH_JOB_MODULES": ""})
    code, out = finish(restart)
    assert code == 0, out
    job = some(store.get(jid.job_id))
    assert (job.status, job.attempts, job.crash_count) == (JobStatus.PENDING, 1, 1)
    assert job.errors[-1].kind == "crash" and "gone" in job.errors[-1].message
    runs = store.graph.query("runs", "MATCH (r:IndexRun) RETURN r.status AS s")
    assert runs == [{"s": "abandoned"}]
    assert "job_recovered" in out


def test_job_that_kills_the_worker_is_quarantined_others_still_run(
    store: JobStore, tmp_path: Path
) -> None:
    tally = tmp_path / "tally"
    bomb = store.enqueue("r/bomb", now=time.time(), kind="test_hard_exit", priority=10)
    good = store.enqueue("r/good", now=time.time(), kind="test_record", args={"tally": str(tally)})
    codes = []
    for _ in range(6):  # a supervisor restarting the worker; the loop must end by itself
        code, out = finish(start_worker("--idle-exit-s", "0"))
        codes.append(code)
        if code == 0:
            break
    assert codes == [17, 17, 0], out
    job = some(store.get(bomb.job_id))
    assert (job.status, job.crash_count, job.attempts) == (JobStatus.QUARANTINED, 2, 2)
    assert [e.kind for e in job.errors] == ["crash", "crash"]
    assert some(store.get(good.job_id)).status is JobStatus.SUCCEEDED
    assert tally.read_text().split()[0] == good.job_id
    assert "job_quarantined" in out


def test_sigterm_mid_job_hands_it_back_without_charging(store: JobStore, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    jid = store.enqueue("r/term", now=time.time(), kind="test_block", args={"marker": str(marker)})
    proc = start_worker()
    wait_for("the job to start", marker.exists, proc)
    proc.send_signal(signal.SIGTERM)
    code, out = finish(proc)
    assert code == 0, out
    job = some(store.get(jid.job_id))
    assert (job.status, job.attempts, job.crash_count, job.errors) == (
        JobStatus.PENDING,
        0,
        0,
        [],
    )
    assert "worker_stopping" in out


def test_second_signal_exits_at_once(store: JobStore, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    store.enqueue("r/hang", now=time.time(), kind="test_hang", args={"marker": str(marker)})
    proc = start_worker()
    wait_for("the job to start", marker.exists, proc)
    proc.send_signal(signal.SIGTERM)
    # the job never reaches a checkpoint, so the worker keeps waiting for it ...
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=0.5)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    _out(proc)


def test_operator_abandon_stops_the_running_job(store: JobStore, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    jid = store.enqueue("r/ab", now=time.time(), kind="test_block", args={"marker": str(marker)})
    proc = start_worker("--idle-exit-s", "0")
    wait_for("the job to start", marker.exists, proc)
    asked = run_cli("jobs", "abandon", jid.job_id, "--reason", "wrong branch")
    assert asked.returncode == 0 and "abandon requested" in asked.stdout, asked.stderr
    code, out = finish(proc)
    assert code == 0, out
    job = some(store.get(jid.job_id))
    assert job.status is JobStatus.ABANDONED and job.errors[-1].message == "wrong branch"
    assert "job_abandon_seen" in out
