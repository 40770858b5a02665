"""Every Cypher statement of the job queue, as named constants (procrastinate keeps its
queries in one file the same way).

Each is named after what runs it (:class:`semgraph.queue.store.JobStore`, the enqueue batch in
:mod:`semgraph.queue.enqueue`, the state changes in :mod:`semgraph.queue.transitions`, the
worker records in :mod:`semgraph.queue.workers`). Parameters are always bound; ``now`` is
always a parameter (no server clock). The locking rules the statements follow are in
:mod:`semgraph.queue.store`. The ``:IndexRun`` nodes a recovery closes belong to the runs
store (:func:`semgraph.graph.runs.abandon_job_runs`). The module is over 300 lines because
every statement of the queue lives here, as the conventions ask (the lanes added four).
"""

from __future__ import annotations

# -- shared -----------------------------------------------------------------------------------

LOCK_JOB = """
MATCH (j:JobQueue {id: $id})
SET j._lock = true
REMOVE j._lock
RETURN properties(j) AS job
"""

UPDATE_JOB = """
MATCH (j:JobQueue {id: $id})
SET j += $props
RETURN properties(j) AS job
"""

PENDING_FOR_REPO = """
MATCH (j:JobQueue {pending_key: $repo_key})
RETURN j.id AS id
"""

# -- enqueue (any number of requests in one transaction: group commit) ---------------------------

# what a batch decides on, in one round trip and without locks: the delivery keys already
# seen, and the pending job (if any) and the number of running jobs of each repository
ENQUEUE_READ = """
UNWIND $repo_keys AS repo_key
OPTIONAL MATCH (p:JobQueue {pending_key: repo_key})
OPTIONAL MATCH (r:JobQueue {repo_key: repo_key, status: 'running'})
WITH repo_key, p, count(r) AS running
OPTIONAL MATCH (rec:RepoRecord {key: repo_key})
WITH collect({repo_key: repo_key, pending: properties(p), running: running,
              record: properties(rec)}) AS repos
OPTIONAL MATCH (d:JobDelivery)
WHERE d.key IN $keys
RETURN repos, collect({key: d.key, job_id: d.job_id}) AS seen
"""

# every write of a batch in one round trip. A pending job is locked first and updated only
# if it is still the version ENQUEUE_READ saw (every change to a pending job moves its
# status, coalesced_count or updated_at, or deletes it); the caller compares ``updated`` and
# runs the whole batch again when a concurrent writer got there first. Rows come sorted by
# id, so concurrent batches lock in one order.
# A new job's repository gets its ``:RepoLock`` node here, so that a claim finds it and only
# writes it (CLAIM_ONE): on Memgraph two transactions that both CREATE the node both
# succeed until the later COMMIT fails the unique constraint (the batch is then run again).
ENQUEUE_WRITE = """
UNWIND $updates AS row
MATCH (j:JobQueue {id: row.id})
SET j._lock = true
REMOVE j._lock
WITH j, row
WHERE j.status = 'pending' AND j.coalesced_count = row.seen_count
  AND j.updated_at = row.seen_updated_at
SET j += row.props
WITH count(j) AS updated
FOREACH (props IN $creates | CREATE (j:JobQueue) SET j = props)
FOREACH (key IN $lock_keys | MERGE (:RepoLock {key: key}))
FOREACH (row IN $deliveries |
  CREATE (:JobDelivery {key: row.key, job_id: row.job_id, created_at: $now}))
FOREACH (row IN $records | MERGE (rec:RepoRecord {key: row.key}) SET rec += row)
RETURN updated
"""

# -- repository records (written by ENQUEUE_WRITE at a repository's first enqueue) ----------

RECORD = "MATCH (rec:RepoRecord {key: $key}) RETURN properties(rec) AS record"
RECORDS = """
MATCH (rec:RepoRecord)
WHERE rec.key > $after
RETURN properties(rec) AS record
ORDER BY rec.key
LIMIT $limit
"""

# -- merge a returning job with the repository's pending follow-up ------------------------------

ABSORB_MOVE_DELIVERIES = """
MATCH (d:JobDelivery {job_id: $from_id})
SET d.job_id = $to_id
"""

ABSORB_DELETE = """
MATCH (j:JobQueue {id: $id})
DETACH DELETE j
"""

# -- claim (lanes and affinity: semgraph.queue.lanes) ---------------------------------------

# a repository's size class from its record ``rec`` (null: none): small only when both
# figures are there and within their bounds; a first index is large
SIZE_CLASS = """CASE WHEN rec.files <= $small_max_files AND rec.last_job_s <= $small_max_job_s
     THEN 'small' ELSE 'large' END"""

