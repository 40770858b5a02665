"""Every Cypher statement of a graph publish (:class:`semgraph.graph.writer.GraphWriter`), as
named constants; the reads are in :mod:`semgraph.graph.queries`.

Each constant is named after the method that runs it. Parameters are always bound; the
only text ever composed is a node label taken from the fixed :data:`SYMBOL_LABELS` whitelist
(labels cannot be parameters in Cypher). Nothing here is Neo4j-only: no APOC, no procedures,
no server clocks (``now`` is always a parameter), so the same text runs on Memgraph.

The module is a little over 300 lines: every statement one publish transaction runs, the
reads of its published state included, is kept in this one place.
"""

from __future__ import annotations

from semgraph.model import SymbolKind

#: kind -> extra label of a ``:Symbol`` node
SYMBOL_LABELS: dict[str, str] = {kind.value: kind.value.capitalize() for kind in SymbolKind}
#: symbols of an unknown kind get only ``:Symbol``
GENERIC_SYMBOL_LABEL = ""

# -- writer: GraphWriter.publish (all in one explicit transaction) -------------------------
#
# A publish takes one of three forms, all in one transaction (see semgraph.graph.writer):
#
# * first publish: the repository has no node yet, so nodes are CREATEd (``*_NEW``): nothing
#   can match, and MERGE lookups and the kind-label clean-up would be pure cost;
# * delta publish: the graph holds what the repository's published state (kept in the graph,
#   semgraph.graph.pubstate) describes, so only changed rows are written: new nodes CREATEd,
#   changed nodes SET (``*_UPDATE``), changed edge groups unlinked (``PUBLISH_UNLINK``) and
#   re-created, removed nodes deleted by key (``PUBLISH_DROP``), last;
# * full publish in place (no usable state): every edge of the repository is deleted in
#   bounded slices, every node upserted by its key (MERGE + SET n = props, so stale properties
#   go), every edge re-created, and only at the end the nodes the new model no longer has are
#   swept. Deleting every node first would be simpler, but on Neo4j each index seek in a
#   transaction that has deleted N nodes costs O(N) (the deleted-node set is merged into every
#   seek), which made a re-index of a 2,000-file repository ~10x slower than its first index.
#
# Every statement is keyed by the repository (``$repo``) or by node keys, which embed it.
# Every statement that writes returns ONE row (a count): the writer pipelines statements one
# deep, and Memgraph accepts the next RUN of an explicit transaction only once the previous
# result was pulled whole, which one row always is. Keep it so. The three PUBLISH_STATE_*
# reads return many rows; they run, and are read whole, before the first write is sent.

# returns the run id the repository's graph carried before and the version of the published
# state the graph holds (semgraph.graph.pubstate): a delta is tried only when that version is
# this code's, for this key. A publish after a removal that stopped part-way
# (semgraph.repos.graph) makes the repository live again.
PUBLISH_REPOSITORY = """
MERGE (r:Repository {key: $key})
WITH r, r.run_id AS previous, r.delta_version AS previous_version
SET r.url = $url, r.default_branch = $default_branch, r.commit = $commit,
    r.run_id = $run_id, r.fingerprint = $fingerprint, r.indexed_at = $now,
    r.delta_version = $delta_version
SET r += $props
REMOVE r.state, r.removing_job_id, r.removing_since
RETURN previous, previous_version
"""

# Delta publish: the published state (semgraph.graph.pubstate), read inside the transaction
# before any row is written (so before any statement is pipelined: these return many rows).
# Every file's bundle digest, as ONE row holding a list of [path, bundle] pairs (a pair, so a
# missing bundle stays in place; one row: at 20,000 files the driver decodes it in 0.1 s, and
# 20,000 rows of one pair each in 1.5 s); then the row digests of the changed and removed
# files only.
PUBLISH_STATE_FILES = """
MATCH (f:File {repo: $repo})
RETURN collect([f.path, f.delta_bundle]) AS files
"""
PUBLISH_STATE_ROWS = """
UNWIND $keys AS k
MATCH (f:File {key: k})
RETURN f.key AS key, f.delta_rows AS rows
"""
PUBLISH_STATE_EXTERNALS = """
MATCH (r:Repository {key: $repo})
RETURN r.delta_externals AS rows
"""
# Every form: the state of each file it wrote, after the file's node (whose SET f = row drops
# the state's properties) and edges; the external modules' state on the repository node.
PUBLISH_FILE_STATE = """
UNWIND $rows AS row
MATCH (f:File {key: row.key})
SET f.delta_bundle = row.bundle, f.delta_rows = row.rows
RETURN count(*) AS written
"""
PUBLISH_EXTERNALS_STATE = """
MATCH (r:Repository {key: $repo})
UNWIND $rows AS row
SET r.delta_externals = row
RETURN count(*) AS written
"""

