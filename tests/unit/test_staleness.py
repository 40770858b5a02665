"""Why a repository is stale, read from its newest jobs (semgraph.queue.staleness)."""

from __future__ import annotations

from semgraph.queue.models import Job, JobStatus
from semgraph.queue.staleness import ERROR_CHARS, reason_line, stale_reason


def job(status: JobStatus, *, kind: str = "reindex", attempts: int = 0, error: str = "") -> Job:
    return Job(
        id=f"{kind}-{status.value}",
        kind=kind,
        repo_key="r",
        status=status,
        commit="c" * 40,
        attempts=attempts,
        last_error=error or None,
    )


def test_nothing_explains_a_gap_when_the_newest_publishing_job_succeeded_or_there_is_none() -> None:
    assert stale_reason([]) is None
    assert stale_reason([job(JobStatus.SUCCEEDED)]) is None
    # a vectors job (progressive publish) or a removal publishes no commit: passed over
    assert stale_reason([job(JobStatus.FAILED, kind="vectors"), job(JobStatus.SUCCEEDED)]) is None
    assert reason_line(None) == ""


def test_each_state_of_the_newest_reindex_is_its_reason() -> None:
    cases = [
        (job(JobStatus.PENDING), "pending", None),
        (job(JobStatus.RUNNING, attempts=1), "running", None),
        (
            job(JobStatus.PENDING, attempts=1, error="JobError: parse"),
            "retrying",
            "JobError: parse",
        ),
        (job(JobStatus.FAILED, attempts=5, error="GraphTooLarge: x"), "failed", "GraphTooLarge: x"),
        (job(JobStatus.QUARANTINED, error="crashed twice"), "quarantined", "crashed twice"),
        (job(JobStatus.ABANDONED, error="abandoned: by ops"), "abandoned", "abandoned: by ops"),
    ]
    for newest, reason, error in cases:
        why = stale_reason([newest, job(JobStatus.SUCCEEDED)])
        assert why is not None and why["reason"] == reason, newest
        assert why.get("error") == error
        assert why["job"] == newest.id and why["status"] == newest.status.value
        assert reason_line(why) == (f"{reason}: {error}" if error else reason)


def test_a_source_that_cannot_be_fetched_is_unreachable_retrying_or_failed() -> None:
    error = "CheckoutError: repository file:///gone does not exist"
    for status in (JobStatus.PENDING, JobStatus.FAILED, JobStatus.QUARANTINED):
        why = stale_reason([job(status, attempts=2, error=error)])
        assert why is not None and why["reason"] == "unreachable source"
        assert reason_line(why) == f"unreachable source: {error}"
    # a running attempt may reach it this time
    why = stale_reason([job(JobStatus.RUNNING, attempts=2, error=error)])
    assert why is not None and why["reason"] == "running"


def test_a_hostile_error_is_cut_to_a_line() -> None:
    why = stale_reason([job(JobStatus.FAILED, error="JobError: " + "x" * 100_000)])
    assert why is not None and len(why["error"]) == ERROR_CHARS
