"""Ten consecutive restarts of the worker (SIGKILL and SIGTERM alternating), each while a
job is in flight, with pushes arriving throughout.

Invariants: nothing is stuck in ``running`` or ``pending`` at the end and nothing is lost:
every repository's last pushed commit was run by a job that ended ``succeeded``; no claim
ran twice (each ``job, attempt, worker`` line appears once in the tally); SIGKILLs are
charged as crashes, SIGTERMs hand the job back uncharged.
"""

from __future__ import annotations

import random
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from semgraph.queue.models import JobStatus
from semgraph.queue.store import JobStore
from tests.chaos.conftest import Chaos, wait_for

pytestmark = pytest.mark.chaos

RESTARTS = 10
REPOS = [f"flight/r{i}" for i in range(6)]
ENV = {"SEMGRAPH_JOB_MAX_CRASHES": "50", "SEMGRAPH_JOB_MAX_ATTEMPTS": "50"}


def test_ten_worker_restarts_with_jobs_in_flight(chaos: Chaos, tmp_path: Path) -> None:
    rng = random.Random(8)
    store = JobStore(chaos.graph, chaos.settings)
    tally, started = tmp_path / "tally", tmp_path / "started"
    started.mkdir()
    args = {"tally": str(tally), "started_dir": str(started), "work_s": 1.0}
    last_push: dict[str, str] = {}
    pushes = 0

    def push(repo: str) -> None:
        nonlocal pushes
        pushes += 1
        last_push[repo] = f"c{pushes:04d}"
        store.enqueue(repo, now=time.time(), kind="chaos_record", commit=last_push[repo], args=args)

    for repo in REPOS:
        push(repo)
    signals = []
    for i in range(RESTARTS):
        before = len(list(started.iterdir()))
        worker = chaos.start_worker(env=ENV, log=f"worker{i}")

        def in_flight(n: int = before) -> bool:
            return len(list(started.iterdir())) > n

        wait_for(f"a job in flight (restart {i})", in_flight, worker)
        push(rng.choice(REPOS))  # a push lands while the job runs
        sig = signal.SIGKILL if i % 2 == 0 else signal.SIGTERM
        worker.send_signal(sig)
        code = worker.wait(timeout=60)
        signals.append((sig, code))
    assert [code for _, code in signals] == [
        -9 if sig == signal.SIGKILL else 0 for sig, _ in signals
    ]

    code, out = chaos.finish(chaos.start_worker("--idle-exit-s", "1", env=ENV, log="drain"))
    assert code == 0, out
    jobs = store.list(limit=1000)
    statuses = Counter(j.status for j in jobs)
    assert set(statuses) == {JobStatus.SUCCEEDED}, statuses  # nothing running, pending, lost
    lines = tally.read_text().splitlines()
    assert len(lines) == len(set(lines)), "a claim ran twice"
    ran = {(line.split()[0], line.split()[2]) for line in lines}
    by_id = {j.id: j for j in jobs}
    for repo, last in last_push.items():
        assert any(commit_ == last and by_id[jid].repo_key == repo for jid, commit_ in ran), (
            f"the last push to {repo} ({last}) never ran"
        )
    assert sum(j.crash_count for j in jobs) == RESTARTS // 2  # one per SIGKILL
    assert len(jobs) <= pushes  # pushes coalesced, never duplicated