# Edges are deleted in bounded slices (each statement's working set stays small); an edge
# deleted earlier in the transaction is never matched again, so the loop ends.
PUBLISH_DELETE_REPOSITORY_EDGES = """
MATCH (:Repository {key: $repo})-[e:CONTAINS]->(:File)
WITH e LIMIT $limit DELETE e RETURN count(*) AS deleted
"""
PUBLISH_DELETE_FILE_EDGES = """
MATCH (:File {repo: $repo})-[e]->() WITH e LIMIT $limit DELETE e RETURN count(*) AS deleted
"""
PUBLISH_DELETE_SYMBOL_EDGES = """
MATCH (:Symbol {repo: $repo})-[e]->() WITH e LIMIT $limit DELETE e RETURN count(*) AS deleted
"""

# Full publish: nodes the new model does not have lost their structural edge above and got
# no new one. Run after every node and edge is written, so no index seek follows a node
# deletion. OPTIONAL MATCH + IS NULL, not a bare pattern predicate: Memgraph before 3.6
# answers "Not yet implemented: atom expression" to ``WHERE NOT (a)-->(n)``.
PUBLISH_SWEEP_FILES = """
MATCH (n:File {repo: $repo})
OPTIONAL MATCH (n)<-[c:CONTAINS]-(:Repository)
WITH n, c WHERE c IS NULL
WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS deleted
"""
PUBLISH_SWEEP_SYMBOLS = """
MATCH (n:Symbol {repo: $repo})
OPTIONAL MATCH (n)<-[d:DEFINES]-(:File)
WITH n, d WHERE d IS NULL
WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS deleted
"""
PUBLISH_SWEEP_EXTERNALS = """
MATCH (n:ExternalModule {repo: $repo})
OPTIONAL MATCH (n)<-[i:IMPORTS]-(:File)
WITH n, i WHERE i IS NULL
WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS deleted
"""

PUBLISH_HAS_NODES = """
OPTIONAL MATCH (f:File {repo: $repo}) WITH f LIMIT 1
OPTIONAL MATCH (s:Symbol {repo: $repo}) WITH f, s LIMIT 1
OPTIONAL MATCH (e:ExternalModule {repo: $repo}) WITH f, s, e LIMIT 1
RETURN f IS NOT NULL OR s IS NOT NULL OR e IS NOT NULL AS present
"""

PUBLISH_FILES_NEW = """
MATCH (r:Repository {key: $repo})
UNWIND $rows AS row
CREATE (r)-[:CONTAINS]->(f:File)
SET f = row
RETURN count(*) AS created
"""

PUBLISH_FILES = """
MATCH (r:Repository {key: $repo})
UNWIND $rows AS row
MERGE (f:File {key: row.key})
SET f = row
CREATE (r)-[:CONTAINS]->(f)
RETURN count(*) AS created
"""

_KIND_LABELS = ":".join(SYMBOL_LABELS.values())
# One row per (file, label): the file is looked up once for all its symbols of that label.
# A symbol whose kind changed since the last publish loses its old kind label first.
_PUBLISH_SYMBOLS = """
UNWIND $rows AS row
MATCH (f:File {{key: row.file}})
UNWIND row.symbols AS props
MERGE (s:Symbol {{key: props.key}})
WITH f, s, props, s.kind AS before
FOREACH (_ IN CASE WHEN before IS NOT NULL AND before <> props.kind THEN [1] ELSE [] END |
  REMOVE s:{kind_labels})
SET s = props{set_label}
CREATE (f)-[:DEFINES]->(s)
RETURN count(*) AS created
"""


def _per_label(template: str) -> dict[str, str]:
    """``template`` rendered for each kind label (and the generic symbol): it sets
    ``s:<label>`` after removing every kind label."""
    return {
        label: template.format(kind_labels=_KIND_LABELS, set_label=f", s:{label}" if label else "")
        for label in [*SYMBOL_LABELS.values(), GENERIC_SYMBOL_LABEL]
    }


PUBLISH_SYMBOLS: dict[str, str] = _per_label(_PUBLISH_SYMBOLS)

_PUBLISH_SYMBOLS_NEW = """
UNWIND $rows AS row
MATCH (f:File {{key: row.file}})
UNWIND row.symbols AS props
CREATE (f)-[:DEFINES]->(s:Symbol{set_label})
SET s = props
RETURN count(*) AS created
"""
PUBLISH_SYMBOLS_NEW: dict[str, str] = {
    label: _PUBLISH_SYMBOLS_NEW.format(set_label=f":{label}" if label else "")
    for label in [*SYMBOL_LABELS.values(), GENERIC_SYMBOL_LABEL]
}

PUBLISH_EXTERNALS_NEW = """
UNWIND $rows AS row
CREATE (e:ExternalModule)
SET e = row
RETURN count(*) AS created
"""

