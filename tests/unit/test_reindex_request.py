"""The reindex job's arguments, built and parsed in one place, and the fingerprint's
explicit list of settings."""

from __future__ import annotations

from typing import Any

import pytest

from semgraph.config import Settings, load_settings
from semgraph.errors import JobError
from semgraph.indexer.request import (
    FINGERPRINT_SETTINGS,
    ReindexArgs,
    ReindexRequest,
    RunOutcome,
    fingerprint,
)


def test_args_round_trip_through_the_stored_json() -> None:
    for args in (
        ReindexArgs("https://git.example/a.git"),
        ReindexArgs("/srv/repo", ref="main", force=True),
        ReindexArgs("https://git.example/a.git", ref="refs/heads/x", commit="a" * 40),
    ):
        assert ReindexArgs.from_json("j", args.to_json()) == args


@pytest.mark.parametrize(
    "stored",
    [None, {}, {"source": ""}, {"source": "   "}, {"source": 7}, {"ref": "main"}],
)
def test_args_without_a_source_cannot_run(stored: dict[str, Any] | None) -> None:
    with pytest.raises(JobError, match="has no 'source' argument"):
        ReindexArgs.from_json("job-1", stored)


@pytest.mark.parametrize("field", ["ref", "commit"])
def test_args_of_the_wrong_type_are_refused(field: str) -> None:
    with pytest.raises(JobError, match=field):
        ReindexArgs.from_json("job-1", {"source": "/r", field: ["x"]})


def test_a_pushed_commit_wins_over_the_branch_and_the_job_node_fills_in() -> None:
    pushed = ReindexArgs("/r", ref="main", commit="b" * 40)
    req = ReindexRequest.for_job(pushed, job_id="j", worker_id="w")
    assert (req.ref, req.commit, req.job_id, req.worker_id) == ("b" * 40, "b" * 40, "j", "w")
    bare = ReindexArgs("/r")
    req = ReindexRequest.for_job(bare, job_id="j", worker_id="w", job_ref="dev", job_commit=None)
    assert (req.ref, req.commit, req.force) == ("dev", None, False)


def test_every_fingerprint_setting_exists_and_changes_the_fingerprint() -> None:
    base = load_settings()
    assert set(FINGERPRINT_SETTINGS) <= set(Settings.model_fields)
    for name in FINGERPRINT_SETTINGS:
        value = getattr(base, name)
        other = "calls" if isinstance(value, str) else value + 1  # search_chunk_context
        changed = base.model_copy(update={name: other})
        assert fingerprint(changed, "m") != fingerprint(base, "m"), name
    assert fingerprint(base, "other-model") != fingerprint(base, "m")


def test_settings_outside_the_list_leave_the_fingerprint_alone() -> None:
    base = load_settings()
    other = base.model_copy(update={"pool_size": 7, "embedding_batch_size": 3, "log_json": True})
    assert fingerprint(other, "m") == fingerprint(base, "m")


def test_run_outcomes_are_the_run_record_statuses() -> None:
    assert {o.value for o in RunOutcome} == {"noop", "succeeded", "diverged"}
    assert RunOutcome.SUCCEEDED == "succeeded"  # type: ignore[comparison-overlap]  # a str enum
