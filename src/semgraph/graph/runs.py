"""Index runs: one ``(:IndexRun)-[:OF]->(:Repository)`` node per reindex attempt.

Bolt stores only primitives and lists of primitives, so nested dicts given to
:meth:`RunStore.update` / :meth:`RunStore.finish` (phase timings, counts by language...) are
stored as JSON strings under ``<field>_json`` and decoded back by :meth:`RunStore.get`. The
job is linked by its ``job_id`` property.
"""

from __future__ import annotations

import enum
import json
import re
import time
from typing import Any

import neo4j

from semgraph.db import Graph
from semgraph.errors import GraphInputError, RunStateError
from semgraph.graph import queries as q


class RunStatus(enum.StrEnum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    DIVERGED = "diverged"  # graph committed, alias flip did not (repairable)
    ABANDONED = "abandoned"  # its worker died; closed by a sweep
    NOOP = "noop"  # unchanged commit + fingerprint


#: statuses a run may be finished from (a diverged run is finished again once repaired)
FINISHABLE = (RunStatus.RUNNING.value, RunStatus.DIVERGED.value)
RESERVED_FIELDS = frozenset(
    {"id", "repo", "commit", "job_id", "worker_id", "status", "started_at", "finished_at"}
)
_FIELD = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
JSON_SUFFIX = "_json"
MAX_STRING_CHARS = 20_000


def encode_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """Run fields as Bolt-storable properties (nested dicts -> ``<name>_json`` strings)."""
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if not _FIELD.match(name) or name in RESERVED_FIELDS or name.endswith(JSON_SUFFIX):
            raise GraphInputError(f"invalid run field name {name[:80]!r}")
        if isinstance(value, dict):
            out[name + JSON_SUFFIX] = json.dumps(value, sort_keys=True, default=str)
        elif value is None or isinstance(value, bool | int | float):
            out[name] = value
        elif isinstance(value, str):
            out[name] = value[:MAX_STRING_CHARS]
        elif isinstance(value, list | tuple) and all(
            isinstance(v, str | int | float | bool) for v in value
        ):
            out[name] = list(value)
        else:
            raise GraphInputError(f"run field {name!r}: unsupported value {type(value).__name__}")
    return out


def decode_run(props: dict[str, Any]) -> dict[str, Any]:
    run: dict[str, Any] = {}
    for name, value in props.items():
        if name.endswith(JSON_SUFFIX) and isinstance(value, str):
            run[name[: -len(JSON_SUFFIX)]] = json.loads(value)
        else:
            run[name] = value
    return run


class RunStore:
    """Create, update, finish and read ``:IndexRun`` nodes."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def start(
        self,
        run_id: str,
        repo: str,
        commit: str,
        job_id: str | None,
        worker_id: str | None,
        now: float,
    ) -> None:
        if not run_id or not repo:
            raise GraphInputError("a run needs an id and a repository")
        self.graph.query(
            "start index run",
            q.RUN_START,
            id=run_id,
            repo=repo,
            commit=commit,
            job_id=job_id,
            worker_id=worker_id,
            now=now,
        )

    def update(self, run_id: str, **fields: Any) -> None:
        rows = self.graph.query(
            "update index run", q.RUN_UPDATE, id=run_id, props=encode_fields(fields)
        )
        if not rows:
            raise RunStateError(f"no index run {run_id!r}")

    def finish(self, run_id: str, status: str, now: float, **fields: Any) -> dict[str, Any]:
        try:
            final = RunStatus(status)
        except ValueError as exc:
            raise GraphInputError(f"unknown run status {status!r}") from exc
        if final is RunStatus.RUNNING:
            raise GraphInputError("a run cannot finish as 'running'")
        rows = self.graph.query(
            "finish index run",
            q.RUN_FINISH,
            id=run_id,
            status=final.value,
            now=now,
            props=encode_fields(fields),
            from_statuses=list(FINISHABLE),
        )
        if not rows:
            raise RunStateError(f"no index run {run_id!r}")
        if rows[0]["before"] not in FINISHABLE:
            raise RunStateError(f"index run {run_id!r} is already {rows[0]['before']}")
        run = self.get(run_id)
        assert run is not None
        return run

    def note_repair(self, run_id: str, what: str, now: float) -> bool:
        """Append what a repair did to the run's ``repairs`` history; False when there is
        no such run."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
        line = f"{stamp} {what}"[:MAX_STRING_CHARS]
        rows = self.graph.query("note index run repair", q.RUN_NOTE_REPAIR, id=run_id, line=line)
        return bool(rows and rows[0]["noted"])

    def get(self, run_id: str) -> dict[str, Any] | None:
        rows = self.graph.query("get index run", q.RUN_GET, id=run_id)
        return decode_run(rows[0]["run"]) if rows else None

    def list(
        self, repo: str | None = None, limit: int = 50, status: str | None = None
    ) -> list[dict[str, Any]]:
        if not 1 <= limit <= 10_000:
            raise GraphInputError("limit must be between 1 and 10000")
        rows = self.graph.query(
            "list index runs", q.RUN_LIST, repo=repo, status=status, limit=limit
        )
        return [decode_run(r["run"]) for r in rows]


# -- the runs of a job whose worker died (inside the queue's recovery transaction) -----------


def abandon_job_runs(tx: neo4j.Transaction, job_id: str, *, now: float, reason: str) -> int:
    """Mark the job's running ``:IndexRun`` nodes ``abandoned``, in the caller's transaction
    (the queue's recovery: the job and its runs change together or not at all). Returns how
    many runs it closed."""
    record = tx.run(q.ABANDON_JOB_RUNS, job_id=job_id, now=now, reason=reason).single()
    return int(record["n"]) if record else 0