PUBLISH_EXTERNALS = """
UNWIND $rows AS row
MERGE (e:ExternalModule {key: row.key})
SET e = row
RETURN count(*) AS created
"""

# Delta publish: a changed node is found by its key and overwritten (stale properties go);
# a symbol loses every kind label before it takes its own (its kind may have changed).
PUBLISH_FILES_UPDATE = """
UNWIND $rows AS row
MATCH (f:File {key: row.key})
SET f = row
RETURN count(*) AS updated
"""
_PUBLISH_SYMBOLS_UPDATE = """
UNWIND $rows AS props
MATCH (s:Symbol {{key: props.key}})
REMOVE s:{kind_labels}
SET s = props{set_label}
RETURN count(*) AS updated
"""
PUBLISH_SYMBOLS_UPDATE: dict[str, str] = _per_label(_PUBLISH_SYMBOLS_UPDATE)
PUBLISH_EXTERNALS_UPDATE = """
UNWIND $rows AS row
MATCH (e:ExternalModule {key: row.key})
SET e = row
RETURN count(*) AS updated
"""

#: (edge type, source label, target label) -> the statement deleting every edge of that type
#: from each source key in ``$rows`` (a changed or vanished edge group, re-created after)
PUBLISH_UNLINK: dict[tuple[str, str, str], str] = {
    (edge, src, dst): f"""
UNWIND $rows AS row
MATCH (a:{src} {{key: row.src}})-[e:{edge}]->(:{dst})
DELETE e
RETURN count(*) AS deleted
"""
    for edge, src, dst in (
        ("CONTAINS", "Symbol", "Symbol"),
        ("HAS_METHOD", "Symbol", "Symbol"),
        ("INHERITS", "Symbol", "Symbol"),
        ("CALLS", "Symbol", "Symbol"),
        ("IMPORTS", "File", "File"),
        ("IMPORTS", "File", "ExternalModule"),
        ("CALLS_EXTERNAL", "Symbol", "ExternalModule"),
    )
}

#: label -> the statement deleting the nodes whose keys are ``$rows``, with their edges
PUBLISH_DROP: dict[str, str] = {
    label: f"""
UNWIND $rows AS k
MATCH (n:{label} {{key: k}})
DETACH DELETE n
RETURN count(*) AS deleted
"""
    for label in ("File", "Symbol", "ExternalModule")
}

# Edge statements take one row per source node with the list of its targets: the source is
# looked up once for all its edges of that type.
PUBLISH_CONTAINS = """
UNWIND $rows AS row
MATCH (a:Symbol {key: row.src})
UNWIND row.dst AS d
MATCH (b:Symbol {key: d.key})
CREATE (a)-[:CONTAINS]->(b)
RETURN count(*) AS created
"""
PUBLISH_HAS_METHOD = """
UNWIND $rows AS row
MATCH (a:Symbol {key: row.src})
UNWIND row.dst AS d
MATCH (b:Symbol {key: d.key})
CREATE (a)-[:HAS_METHOD]->(b)
RETURN count(*) AS created
"""
PUBLISH_INHERITS = """
UNWIND $rows AS row
MATCH (a:Symbol {key: row.src})
UNWIND row.dst AS d
MATCH (b:Symbol {key: d.key})
CREATE (a)-[:INHERITS]->(b)
RETURN count(*) AS created
"""
PUBLISH_IMPORTS_FILE = """
UNWIND $rows AS row
MATCH (a:File {key: row.src})
UNWIND row.dst AS d
MATCH (b:File {key: d.key})
CREATE (a)-[:IMPORTS {line: d.line}]->(b)
RETURN count(*) AS created
"""
PUBLISH_IMPORTS_EXTERNAL = """
UNWIND $rows AS row
MATCH (a:File {key: row.src})
UNWIND row.dst AS d
MATCH (b:ExternalModule {key: d.key})
CREATE (a)-[:IMPORTS {line: d.line}]->(b)
RETURN count(*) AS created
"""
# an external call site: the name it calls through an import of the module,
# read by the cross-repository link (semgraph.xrepo.link)
PUBLISH_CALLS_EXTERNAL = """
UNWIND $rows AS row
MATCH (a:Symbol {key: row.src})
UNWIND row.dst AS d
MATCH (b:ExternalModule {key: d.key})
CREATE (a)-[:CALLS_EXTERNAL {line: d.line, local: d.local, rest: d.rest}]->(b)
RETURN count(*) AS created
"""
PUBLISH_CALLS = """
UNWIND $rows AS row
MATCH (a:Symbol {key: row.src})
UNWIND row.dst AS d
MATCH (b:Symbol {key: d.key})
CREATE (a)-[e:CALLS {line: d.line, tier: d.tier}]->(b)
SET e.candidates = d.candidates
RETURN count(*) AS created
"""
