"""Every Cypher statement that reads the code graph (reader, parity) or records its index runs,
as named constants; the publish's statements are in :mod:`semgraph.graph.publish_queries`.

Each constant is named after the method that runs it. Parameters are always bound. Nothing
here is Neo4j-only: no APOC, no procedures, no server clocks (``now`` is always a parameter),
so the same text runs on Memgraph.
"""

from __future__ import annotations

# -- reader: GraphReader ------------------------------------------------------------------

_SYMBOL_COLUMNS = """
s.key AS key, s.repo AS repo, s.name AS name, s.qualified_name AS qualified_name,
s.kind AS kind, s.path AS path, s.start_line AS start_line, s.end_line AS end_line,
s.signature AS signature
"""

# `name` is the last segment; `qualified` the full text when the user gave a dotted name
# (matched exactly or as a trailing part: "Order.total" finds "shop.models.Order.total").
DEFINITIONS = f"""
MATCH (s:Symbol {{name: $name}})
WHERE ($repo IS NULL OR s.repo = $repo)
  AND ($qualified IS NULL OR s.qualified_name = $qualified
       OR s.qualified_name ENDS WITH $suffix)
RETURN {_SYMBOL_COLUMNS}
ORDER BY s.repo, s.qualified_name, s.path, s.start_line
LIMIT $limit
"""

CALLERS_STEP = """
UNWIND $keys AS k
MATCH (c:Symbol)-[e:CALLS]->(t:Symbol {key: k})
RETURN t.key AS target, c.key AS key, c.repo AS repo, c.name AS name,
       c.qualified_name AS qualified_name, c.kind AS kind, c.path AS path,
       c.start_line AS start_line, e.line AS line, e.tier AS tier,
       coalesce(e.candidates, 1) AS candidates
ORDER BY target, qualified_name, line
LIMIT $limit
"""

CALLEES_STEP = """
UNWIND $keys AS k
MATCH (t:Symbol {key: k})-[e:CALLS]->(c:Symbol)
RETURN t.key AS target, c.key AS key, c.repo AS repo, c.name AS name,
       c.qualified_name AS qualified_name, c.kind AS kind, c.path AS path,
       c.start_line AS start_line, e.line AS line, e.tier AS tier,
       coalesce(e.candidates, 1) AS candidates
ORDER BY target, line, qualified_name
LIMIT $limit
"""

# across repositories: the cross-repository links too (their tier: cross_repo)
CALLERS_STEP_ACROSS = CALLERS_STEP.replace("[e:CALLS]", "[e:CALLS|XCALLS]")
CALLEES_STEP_ACROSS = CALLEES_STEP.replace("[e:CALLS]", "[e:CALLS|XCALLS]")

SCOPE_STATS = """
UNWIND $keys AS k
MATCH (s:Symbol {key: k})
RETURN sum(coalesce(s.calls_unresolved, 0)) AS unresolved,
       sum(coalesce(s.calls_external, 0)) AS external,
       sum(coalesce(s.calls_ambiguous, 0)) AS ambiguous,
       sum(coalesce(s.possible_callers, 0)) AS possible_callers
"""

REPOSITORY_STATS = """
UNWIND $repos AS key
MATCH (r:Repository {key: key})
RETURN r.key AS key, coalesce(r.calls_unresolved, 0) AS unresolved,
       coalesce(r.calls_ambiguous, 0) AS ambiguous, coalesce(r.calls_total, 0) AS total
"""

FILES_BY_PATH = """
MATCH (f:File {path: $path})
WHERE $repo IS NULL OR f.repo = $repo
RETURN f.key AS key, f.repo AS repo, f.path AS path, f.language AS language,
       coalesce(f.imports_unresolved, 0) AS unresolved
ORDER BY f.repo
LIMIT $limit
"""

IMPORTS_OF = """
MATCH (f:File {key: $key})-[e:IMPORTS]->(d)
RETURN CASE WHEN d:File THEN 'file' ELSE 'external' END AS kind,
       coalesce(d.path, d.name) AS target, e.line AS line
ORDER BY line, target
LIMIT $limit
"""

IMPORTED_BY = """
MATCH (d:File)-[e:IMPORTS]->(f:File {key: $key})
RETURN d.path AS path, e.line AS line
ORDER BY path, line
LIMIT $limit
"""

_REPOSITORY_FIELDS = """
RETURN r.key AS key, r.url AS url, r.default_branch AS default_branch, r.commit AS commit,
       r.run_id AS run_id, r.fingerprint AS fingerprint, r.indexed_at AS indexed_at,
       r.state AS state
"""
REPOSITORIES = "MATCH (r:Repository)" + _REPOSITORY_FIELDS + "ORDER BY r.key\n"
REPOSITORY = "MATCH (r:Repository {key: $repo})" + _REPOSITORY_FIELDS

