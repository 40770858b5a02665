"""The maintenance pass that cleans up after killed attempts: index runs left
``running`` by an attempt that ended are closed, and job workdirs of no running run are
deleted once older than the minimum age. Real graph server; time passed in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.runs import RunStore
from semgraph.maintenance.leftovers import close_orphan_runs, gc_workdirs
from semgraph.queue.store import JobStore

pytestmark = pytest.mark.integration

NOW = 1_900_000_000.0


def _settings(settings: Settings, tmp_path: Path, min_age_s: float = 600.0) -> Settings:
    return settings.model_copy(update={"state_dir": tmp_path, "staging_gc_min_age_s": min_age_s})


def _workdir(root: Path, name: str, mtime: float) -> Path:
    path = root / "jobs" / name
    (path / "workspace").mkdir(parents=True)
    (path / "parse.spill").write_bytes(b"x" * 100)
    os.utime(path, (mtime, mtime))
    return path


def test_orphan_runs_closed_live_and_jobless_runs_kept(graph: Graph, settings: Settings) -> None:
    store, runs = JobStore(graph, settings), RunStore(graph)
    live = store.enqueue("r/live", now=NOW, kind="k")
    ended = store.enqueue("r/ended", now=NOW, kind="k")
    claimed_live = store.claim("w", ["k"], now=NOW)
    claimed_ended = store.claim("w", ["k"], now=NOW)
    assert claimed_live is not None and claimed_ended is not None
    assert {claimed_live.id, claimed_ended.id} == {live.job_id, ended.job_id}
    ended_job = claimed_ended if claimed_ended.id == ended.job_id else claimed_live
    live_job = claimed_live if ended_job is claimed_ended else claimed_ended
    runs.start("run-live", "r/live", "c1", live_job.id, "w", NOW)
    runs.start("run-ended", "r/ended", "c1", ended_job.id, "w", NOW)
    runs.start("run-gone-job", "r/gone", "c1", "no-such-job", "w", NOW)
    runs.start("run-foreground", "r/fg", "c1", None, None, NOW)
    store.fail(ended_job.id, ended_job.claim_token or "", now=NOW, message="graph was down")

    closed = close_orphan_runs(settings, graph, now=NOW + 1)

    assert sorted(closed) == ["run-ended", "run-gone-job"]
    status = {r: (runs.get(r) or {}).get("status") for r in [*closed, "run-live", "run-foreground"]}
    assert status == {
        "run-ended": "abandoned",
        "run-gone-job": "abandoned",
        "run-live": "running",
        "run-foreground": "running",
    }
    assert close_orphan_runs(settings, graph, now=NOW + 2) == []  # idempotent


def test_workdirs_of_running_runs_and_young_ones_are_kept(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    s = _settings(settings, tmp_path)
    RunStore(graph).start("run-running", "r/a", "c1", None, None, NOW)
    old, running = (
        _workdir(tmp_path, "run-old", NOW - 3600),
        _workdir(tmp_path, "run-running", NOW - 3600),
    )
    young = _workdir(tmp_path, "run-young", NOW - 10)
    stray = tmp_path / "jobs" / "stray-file"
    stray.write_text("left by something")
    os.utime(stray, (NOW - 3600, NOW - 3600))

    removed = gc_workdirs(s, graph, now=NOW)

    assert sorted(removed) == ["run-old", "stray-file"]
    assert not old.exists() and not stray.exists()
    assert running.exists() and young.exists()
    assert gc_workdirs(_settings(settings, tmp_path, 0), graph, now=NOW) == ["run-young"]


def test_workdir_gc_without_a_jobs_folder_is_a_no_op(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    assert gc_workdirs(_settings(settings, tmp_path / "nothing"), graph, now=NOW) == []
