"""Lanes and soft affinity: which pending jobs a worker may claim.

**Lanes.** A worker runs in one lane (``semgraph worker --lane``, ``SEMGRAPH_WORKER_LANE``):
``small`` claims only the jobs of small repositories, ``large`` only those of large ones,
``any`` (the default) both. A repository's size class is read from its ``:RepoRecord``
at every claim, so it follows the repository as it grows or shrinks:

* **small** when the record holds the files its last completed job found
  (``files`` <= ``lane_small_max_files``, default 5,000) *and* the duration of its last
  finished attempt (``last_job_s`` <= ``lane_small_max_job_s``, default 120 s);
* **large** otherwise: a repository never indexed (its first index), one without a record
  (enqueued without a source), one over either bound.

A completed job records ``files`` (when the job reported them) and ``last_job_s``; a failed
or timed-out attempt records ``last_job_s`` too, so a repository that suddenly takes an hour
leaves the small lane after one attempt instead of holding it for every retry. The claim
decides the class twice in its one transaction: when it picks candidates, and again in the
fenced write after the repository's lock (:data:`semgraph.queue.queries.CLAIM_ONE`), so a
small-lane worker never claims a large repository's job even when the class changes under it.
A claim of one job by id (``semgraph index`` runs its own job) ignores lanes.

**Soft affinity.** A completed job also records its worker's name (the host: caches, mirrors
and work trees live on the host's disk) as ``last_worker`` and ``last_finished_at``. A claim
skips a pending job when that host has an idle, live worker (heartbeat within its lease, no
running job, a lane that takes the job's class), the claimer is on another host, and the job
became due (created, backed off until, or its repository last finished) less than
``claim_affinity_s`` ago (default 30 s; 0 turns it off). Then anyone takes it. Nothing
coordinates this but the claim query itself; a wrong guess costs at most the window.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from semgraph.config import Settings
from semgraph.errors import ConfigError


class Lane(enum.StrEnum):
    SMALL = "small"
    LARGE = "large"
    ANY = "any"


def parse_lane(text: str) -> Lane:
    """``small`` / ``large`` / ``any`` (any case); anything else is a ConfigError."""
    try:
        return Lane(text.strip().lower())
    except ValueError:
        names = ", ".join(lane.value for lane in Lane)
        raise ConfigError(
            f"unknown lane {text[:50]!r}: one of {names} (--lane, SEMGRAPH_WORKER_LANE)"
        ) from None


@dataclass(frozen=True)
class ClaimScope:
    """What a worker may claim beyond its job kinds: its lane, and its name (the host) for
    the affinity rule."""

    lane: Lane = Lane.ANY
    worker_name: str = ""

    def params(self, settings: Settings) -> dict[str, Any]:
        """The claim statements' parameters for this scope."""
        return {
            "lane": self.lane.value,
            "name": self.worker_name,
            "small_max_files": settings.lane_small_max_files,
            "small_max_job_s": float(settings.lane_small_max_job_s),
            "affinity_s": float(settings.claim_affinity_s),
        }