# the lane a repository's jobs go to now (``semgraph repos show``): the claim's own rule
RECORD_SIZE = "OPTIONAL MATCH (rec:RepoRecord {key: $key}) RETURN " + SIZE_CLASS + " AS size_class"

# read first in a claim's transaction: the repositories with a running job, and the other
# hosts with an idle live worker of a lane that takes a small / large repository (affinity).
# Aggregated inside CLAIM_CANDIDATES, it made Neo4j sort every pending job (bench/NOTES.md).
CLAIM_CONTEXT = """
OPTIONAL MATCH (r:JobQueue {status: 'running'})
WITH collect(DISTINCT r.repo_key) AS busy, collect(DISTINCT r.worker_id) AS occupied
OPTIONAL MATCH (w:Worker {status: 'running'})
WHERE w.lease_expires_at >= $now AND w.name <> $name AND NOT w.id IN occupied
RETURN busy,
       collect(DISTINCT CASE WHEN coalesce(w.lane, 'any') <> 'large' THEN w.name END) AS warm_small,
       collect(DISTINCT CASE WHEN coalesce(w.lane, 'any') <> 'small' THEN w.name END) AS warm_large
"""

# claim_key (set only while pending) sorts like (priority DESC, run_after, created_at, id):
# the index hands candidates over in claim order. Skipped: a repository of another class than
# the lane; a job whose repository's last host is warm, due less than affinity_s ago.
CLAIM_CANDIDATES = (
    """
MATCH (j:JobQueue)
WHERE j.claim_key >= '' AND j.run_after <= $now AND j.kind IN $kinds
  AND NOT j.repo_key IN $busy
OPTIONAL MATCH (rec:RepoRecord {key: j.repo_key})
WITH j, rec, """
    + SIZE_CLASS
    + """ AS size
WHERE ($lane = 'any' OR size = $lane)
  AND NOT ($affinity_s > 0
           AND coalesce(rec.last_worker, '') IN
               CASE size WHEN 'small' THEN $warm_small ELSE $warm_large END
           AND ($now < j.created_at + $affinity_s OR $now < j.run_after + $affinity_s
                OR $now < coalesce(rec.last_finished_at, 0.0) + $affinity_s))
RETURN j.id AS id, j.repo_key AS repo_key
ORDER BY j.claim_key ASC
LIMIT $limit
"""
)

# the one job of that id, when claimable (``semgraph index``; no lanes, no affinity). Found
# by id alone: the filters follow a WITH and no index serves them, so no planner can prefer
# the claim_key range (every pending job) to the id lookup (docs/memgraph.md).
CLAIM_CANDIDATE_BY_ID = """
MATCH (j:JobQueue {id: $id})
WITH j
WHERE coalesce(j.claim_key, '') <> '' AND j.run_after <= $now AND j.kind IN $kinds
OPTIONAL MATCH (r:JobQueue {repo_key: j.repo_key, status: 'running'})
WITH j, count(r) AS running
WHERE running = 0
RETURN j.id AS id, j.repo_key AS repo_key
"""

# one statement: lock the repository, check (after the lock) that none of its jobs runs and
# that its size class is still one the lane takes, lock the job, re-check (after the lock)
# that it is still pending and due, take it.
# The enqueue that created the job created its :RepoLock, so the MERGE normally matches and
# writes an existing node: a lock on Neo4j, a write-write conflict on Memgraph (the later
# claim aborts and is retried). It creates one only for a job queued before enqueues did;
# two such first claims on Memgraph both create it and the later COMMIT fails the unique
# constraint: JobStore.claim runs again on that (retry_unique), and then finds the node.
# The size class is read after the lock and ``running = 0``: the record changes only in the
# transaction of a finishing job of the repository (RECORD_ATTEMPT), so the claim sees that
# job finished with its new class, or running.
CLAIM_ONE = (
    """
MERGE (l:RepoLock {key: $repo_key})
SET l.locked_at = $now
WITH l
OPTIONAL MATCH (r:JobQueue {repo_key: $repo_key, status: 'running'})
WITH count(r) AS running
WHERE running = 0
OPTIONAL MATCH (rec:RepoRecord {key: $repo_key})
WITH rec
WHERE $lane = 'any' OR """
    + SIZE_CLASS
    + """ = $lane
MATCH (j:JobQueue {id: $id})
SET j._lock = true
REMOVE j._lock
WITH j
WHERE j.status = 'pending' AND j.run_after <= $now
SET j += $props, j.attempts = j.attempts + 1
RETURN properties(j) AS job
"""
)

