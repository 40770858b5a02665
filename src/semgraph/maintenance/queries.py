"""The maintenance passes' statements (:mod:`semgraph.maintenance.cleanup`): each deletes
at most ``$limit`` nodes that no writer holds."""

# a package no repository provides or depends on (a publish naming it again MERGEs it anew)
ORPHAN_PACKAGES = """
MATCH (p:Package)
OPTIONAL MATCH (p)-[e]-()
WITH p, count(e) AS n
WHERE n = 0
WITH p LIMIT $limit
DELETE p
RETURN count(*) AS deleted
"""

# a run that ended before $cutoff, unless it is its repository's published run
OLD_RUNS = """
MATCH (x:IndexRun)
WHERE x.status <> 'running' AND x.finished_at IS NOT NULL AND x.finished_at < $cutoff
OPTIONAL MATCH (r:Repository {key: x.repo})
WITH x, r
WHERE r IS NULL OR r.run_id IS NULL OR r.run_id <> x.id
WITH x LIMIT $limit
DETACH DELETE x
RETURN count(*) AS deleted
"""