# the live files of a repository and their blobs (incremental staging compares them)
FILE_BLOBS = """
MATCH (f:File {repo: $repo})
RETURN f.path AS path, f.blob_sha AS blob_sha
"""

# -- parity: semgraph.graph.parity (read-only, streamed) -----------------------------------

_PARITY_NODE = """
MATCH (n:{label} {{repo: $repo}})
RETURN n.key AS key, labels(n) AS labels, properties(n) AS props
"""
PARITY_NODES = "UNION ALL".join(
    _PARITY_NODE.format(label=label) for label in ("File", "Symbol", "ExternalModule")
)
# the package edges and the cross-repository links are no rows of the model:
# they are compared by the link's own parity test
PARITY_EDGES = """
MATCH (a:Repository {key: $repo})-[e:CONTAINS]->(b)
RETURN a.key AS src, type(e) AS type, b.key AS dst, properties(e) AS props
UNION ALL
MATCH (a:File {repo: $repo})-[e]->(b)
RETURN a.key AS src, type(e) AS type, b.key AS dst, properties(e) AS props
UNION ALL
MATCH (a:Symbol {repo: $repo})-[e]->(b)
WHERE type(e) <> 'XCALLS'
RETURN a.key AS src, type(e) AS type, b.key AS dst, properties(e) AS props
"""

# -- runs: RunStore -------------------------------------------------------------------------

RUN_START = """
MERGE (r:Repository {key: $repo})
CREATE (x:IndexRun {id: $id, repo: $repo, commit: $commit, job_id: $job_id,
                    worker_id: $worker_id, status: 'running', started_at: $now})
CREATE (x)-[:OF]->(r)
RETURN x.id AS id
"""

RUN_UPDATE = """
MATCH (x:IndexRun {id: $id})
SET x += $props
RETURN x.id AS id
"""

RUN_FINISH = """
MATCH (x:IndexRun {id: $id})
WITH x, x.status AS before
FOREACH (_ IN CASE WHEN before IN $from_statuses THEN [1] ELSE [] END |
  SET x += $props, x.status = $status, x.finished_at = $now,
      x.duration_s = $now - x.started_at)
RETURN before, x.status AS status
"""

# what a repair did to a run, newest last (``repairs``: one line each, with its time)
RUN_NOTE_REPAIR = """
MATCH (x:IndexRun {id: $id})
SET x.repairs = coalesce(x.repairs, []) + [$line]
RETURN count(x) AS noted
"""

RUN_GET = """
MATCH (x:IndexRun {id: $id})
RETURN properties(x) AS run
"""

RUN_LIST = """
MATCH (x:IndexRun)
WHERE ($repo IS NULL OR x.repo = $repo) AND ($status IS NULL OR x.status = $status)
RETURN properties(x) AS run
ORDER BY x.started_at DESC, x.id
LIMIT $limit
"""

# -- the console's file view: semgraph.graph.fileview ---------------------------------------

# the symbols a file defines that overlap lines $start..$end (its outline), in line order
FILE_OUTLINE = """
MATCH (f:File {key: $key})-[:DEFINES]->(s:Symbol)
WHERE s.end_line >= $start AND s.start_line <= $end
RETURN s.key AS key, s.name AS name, s.qualified_name AS qualified_name, s.kind AS kind,
       s.start_line AS start_line, s.end_line AS end_line
ORDER BY start_line, qualified_name
LIMIT $limit
"""

# the resolved call sites between two lines of a file, each with its target and tier (an
# ambiguous call has one edge per candidate)
FILE_CALLS = """
MATCH (f:File {key: $key})-[:DEFINES]->(s:Symbol)-[e:CALLS]->(t:Symbol)
WHERE e.line >= $start AND e.line <= $end
RETURN e.line AS line, t.name AS name, t.qualified_name AS qualified_name, t.kind AS kind,
       t.repo AS repo, t.path AS path, t.start_line AS start_line, e.tier AS tier,
       coalesce(e.candidates, 1) AS candidates
ORDER BY line, name, qualified_name
LIMIT $limit
"""

# a job's running runs closed inside the queue's recovery transaction (JobStore.recover),
# through semgraph.graph.runs.abandon_job_runs
ABANDON_JOB_RUNS = """
MATCH (r:IndexRun {job_id: $job_id, status: 'running'})
SET r.status = 'abandoned', r.finished_at = $now, r.abandoned_reason = $reason
RETURN count(r) AS n
"""
