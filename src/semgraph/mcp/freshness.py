"""How fresh an answer is, per repository: the published run (graph), the newest commit the
queue knows of (webhooks and enqueues), how far behind that is (counted in the bare mirror
when it has both commits), the job that will catch up, and why it has not yet
(:func:`semgraph.queue.staleness.stale_reason`: pending, running, failed with its error,
quarantined, unreachable source)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from semgraph.config import Settings
from semgraph.graph.reader import GraphReader
from semgraph.graph.runs import decode_run
from semgraph.mcp import queries as mq
from semgraph.queue.models import Job, JobStatus
from semgraph.queue.staleness import RECENT_JOBS, stale_reason
from semgraph.queue.store import JobStore

GIT_TIMEOUT_S = 5.0
REPOSITORY_FIELDS = (
    "key",
    "url",
    "default_branch",
    "commit",
    "run_id",
    "fingerprint",
    "indexed_at",
)


@dataclass
class RepoState:
    """One repository as the stores know it now."""

    key: str
    record: dict[str, Any] | None  # the published :Repository, None before a first publish
    jobs: list[Job] = field(default_factory=list)
    run: dict[str, Any] | None = None  # the published run

    @property
    def run_id(self) -> str | None:
        return None if self.record is None else self.record.get("run_id")

    @property
    def indexed(self) -> bool:
        return self.record is not None and bool(self.record.get("commit"))

    def stats(self) -> dict[str, Any]:
        raw = (self.run or {}).get("stats")
        if isinstance(raw, str):
            try:
                decoded = json.loads(raw)
            except ValueError:
                return {}
            return decoded if isinstance(decoded, dict) else {}
        return raw if isinstance(raw, dict) else {}

    def parse_failed(self) -> int:
        parse = self.stats().get("parse") or {}
        return int((parse.get("files_by_status") or {}).get("parse_failed", 0) or 0)

    def skipped(self) -> dict[str, int]:
        parse = self.stats().get("parse") or {}
        return {str(k): int(v) for k, v in (parse.get("skipped_by_reason") or {}).items()}


def load_state(reader: GraphReader, store: JobStore, key: str) -> RepoState:
    """The repository's record, published run and newest jobs (one query)."""
    del store  # the queue's nodes are read in the same round trip
    row = reader.graph.query("mcp repository state", mq.REPO_STATE, repo=key, jobs=RECENT_JOBS)[0]
    record = row["repo"]
    if record is not None:
        record = {f: record.get(f) for f in REPOSITORY_FIELDS}
    jobs = [Job.from_props(props) for props in row["jobs"]]
    run = decode_run(row["run"]) if row["run"] is not None else None
    return RepoState(key, record, jobs, run)


def _job_brief(job: Job) -> dict[str, Any]:
    return {
        "id": job.id,
        "status": job.status.value,
        "commit": job.commit,
        "created_at": job.created_at,
        "attempts": job.attempts,
    }


#: (mirror, old, new) -> count: fixed once both commits are in the mirror
_BEHIND: dict[tuple[str, str, str], int] = {}
_BEHIND_MAX = 4096


def _commits_behind(settings: Settings, key: str, old: str, new: str) -> int | None:
    """``git rev-list --count old..new`` in the repository's bare mirror; None when the
    mirror is absent or lacks either commit (not fetched yet)."""
    mirror = settings.mirrors_path / f"{key}.git"
    known = _BEHIND.get((str(mirror), old, new))
    if known is not None:
        return known
    count = _count(mirror, old, new)
    if count is not None:
        if len(_BEHIND) >= _BEHIND_MAX:
            _BEHIND.clear()
        _BEHIND[(str(mirror), old, new)] = count
    return count


def _count(mirror: Path, old: str, new: str) -> int | None:
    if not (mirror / "HEAD").is_file():
        return None
    try:
        done = subprocess.run(
            ["git", "--git-dir", str(mirror), "rev-list", "--count", f"{old}..{new}", "--"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = done.stdout.strip()
    return int(text) if done.returncode == 0 and text.isdigit() else None


def freshness(settings: Settings, state: RepoState) -> dict[str, Any]:
    record = state.record or {}
    indexed = record.get("commit")
    announced = next((j for j in state.jobs if j.commit), None)  # newest first
    latest = announced.commit if announced is not None else indexed
    behind: int | None = None
    if indexed and latest:
        behind = 0 if latest == indexed else _commits_behind(settings, state.key, indexed, latest)
    pending = next((j for j in state.jobs if j.status is JobStatus.PENDING), None)
    running = next((j for j in state.jobs if j.status is JobStatus.RUNNING), None)
    return {
        "repo": state.key,
        "indexed_commit": indexed,
        "run_id": record.get("run_id"),
        "indexed_at": record.get("indexed_at"),
        "latest_known_commit": latest,
        "latest_known_from": None if announced is None else "queue",
        "commits_behind": behind,
        "stale": bool(latest and indexed and latest != indexed),
        "pending_job": None if pending is None else _job_brief(pending),
        "running_job": None if running is None else _job_brief(running),
        "stale_reason": stale_reason(state.jobs),
    }
