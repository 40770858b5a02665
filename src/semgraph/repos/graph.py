"""The graph side of removing a repository (:mod:`semgraph.repos.removal` runs it), and
the reads that list repositories with their state (:mod:`semgraph.repos.listing`).

A removal first marks the ``:Repository`` node ``state: 'removing'`` (readers skip or label
it from then on) and clears its run id and the version of its published state
(:mod:`semgraph.graph.pubstate`: a reindex that runs after a removal stopped part-way cannot
take the half-deleted graph's state for its own: it publishes in full, and the publish clears
the mark), then deletes the repository's subgraph in bounded slices, one auto-commit
transaction per slice of at most ``limit`` edges or nodes (each slice's working set stays
small on the server, as the publish's edge deletes do), its ``:IndexRun`` history, and only
then the ``:Repository`` node and, last of all, its ``:RepoRecord``. Every statement is
idempotent: run again after a crash it finds what is left and deletes that.

Every statement is keyed by the repository (``$repo``); parameters are always bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from semgraph.db import Graph
from semgraph.xrepo.queries import PACKAGES_SWEEP

#: the ``state`` of a ``:Repository`` node whose removal has started
REMOVING = "removing"

MARK_REMOVING = """
MATCH (r:Repository {key: $repo})
SET r.state = 'removing', r.removing_job_id = $job_id,
    r.removing_since = coalesce(r.removing_since, $now), r.run_id = null,
    r.delta_version = null
RETURN count(r) AS marked
"""

# edges first (outgoing from the repository's nodes), in slices; then the nodes, whose
# remaining edges (incoming ones) go with them
DELETE_SLICES: tuple[tuple[str, str], ...] = (
    (
        "repository edges",
        """
MATCH (:Repository {key: $repo})-[e:CONTAINS]->()
WITH e LIMIT $limit DELETE e RETURN count(*) AS deleted
""",
    ),
    (
        "file edges",
        """
MATCH (:File {repo: $repo})-[e]->()
WITH e LIMIT $limit DELETE e RETURN count(*) AS deleted
""",
    ),
    (
        "symbol edges",
        """
MATCH (:Symbol {repo: $repo})-[e]->()
WITH e LIMIT $limit DELETE e RETURN count(*) AS deleted
""",
    ),
    (
        "symbols",
        """
MATCH (n:Symbol {repo: $repo})
WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS deleted
""",
    ),
    (
        "files",
        """
MATCH (n:File {repo: $repo})
WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS deleted
""",
    ),
    (
        "external modules",
        """
MATCH (n:ExternalModule {repo: $repo})
WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS deleted
""",
    ),
    (
        "index runs",
        """
MATCH (n:IndexRun {repo: $repo})
WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS deleted
""",
    ),
)

DELETE_REPOSITORY = """
MATCH (r:Repository {key: $repo})
DETACH DELETE r
RETURN count(*) AS deleted
"""
# the packages the repository provides or depends on (swept after it goes, when no other
# repository names them: :data:`semgraph.xrepo.queries.PACKAGES_SWEEP`)
PACKAGES_OF = """
MATCH (:Repository {key: $repo})-[:PROVIDES|DEPENDS_ON]->(p:Package)
RETURN collect(DISTINCT p.key) AS keys
"""

DELETE_RECORD = """
MATCH (r:RepoRecord {key: $repo})
DETACH DELETE r
RETURN count(*) AS deleted
"""

# what is left of a repository in the graph (``repos show``, and the tests' proof)
COUNTS = """
OPTIONAL MATCH (f:File {repo: $repo}) WITH count(f) AS files
OPTIONAL MATCH (s:Symbol {repo: $repo}) WITH files, count(s) AS symbols
OPTIONAL MATCH (e:ExternalModule {repo: $repo}) WITH files, symbols, count(e) AS externals
OPTIONAL MATCH (i:IndexRun {repo: $repo})
WITH files, symbols, externals, count(i) AS runs
OPTIONAL MATCH (r:Repository {key: $repo}) WITH files, symbols, externals, runs, count(r) AS repo
OPTIONAL MATCH (c:RepoRecord {key: $repo})
RETURN files, symbols, externals, runs, repo AS repository, count(c) AS record
"""

LIST_REPOSITORIES = """
MATCH (r:Repository)
RETURN r.key AS key, r.url AS url, r.default_branch AS default_branch, r.commit AS commit,
       r.run_id AS run_id, r.indexed_at AS indexed_at, coalesce(r.state, 'live') AS state,
       r.removing_since AS removing_since
ORDER BY key
"""

# ``repos deps``: what a repository depends on (with the provider chosen), what
# it provides, and which repositories depend on it (with the links into it)
DEPENDS_OF = """
MATCH (:Repository {key: $repo})-[e:DEPENDS_ON]->(p:Package)
RETURN p.ecosystem AS ecosystem, p.name AS name, e.spec AS spec, e.chosen AS chosen,
       e.why AS why, coalesce(e.candidates, []) AS candidates
