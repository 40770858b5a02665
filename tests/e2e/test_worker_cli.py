"""The operator CLI as a user runs it: enqueue, jobs list|show|requeue|abandon|purge|stats,
one-line errors with a non-zero exit, stable --json, flags from environment variables."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from semgraph.config import load_settings
from semgraph.db import Graph
from semgraph.indexer.sources import normalize_source, repo_key_for
from semgraph.queue.store import JobStore
from tests.cli import run_cli
from tests.optional import some
from tests.repos import make_repo

pytestmark = pytest.mark.e2e

JOB_KEYS = {
    "id",
    "kind",
    "repo_key",
    "status",
    "args",
    "ref",
    "commit",
    "priority",
    "attempts",
    "crash_count",
    "max_attempts",
    "max_crashes",
    "run_after",
    "created_at",
    "updated_at",
    "claimed_at",
    "finished_at",
    "claim_token",
    "worker_id",
    "lease_expires_at",
    "last_error",
    "errors",
    "coalesced_count",
    "cancel_reason",
    "history",
    "pushed_at",
}


cli = run_cli


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_enqueue_list_show_stats_json(graph: Graph, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "a", {"a.py": "def a():\n    return 1\n"})
    key = repo_key_for(str(repo))
    first = cli("enqueue", str(repo), "--ref", "main", "--commit", "abc", "--json")
    assert first.returncode == 0, first.stderr
    created = json.loads(first.stdout)
    assert created["outcome"] == "created"
    # the key is known now: queued again by key, from the source it was first queued with
    again = cli("enqueue", key, "--json", env={"SEMGRAPH_ENQUEUE_PRIORITY": "5"})
    assert json.loads(again.stdout) == {"job_id": created["job_id"], "outcome": "coalesced"}
    listed = cli("jobs", "list", "--json", "--status", "pending")
    jobs = json.loads(listed.stdout)
    assert [j["id"] for j in jobs] == [created["job_id"]]
    assert set(jobs[0]) == JOB_KEYS
    assert (jobs[0]["priority"], jobs[0]["coalesced_count"], jobs[0]["ref"]) == (5, 1, "main")
    shown = json.loads(cli("jobs", "show", created["job_id"], "--json").stdout)
    assert shown == jobs[0]
    stats = json.loads(cli("jobs", "stats", "--json").stdout)
    assert stats["counts"]["pending"] == 1 and set(stats["counts"]) >= {"running", "failed"}
    # queued by key: from the recorded (canonical) source of the first enqueue
    assert jobs[0]["args"]["source"] == normalize_source(str(repo))
    assert jobs[0]["commit"] == "abc"  # the enqueue by key named no commit: the pushed one stays
    human = cli("jobs", "list", "--repo", key)
    assert created["job_id"] in human.stdout and "pending" in human.stdout


def test_enqueue_of_an_unknown_key_is_refused_and_queues_nothing(graph: Graph) -> None:
    proc = cli("enqueue", "org/never-seen")
    assert proc.returncode == 2
    assert "no repository 'org/never-seen' is known" in proc.stderr, proc.stderr
    assert cli("jobs", "list", "--json").stdout.strip() == "[]"


def test_show_prints_error_history_and_requeue_resets(graph: Graph) -> None:
    store = JobStore(graph, load_settings(job_max_attempts=1))
    jid = store.enqueue("org/b", now=time.time(), note="check --repair: queued a reindex").job_id
    job = some(store.claim("w", ["reindex"], now=time.time()))
    store.fail(jid, some(job.claim_token), now=time.time(), message="disk full")
    shown = cli("jobs", "show", jid)
    assert shown.returncode == 0 and "failed" in shown.stdout
    assert "attempt 1 error: disk full" in shown.stdout
    assert "history (1):" in shown.stdout and "check --repair: queued a reindex" in shown.stdout
    requeued = cli("jobs", "requeue", jid)
    assert requeued.returncode == 0, requeued.stderr
    after = some(store.get(jid))
    assert after.status.value == "pending" and after.attempts == 0 < after.max_attempts
    assert "can be requeued" in one_line_error(cli("jobs", "requeue", jid))


def test_abandon_purge_and_bad_input(graph: Graph, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "c", {"c.py": "x = 1\n"})
    jid = json.loads(cli("enqueue", str(repo), "--json").stdout)["job_id"]
    assert "reason" in cli("jobs", "abandon", jid).stderr.lower()  # --reason is required
    done = cli("jobs", "abandon", jid, "--reason", "duplicate")
    assert done.returncode == 0 and f"abandoned {jid}" in done.stdout
    assert "only pending or running" in one_line_error(
        cli("jobs", "abandon", jid, "--reason", "again")
    )
    assert "no job with id" in one_line_error(cli("jobs", "show", "does-not-exist"))
    assert "no job with id" in one_line_error(cli("jobs", "requeue", "does-not-exist"))
    assert cli("jobs", "purge", "--older-than", "1h").stdout.strip() == "purged 0 jobs"
    assert cli("jobs", "purge", "--older-than", "0s").stdout.strip() == "purged 1 jobs"
    assert "invalid duration" in one_line_error(cli("jobs", "purge", "--older-than", "soon"))
    assert cli("jobs", "list", "--status", "bogus").returncode == 2
    assert cli("enqueue", str(repo), "--priority", "high").returncode == 2
    assert cli("enqueue", "x" * 600).returncode == 2
    assert cli("enqueue", "a\x01b").returncode == 2
    assert cli("jobs", "list", "--json").stdout.strip() == "[]"


def test_worker_flags_read_from_environment(graph: Graph) -> None:
    helptext = cli("worker", "--help").stdout
    for var in ("SEMGRAPH_WORKER_ONCE", "SEMGRAPH_WORKER_MAX_JOBS", "SEMGRAPH_WORKER_IDLE_EXIT_S"):
        assert var in helptext
    proc = cli("worker", env={"SEMGRAPH_WORKER_IDLE_EXIT_S": "0"})
    assert proc.returncode == 0, proc.stderr
    assert "worker_stopped" in proc.stderr
    bad = cli("worker", "--once", env={"SEMGRAPH_HEARTBEAT_S": "100", "SEMGRAPH_LEASE_S": "10"})
    assert "HEARTBEAT" in one_line_error(bad)
