"""Why a repository is not at its newest commit, in a word an operator acts on.

Read from the repository's newest jobs (newest first, as :mod:`semgraph.mcp.freshness` loads
them): the newest job that publishes a commit (a ``reindex``; ``vectors`` and ``remove`` jobs
change no commit) says where the repository stands:

* ``pending``: queued, not yet claimed;
* ``retrying``: an attempt failed and it waits for its next one (the error is given);
* ``running``: a worker has it;
* ``failed`` / ``quarantined`` / ``abandoned``: it ended without publishing, with its error;
* ``unreachable source``: its last attempt could not fetch the repository (a
  ``CheckoutError``: a path or remote that does not exist, a host that does not answer),
  pending for a retry or failed.

None when that job succeeded, or there is none: nothing explains a gap, and none is known.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from semgraph.queue.models import Job, JobStatus

#: jobs read per repository, newest first (the newest commit announced, the reason)
RECENT_JOBS = 20
#: kinds whose job publishes a commit (the others finish or remove what one published)
PUBLISHING_KINDS = frozenset({"reindex"})
#: the error class of a source that could not be fetched (semgraph.errors.CheckoutError)
UNREACHABLE_PREFIX = "CheckoutError:"
ERROR_CHARS = 300  # an error is cut here: a reason is a line, the job has the whole text

_ENDED = {
    JobStatus.FAILED: "failed",
    JobStatus.QUARANTINED: "quarantined",
    JobStatus.ABANDONED: "abandoned",
}


def stale_reason(jobs: Iterable[Job]) -> dict[str, Any] | None:
    """Why the repository of ``jobs`` (newest first) is not at its newest commit, or None."""
    job = next((j for j in jobs if j.kind in PUBLISHING_KINDS), None)
    if job is None or job.status is JobStatus.SUCCEEDED:
        return None
    error = (job.last_error or "").strip() or None
    if job.status is JobStatus.RUNNING:
        reason = "running"
    elif job.status is JobStatus.PENDING:
        reason = "retrying" if job.attempts and error else "pending"
    else:
        reason = _ENDED[job.status]
    if error and error.startswith(UNREACHABLE_PREFIX) and job.status is not JobStatus.RUNNING:
        reason = "unreachable source"
    why: dict[str, Any] = {
        "reason": reason,
        "job": job.id,
        "status": job.status.value,
        "commit": job.commit,
        "attempts": job.attempts,
    }
    if error and reason != "pending":
        why["error"] = error[:ERROR_CHARS]
    return why


def reason_line(why: dict[str, Any] | None) -> str:
    """The one line a listing prints: ``failed: CheckoutError: ...`` ("" for None)."""
    if not why:
        return ""
    error = why.get("error")
    return f"{why['reason']}: {error}" if error else str(why["reason"])