# a finished attempt, on its repository's record, in the transaction of its outcome: its
# duration, the files it found (when reported) and, once completed, its worker's name (the
# host whose caches are warm). A repository without a record (no source, removed) gets none.
RECORD_ATTEMPT = """
MATCH (rec:RepoRecord {key: $repo_key})
OPTIONAL MATCH (w:Worker {id: $worker_id})
WITH rec, CASE WHEN $completed THEN w.name END AS host
SET rec.last_job_s = $job_s, rec.last_finished_at = $now,
    rec.files = coalesce($files, rec.files),
    rec.last_worker = coalesce(host, rec.last_worker)
"""

# one statement: lock the job, check (after the lock) owner and status, mark it succeeded
# (its claim fields stay: the outcome's RECORD_ATTEMPT reads claimed_at and worker_id)
COMPLETE = """
MATCH (j:JobQueue {id: $id})
SET j._lock = true
REMOVE j._lock
WITH j
WHERE j.status = 'running' AND j.claim_token = $token
SET j += $props
RETURN properties(j) AS job
"""

# -- sweep --------------------------------------------------------------------------------------

RUNNING_WITH_WORKERS = """
MATCH (j:JobQueue {status: 'running'})
OPTIONAL MATCH (w:Worker {id: j.worker_id})
RETURN j.id AS id, j.claim_token AS claim_token, j.repo_key AS repo_key,
       j.lease_expires_at AS lease_expires_at, properties(w) AS worker
ORDER BY j.claimed_at
"""

# -- workers ------------------------------------------------------------------------------------

REGISTER_WORKER = """
MERGE (w:Worker {id: $id})
SET w += $props
"""

WORKER_HEARTBEAT = """
MATCH (w:Worker {id: $id})
SET w.heartbeat_at = $now, w.lease_expires_at = $lease_expires_at
RETURN w.status AS status
"""

STOP_WORKER = """
MATCH (w:Worker {id: $id})
SET w.status = 'stopped', w.stopped_at = $now, w.heartbeat_at = $now
"""

WORKERS_ALIVE = """
MATCH (w:Worker {status: 'running'})
WHERE w.lease_expires_at >= $now
RETURN count(w) AS n
"""

# the liveness probe of one worker by name (semgraph probe-worker)
WORKER_HEARTBEAT_AGE = """
MATCH (w:Worker {name: $name})
WHERE w.status = 'running'
RETURN max(w.heartbeat_at) AS heartbeat_at
"""

# -- reads --------------------------------------------------------------------------------------

GET = """
MATCH (j:JobQueue {id: $id})
RETURN properties(j) AS job
"""

# is there a due pending job of these kinds that a worker could claim now: ``$repo``'s (the
# asker's own), or, with ``$any_repo``, one whose repository runs nothing? A vectors job asks
# between windows and stops for it (semgraph.search.vectors): no push waits behind embedding
DUE_WORK = """
MATCH (j:JobQueue)
WHERE j.claim_key >= '' AND j.run_after <= $now AND j.kind IN $kinds
WITH j LIMIT $limit
OPTIONAL MATCH (r:JobQueue {repo_key: j.repo_key, status: 'running'})
WITH j, count(r) AS running
WHERE j.repo_key = $repo OR ($any_repo AND running = 0)
RETURN j.id AS id
LIMIT 1
"""

LIST = """
MATCH (j:JobQueue)
WHERE ($status IS NULL OR j.status = $status) AND ($repo IS NULL OR j.repo_key = $repo)
RETURN properties(j) AS job
ORDER BY j.created_at DESC, j.id DESC
LIMIT $limit
"""

STATS_COUNTS = """
MATCH (j:JobQueue)
RETURN j.status AS status, count(j) AS n
"""

STATS_OLDEST_PENDING = """
MATCH (j:JobQueue {status: 'pending'})
RETURN min(j.created_at) AS oldest, min(j.run_after) AS next_run
"""

# -- retention ----------------------------------------------------------------------------------

PURGE = """
MATCH (j:JobQueue)
WHERE j.status IN $terminal AND j.finished_at < $cutoff
WITH j LIMIT $batch
OPTIONAL MATCH (d:JobDelivery {job_id: j.id})
WITH j, collect(d) AS deliveries
FOREACH (d IN deliveries | DELETE d)
DETACH DELETE j
RETURN count(*) AS n
"""

PURGE_WORKERS = """
MATCH (w:Worker)
WHERE w.heartbeat_at < $cutoff
OPTIONAL MATCH (j:JobQueue {status: 'running', worker_id: w.id})
WITH w, count(j) AS running
WHERE running = 0
WITH w LIMIT $batch
DETACH DELETE w
RETURN count(*) AS n
"""