ORDER BY ecosystem, name
"""
PROVIDES_OF = """
MATCH (:Repository {key: $repo})-[e:PROVIDES]->(p:Package)
RETURN p.ecosystem AS ecosystem, p.name AS name, e.modules AS modules, e.manifest AS manifest
ORDER BY ecosystem, name
"""
DEPENDENTS_OF = """
MATCH (:Repository {key: $repo})-[:PROVIDES]->(p:Package)<-[e:DEPENDS_ON]-(d:Repository)
WHERE d.key <> $repo
RETURN d.key AS repo, p.ecosystem AS ecosystem, p.name AS name, e.spec AS spec,
       e.chosen = $repo AS chosen
ORDER BY repo, ecosystem, name
"""
# the repository's cross-repository counts (one per external call) and what its last
# publishes left for its dependents' re-link
XREPO_STATE = """
MATCH (r:Repository {key: $repo})
OPTIONAL MATCH (p:RelinkPending {library: $repo})
RETURN r.xrepo_linked AS linked, r.xrepo_ambiguous AS ambiguous,
       r.xrepo_unprovided AS unprovided, r.xrepo_unmatched AS unmatched,
       p IS NOT NULL AS pending, coalesce(p.everything, false) AS everything,
       size(coalesce(p.names, [])) AS names, size(coalesce(p.lost, [])) AS lost
"""
LINKS_INTO = """
MATCH (t:Symbol {repo: $repo})<-[e:XCALLS]-(s:Symbol)
RETURN s.repo AS repo, count(e) AS links
"""

GET_REPOSITORY = """
MATCH (r:Repository {key: $repo})
RETURN properties(r) AS props
"""


@dataclass(frozen=True)
class SliceReport:
    """What one delete step removed, in how many transactions."""

    what: str
    deleted: int
    transactions: int


class GraphRemoval:
    """The graph statements of a removal, for one repository."""

    def __init__(self, graph: Graph, repo_key: str, *, limit: int = 5000) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.graph = graph
        self.repo = repo_key
        self.limit = limit

    def mark_removing(self, job_id: str, now: float) -> bool:
        """Mark the ``:Repository`` node ``removing``; False when there is none."""
        rows = self.graph.query(
            "mark repository removing", MARK_REMOVING, repo=self.repo, job_id=job_id, now=now
        )
        return bool(rows and rows[0]["marked"])

    def delete_slices(self, after_slice: Any = None) -> list[SliceReport]:
        """Delete the subgraph and the runs, slice by slice (one transaction each);
        ``after_slice(what, deleted)`` runs after every committed slice."""
        reports = []
        for what, cypher in DELETE_SLICES:
            total = transactions = 0
            while True:
                rows = self.graph.query(f"remove {what}", cypher, repo=self.repo, limit=self.limit)
                deleted = int(rows[0]["deleted"]) if rows else 0
                transactions += 1
                total += deleted
                if after_slice is not None and deleted:
                    after_slice(what, deleted)
                if deleted < self.limit:
                    break
            reports.append(SliceReport(what, total, transactions))
        return reports

    def delete_repository(self) -> int:
        """The ``:Repository`` node, and the ``:Package`` nodes no other repository names."""
        with self.graph.transaction("remove repository node") as tx:
            found = tx.run(PACKAGES_OF, repo=self.repo).single()
            keys = list(found["keys"]) if found else []
            done = tx.run(DELETE_REPOSITORY, repo=self.repo).single()
            if keys:
                tx.run(PACKAGES_SWEEP, keys=keys).single()
        return int(done["deleted"]) if done else 0

    def delete_record(self) -> int:
        rows = self.graph.query("remove repository record", DELETE_RECORD, repo=self.repo)
        return int(rows[0]["deleted"]) if rows else 0

    def counts(self) -> dict[str, int]:
        """How many files, symbols, external modules, runs, repository and record nodes the
        repository still has."""
        rows = self.graph.query("repository counts", COUNTS, repo=self.repo)
        return {k: int(v) for k, v in rows[0].items()}


def list_repositories(graph: Graph) -> list[dict[str, Any]]:
    """Every ``:Repository`` node with its ``state`` (``live`` or ``removing``)."""
    return graph.query("list repositories", LIST_REPOSITORIES)


def repository_props(graph: Graph, repo_key: str) -> dict[str, Any] | None:
    rows = graph.query("repository props", GET_REPOSITORY, repo=repo_key)
    return dict(rows[0]["props"]) if rows else None


def dependencies(graph: Graph, repo: str) -> dict[str, Any]:
    """What ``repo`` provides and depends on, and who depends on it (``repos deps``)."""
    links = {r["repo"]: r["links"] for r in graph.query("links into", LINKS_INTO, repo=repo)}
    dependents = graph.query("dependents", DEPENDENTS_OF, repo=repo)
    for d in dependents:
        d["links"] = links.get(d["repo"], 0)
    state = graph.query("xrepo state", XREPO_STATE, repo=repo)
    row = state[0] if state else {}
    return {
        "repo": repo,
        "counts": {k: row.get(k) for k in ("linked", "ambiguous", "unprovided", "unmatched")},
        "relink_pending": (
            {k: row[k] for k in ("everything", "names", "lost")} if row.get("pending") else None
        ),
        "provides": graph.query("provides", PROVIDES_OF, repo=repo),
        "depends_on": graph.query("depends on", DEPENDS_OF, repo=repo),
        "dependents": dependents,
    }
