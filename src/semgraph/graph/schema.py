"""Every constraint and index semgraph needs, created idempotently by ``semgraph init``.

Keys are unique per repository: node keys embed the repository key.

Every property a statement looks a node up by (a property map in MATCH / MERGE, or an
equality / IN term of its WHERE) has an index here, and every label a statement scans has a
label index (``IndexSpec(label)``): on Memgraph neither a uniqueness constraint nor a label
comes with one (the dialect renders a unique key as constraint + index). Enforced by
tests/unit/test_schema_indexes.py, which reads every Cypher constant of the code base.
"""

from __future__ import annotations

from semgraph.dialect import IndexSpec

SCHEMA_VERSION = 1

SCHEMA: tuple[IndexSpec, ...] = (
    # queue
    IndexSpec("JobQueue", "id", unique=True),
    # set only while a job is pending: at most one pending job per repository
    IndexSpec("JobQueue", "pending_key", unique=True),
    IndexSpec("JobQueue", "status"),
    IndexSpec("JobQueue", "repo_key"),
    IndexSpec("JobDelivery", "key", unique=True),
    IndexSpec("JobQueue", "worker_id"),  # a worker's running jobs (purge of old workers)
    IndexSpec("Worker", "id", unique=True),
    IndexSpec("Worker", "name"),  # probe-worker: the worker named after this pod
    IndexSpec("Worker", "status"),
    # claims lock one node per repository so that at most one job per repository runs
    IndexSpec("RepoLock", "key", unique=True),
    IndexSpec("RepoRecord", "key", unique=True),
    IndexSpec("JobDelivery", "job_id"),
    IndexSpec("JobQueue", "claim_key"),  # set only while pending; sorts in claim order
    IndexSpec("IndexRun", "job_id"),
    # code graph
    IndexSpec("Repository", "key", unique=True),
    IndexSpec("IndexRun", "id", unique=True),
    IndexSpec("IndexRun", "repo"),
    IndexSpec("IndexRun", "status"),  # a dead job's running runs
    IndexSpec("File", "key", unique=True),
    IndexSpec("File", "repo"),
    IndexSpec("File", "path"),  # graph imports PATH without --repo
    IndexSpec("Symbol", "key", unique=True),
    IndexSpec("Symbol", "repo"),
    IndexSpec("Symbol", "name"),
    IndexSpec("Symbol", "qualified_name"),
    IndexSpec("ExternalModule", "key", unique=True),
    IndexSpec("ExternalModule", "repo"),
    IndexSpec("Package", "key", unique=True),  # PROVIDES / DEPENDS_ON
    IndexSpec("RelinkPending", "library", unique=True),  # a library's pending re-link
    # labels that statements scan (job and run lists, queue stats, repositories, old workers)
    IndexSpec("JobQueue"),
    IndexSpec("Worker"),
    IndexSpec("IndexRun"),
    IndexSpec("Repository"),
    IndexSpec("RepoRecord"),
    IndexSpec("RelinkPending"),  # a full count clears a dependent's lost links on each
    IndexSpec("Package"),  # maintenance: orphan packages
)
