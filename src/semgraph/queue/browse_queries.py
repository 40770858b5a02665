"""The Cypher of the console's queue pages (:mod:`semgraph.queue.browse`), as named constants.

Every filter is a bound parameter that is NULL when unused; ``$repos`` is a repository
allowlist (NULL: every repository). The job list and its count share one filter text so the
count always says how many jobs the list pages through.
"""

from __future__ import annotations

_FILTER = """
MATCH (j:JobQueue)
WHERE ($status IS NULL OR j.status = $status)
  AND ($repo IS NULL OR j.repo_key = $repo)
  AND ($kind IS NULL OR j.kind = $kind)
  AND ($repos IS NULL OR j.repo_key IN $repos)
  AND ($error IS NULL OR toLower(coalesce(j.last_error, '')) CONTAINS $error)
"""

BROWSE_PAGE = (
    _FILTER
    + """
RETURN properties(j) AS job
ORDER BY j.created_at DESC, j.id DESC
SKIP $skip LIMIT $limit
"""
)

BROWSE_COUNT = _FILTER + "RETURN count(j) AS n\n"

BROWSE_IDS = (
    _FILTER
    + """
RETURN j.id AS id
ORDER BY j.created_at DESC, j.id DESC
LIMIT $limit
"""
)

BROWSE_STATE_COUNTS = """
MATCH (j:JobQueue)
WHERE $repos IS NULL OR j.repo_key IN $repos
RETURN j.status AS status, count(j) AS n
"""

BROWSE_KINDS = """
MATCH (j:JobQueue)
RETURN DISTINCT j.kind AS kind
ORDER BY kind
LIMIT 100
"""

BROWSE_WORKERS = """
MATCH (w:Worker)
OPTIONAL MATCH (j:JobQueue {worker_id: w.id})
WHERE j.status = 'running'
RETURN properties(w) AS worker, collect(properties(j)) AS jobs
ORDER BY worker.status, worker.heartbeat_at DESC
LIMIT $limit
"""

# one row of four aligned lists (a missing time is -1.0: collect() drops nulls); one record
# instead of one per job keeps the driver's per-record cost out of a 10,000-job chart
BROWSE_TIMELINE = """
MATCH (j:JobQueue)
WHERE j.created_at >= $since AND ($repos IS NULL OR j.repo_key IN $repos)
WITH j ORDER BY j.created_at DESC LIMIT $limit
RETURN collect(j.created_at) AS created, collect(coalesce(j.claimed_at, -1.0)) AS claimed,
       collect(coalesce(j.finished_at, -1.0)) AS finished, collect(j.status) AS status
"""
