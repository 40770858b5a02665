"""Every constraint and index semgraph needs, created idempotently by ``semgraph init``.

Keys are unique per repository: node keys embed the repository key.
"""

from __future__ import annotations

from semgraph.graph.dialect import IndexSpec

SCHEMA_VERSION = 1

SCHEMA: tuple[IndexSpec, ...] = (
    # queue
    IndexSpec("JobQueue", "id", unique=True),
    # set only while a job is pending: at most one pending job per repository
    IndexSpec("JobQueue", "pending_key", unique=True),
    IndexSpec("JobQueue", "status"),
    IndexSpec("JobQueue", "repo_key"),
    IndexSpec("JobDelivery", "key", unique=True),
    IndexSpec("Worker", "id", unique=True),
    # claims lock one node per repository so that at most one job per repository runs
    IndexSpec("RepoLock", "key", unique=True),
    IndexSpec("JobDelivery", "job_id"),
    IndexSpec("JobQueue", "claim_key"),  # set only while pending; sorts in claim order
    IndexSpec("IndexRun", "job_id"),
    # code graph
    IndexSpec("Repository", "key", unique=True),
    IndexSpec("IndexRun", "id", unique=True),
    IndexSpec("IndexRun", "repo"),
    IndexSpec("File", "key", unique=True),
    IndexSpec("File", "repo"),
    IndexSpec("File", "path"),  # graph imports PATH without --repo
    IndexSpec("Symbol", "key", unique=True),
    IndexSpec("Symbol", "repo"),
    IndexSpec("Symbol", "name"),
    IndexSpec("Symbol", "qualified_name"),
    IndexSpec("ExternalModule", "key", unique=True),
    IndexSpec("ExternalModule", "repo"),
)
