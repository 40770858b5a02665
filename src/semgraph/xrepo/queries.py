"""Every Cypher statement of package identity and the cross-repository link, as
named constants, each named after the function that runs it (:mod:`semgraph.xrepo.packages`,
:mod:`semgraph.xrepo.link`). Parameters are always bound; every writing statement returns
one row.

The graph they keep:

* ``(:Package {key, ecosystem, name})``, shared by every repository that names it;
* ``(:Repository)-[:PROVIDES {manifest, modules, exports}]->(:Package)`` and
  ``(:Repository)-[:DEPENDS_ON {spec, manifest, chosen, why, candidates}]->(:Package)``,
  rewritten by every publish of the repository (a handful of rows);
* ``(:Symbol)-[:XCALLS {line, site, tier: 'cross_repo', repo, commit, via, candidates}]->
  (:Symbol)``:
  an external call site of one repository linked to a definition of another, written by the
  link, never by the rows of a publish (the graph parity of a repository leaves them out);
* ``(:RelinkPending {library, everything, names, lost})``: what a library's publish changed,
  until its dependents are re-linked (:mod:`semgraph.xrepo.relink`).

The module is over 300 lines: it holds statements only, one feature's, each beside its
comment.
"""

from __future__ import annotations

# what the repository provided and depended on before, as comparable strings (the same as
# semgraph.xrepo.packages.identity_state builds from the manifests)
PACKAGES_BEFORE = """
OPTIONAL MATCH (:Repository {key: $repo})-[e:PROVIDES|DEPENDS_ON]->(p:Package)
WITH p, e
RETURN collect(DISTINCT p.key) AS keys,
       collect(CASE type(e) WHEN 'PROVIDES'
               THEN 'P|' + p.key + '|' + e.manifest + '|'
                    + reduce(s = '', m IN e.modules | s + m + ',') + '|'
                    + reduce(s = '', x IN e.exports | s + x + ',')
               ELSE 'D|' + p.key + '|' + e.manifest + '|' + e.spec END) AS state
"""
PACKAGES_CLEAR = """
MATCH (:Repository {key: $repo})-[e:PROVIDES|DEPENDS_ON]->(:Package)
DELETE e
RETURN count(*) AS deleted
"""
PACKAGES_PROVIDES = """
MATCH (r:Repository {key: $repo})
UNWIND $rows AS row
MERGE (p:Package {key: row.key})
ON CREATE SET p.ecosystem = row.ecosystem, p.name = row.name
CREATE (r)-[:PROVIDES {manifest: row.manifest, modules: row.modules, exports: row.exports}]->(p)
RETURN count(*) AS created
"""
PACKAGES_DEPENDS = """
MATCH (r:Repository {key: $repo})
UNWIND $rows AS row
MERGE (p:Package {key: row.key})
ON CREATE SET p.ecosystem = row.ecosystem, p.name = row.name
CREATE (r)-[:DEPENDS_ON {spec: row.spec, manifest: row.manifest}]->(p)
RETURN count(*) AS created
"""
# a package no repository provides or depends on any more goes
PACKAGES_SWEEP = """
UNWIND $keys AS k
MATCH (p:Package {key: k})
OPTIONAL MATCH (p)<-[e]-()
WITH p, count(e) AS n
WHERE n = 0
DELETE p
RETURN count(*) AS deleted
"""

# -- the link --------------------------------------------------------------------------------

# the providers of each package the dependent depends on (live repositories only)
LINK_PROVIDERS = """
MATCH (d:Repository {key: $repo})-[e:DEPENDS_ON]->(p:Package)
OPTIONAL MATCH (p)<-[v:PROVIDES]-(r:Repository)
WHERE r.key <> $repo AND r.state IS NULL
RETURN p.key AS package, p.ecosystem AS ecosystem,
       collect([r.key, r.commit, v.modules, v.exports]) AS providers
"""
LINK_CHOICE = """
UNWIND $rows AS row
MATCH (:Repository {key: $repo})-[e:DEPENDS_ON]->(p:Package {key: row.package})
SET e.chosen = row.chosen, e.why = row.why, e.candidates = row.candidates
RETURN count(*) AS updated
"""
LINK_SITES_ALL = """
MATCH (s:Symbol {repo: $repo})-[e:CALLS_EXTERNAL]->(m:ExternalModule)
RETURN s.key AS src, e.line AS line, m.name AS module, e.local AS local, e.rest AS rest
"""
LINK_SITES_OF = """
UNWIND $keys AS k
MATCH (s:Symbol {key: k})-[e:CALLS_EXTERNAL]->(m:ExternalModule)
RETURN s.key AS src, e.line AS line, m.name AS module, e.local AS local, e.rest AS rest
"""
# the sites of the dependent whose module is one of ``$modules`` (a library's re-link)
LINK_SITES_INTO = """
UNWIND $modules AS name
MATCH (m:ExternalModule {key: $prefix + name})<-[e:CALLS_EXTERNAL]-(s:Symbol)
RETURN s.key AS src, e.line AS line, m.name AS module, e.local AS local, e.rest AS rest
"""
LINK_MODULES = """
MATCH (m:ExternalModule {repo: $repo})
RETURN collect(m.name) AS names
"""
# what a library provides: the module roots its dependents' sites are matched against
LINK_PROVIDED = """
MATCH (:Repository {key: $repo})-[v:PROVIDES]->(p:Package)
RETURN p.ecosystem AS ecosystem, v.modules AS modules, v.exports AS exports
"""
LINK_UNLINK_ALL = """
MATCH (:Symbol {repo: $repo})-[e:XCALLS]->()
WITH e LIMIT $limit DELETE e RETURN count(*) AS deleted
"""
LINK_UNLINK_OF = """
UNWIND $keys AS k
MATCH (:Symbol {key: k})-[e:XCALLS]->()
DELETE e
RETURN count(*) AS deleted
"""
LINK_UNLINK_LINES = """
UNWIND $rows AS row
MATCH (:Symbol {key: row.src})-[e:XCALLS]->()
WHERE e.line = row.line
DELETE e
RETURN count(*) AS deleted
"""
# definitions by qualified name in one repository
LINK_BY_QN = """
UNWIND $rows AS row
MATCH (s:Symbol {qualified_name: row.qn})
WHERE s.repo = row.repo
RETURN row.i AS i, collect(s.key) AS keys
"""
# the bases (in the library's own graph) of classes named by qualified name, per site
LINK_BASES = """
UNWIND $rows AS row
UNWIND row.classes AS cls
MATCH (c:Symbol {qualified_name: cls})-[:INHERITS]->(b:Symbol)
WHERE c.repo = row.repo AND b.repo = row.repo
RETURN row.i AS i, collect(b.qualified_name) AS parents
"""
# a Python module by its qualified name: its file and the names it re-exports
# (``File.reexports``: ``local<TAB>path<TAB>member``, semgraph.graph.rows)
LINK_MODULE_FILE = """
UNWIND $rows AS row
MATCH (m:Symbol {qualified_name: row.module})
WHERE m.repo = row.repo AND m.kind = 'module'
MATCH (f:File)-[:DEFINES]->(m)
RETURN row.i AS i, f.reexports AS reexports
"""
# the definitions named ``name`` in one file, and what that file re-exports
# npm: which of the candidate entry files (File keys) a provider has
LINK_FILES = """
UNWIND $rows AS row
MATCH (f:File {key: row.key})
RETURN row.i AS i
"""
LINK_MEMBER = """
UNWIND $rows AS row
MATCH (f:File {key: row.file})
OPTIONAL MATCH (f)-[:DEFINES]->(s:Symbol {name: row.name})
WHERE s.kind <> 'module'
RETURN row.i AS i, f.reexports AS reexports, collect([s.key, s.qualified_name]) AS found
"""
# Go: the top-level definitions named ``name`` of one directory of one repository
LINK_BY_NAME = """
UNWIND $rows AS row
MATCH (s:Symbol {name: row.name})
WHERE s.repo = row.repo
RETURN row.i AS i, collect([s.key, s.path, s.qualified_name]) AS found
"""
LINK_CREATE = """
UNWIND $rows AS row
MATCH (a:Symbol {key: row.src})
MATCH (b:Symbol {key: row.dst})
CREATE (a)-[:XCALLS {line: row.line, site: row.site, tier: 'cross_repo', repo: row.repo,
                     commit: row.commit, via: row.via, candidates: row.candidates}]->(b)
RETURN count(*) AS created
"""
# a full count's totals; it replaces what a library's publish recorded of the repository's
# lost links (``$prefix``: ``repo<TAB>``), in the same statement (the push's hot path)
LINK_COUNTS = """
MATCH (r:Repository {key: $repo})
SET r.xrepo_linked = $linked, r.xrepo_ambiguous = $ambiguous,
    r.xrepo_unprovided = $unprovided, r.xrepo_unmatched = $unmatched
WITH r
OPTIONAL MATCH (p:RelinkPending)
WHERE any(x IN coalesce(p.lost, []) WHERE x STARTS WITH $prefix)
WITH r, collect(p) AS stale
FOREACH (p IN stale | SET p.lost = [x IN p.lost WHERE NOT x STARTS WITH $prefix])
RETURN count(r) AS updated
"""
# the counts read from the external modules' sites (the repository's external call sites,
# never all its symbols)
# per set of modules a site may be in, linked or not, how many sites (an open site, C#/Ruby/
# Swift, has one edge per candidate namespace: a call's rows count as their number over its
# distinct modules, one site; two like calls on one line are two)
LINK_COUNT_SITES = """
MATCH (m:ExternalModule {repo: $repo})<-[e:CALLS_EXTERNAL]-(s:Symbol)
WITH s, e.line AS line, e.local AS local, e.rest AS rest,
     collect(DISTINCT m.name) AS modules, count(e) AS n
OPTIONAL MATCH (s)-[x:XCALLS]->()
WHERE x.line = line AND x.site = local + '.' + rest
WITH s, line, local, rest, modules, n, count(x) AS links
RETURN modules, links > 0 AS linked, sum(n / size(modules)) AS n
"""
# the same, per call, of the calls on some lines only (a re-link: what it touched)
LINK_COUNT_LINES = """
UNWIND $rows AS row
MATCH (s:Symbol {key: row.src})-[e:CALLS_EXTERNAL]->(m:ExternalModule)
WHERE e.line = row.line
WITH s, e.line AS line, e.local AS local, e.rest AS rest,
     collect(DISTINCT m.name) AS modules, count(e) AS n
OPTIONAL MATCH (s)-[x:XCALLS]->()
WHERE x.line = line AND x.site = local + '.' + rest
WITH s, line, local, rest, modules, n, count(x) AS links
RETURN s.key AS src, line, local + '.' + rest AS site, modules, links > 0 AS linked,
       n / size(modules) AS n
"""
# a re-link's change to the counts (its calls' classes after, less before)
LINK_COUNTS_ADD = """
MATCH (r:Repository {key: $repo})
WITH r, r.xrepo_linked IS NOT NULL AS counted
FOREACH (_ IN CASE WHEN counted THEN [1] ELSE [] END |
  SET r.xrepo_linked = r.xrepo_linked + $linked,
      r.xrepo_ambiguous = r.xrepo_ambiguous + $ambiguous,
      r.xrepo_unprovided = r.xrepo_unprovided + $unprovided,
      r.xrepo_unmatched = r.xrepo_unmatched + $unmatched)
RETURN counted, r.xrepo_linked AS linked, r.xrepo_ambiguous AS ambiguous,
       r.xrepo_unprovided AS unprovided, r.xrepo_unmatched AS unmatched
"""
# who must be re-linked when ``$repo`` (a library) changes: every repository that depends
# on a package it provides, and every one holding a link into it
DEPENDENTS = """
MATCH (:Repository {key: $repo})-[:PROVIDES]->(:Package)<-[:DEPENDS_ON]-(d:Repository)
WHERE d.key <> $repo
RETURN DISTINCT d.key AS key
UNION
MATCH (t:Symbol {repo: $repo})<-[:XCALLS]-(s:Symbol)
RETURN DISTINCT s.repo AS key
"""

# -- what a library's publish changed, kept until its dependents are re-linked ---------------

# before a delta publish writes: the changed and removed files' symbols (key, name, kind), what
# their modules re-export (``File.reexports``), as they were
RELINK_BEFORE = """
UNWIND $keys AS k
MATCH (f:File {key: k})
OPTIONAL MATCH (f)-[:DEFINES]->(s:Symbol)
OPTIONAL MATCH (s)<-[x:XCALLS]-(c:Symbol)
WITH f, s, collect(c.repo + '\t' + c.key + '\t' + toString(x.line) + '\t' + x.site) AS lost
RETURN f.key AS key, f.reexports AS reexports, collect([s.key, s.name, s.kind, lost]) AS symbols
"""
# after it: the names of the symbols it wrote, of their subclasses in the repository (a
# member inherited through a changed class), and what the written files re-export now
RELINK_AFTER_SYMBOLS = """
UNWIND $keys AS k
MATCH (s:Symbol {key: k})
OPTIONAL MATCH (s)<-[:INHERITS*1..4]-(d:Symbol)
RETURN s.key AS key, s.name AS name, s.kind AS kind, collect(DISTINCT d.name) AS subclasses
"""
# a library's re-exports (File.reexports), what a change's names are re-exported under
RELINK_REEXPORTS = """
MATCH (f:File {repo: $repo})
WHERE f.reexports IS NOT NULL
RETURN f.path AS path, f.reexports AS reexports
"""
RELINK_AFTER_FILES = """
UNWIND $keys AS k
MATCH (f:File {key: k})
RETURN f.key AS key, f.reexports AS reexports
"""
# the pending change set of a library: one (:RelinkPending {library}) while its dependents
# are not yet re-linked, holding the names (a list) or everything; not a model property of
# the :Repository (a delta and a full publish leave different ones)
RELINK_RECORD = """
MERGE (p:RelinkPending {library: $repo})
SET p.everything = coalesce(p.everything, false) OR $everything,
    p.names = coalesce(p.names, []) + [n IN $names WHERE NOT n IN coalesce(p.names, [])],
    p.lost = coalesce(p.lost, []) + [x IN $lost WHERE NOT x IN coalesce(p.lost, [])]
RETURN size(p.names) AS pending
"""
RELINK_PENDING = """
MATCH (r:Repository {key: $repo})
OPTIONAL MATCH (p:RelinkPending {library: $repo})
RETURN coalesce(p.everything, false) AS everything, coalesce(p.names, []) AS names,
       coalesce(p.lost, []) AS lost, r.commit AS commit
"""
# done: only what was read is cleared (a publish in between keeps its own names); the node
# goes once nothing is left
RELINK_DONE = """
MATCH (p:RelinkPending {library: $repo})
SET p.names = [n IN coalesce(p.names, []) WHERE NOT n IN $names],
    p.lost = [x IN coalesce(p.lost, []) WHERE NOT x IN $lost],
    p.everything = CASE WHEN $everything THEN false ELSE p.everything END
WITH p, size(p.names) = 0 AND size(p.lost) = 0 AND NOT p.everything AS empty
FOREACH (_ IN CASE WHEN empty THEN [1] ELSE [] END | DELETE p)
RETURN count(*) AS updated
"""
# the dependent's links into the library (a re-link of everything)
RELINK_LINKED = """
MATCH (s:Symbol {repo: $dependent})-[e:XCALLS]->()
WHERE e.repo = $repo
RETURN s.key AS src, e.line AS line
"""
# the sites (of every dependent) linked now to a definition of the library named one of
# ``$names``: through the name index, never a scan of a dependent's links
RELINK_LINKED_BY_NAME = """
UNWIND $names AS n
MATCH (t:Symbol {name: n})
WHERE t.repo = $repo
MATCH (s:Symbol)-[e:XCALLS]->(t)
RETURN s.repo AS dependent, s.key AS src, e.line AS line
"""
# the dependent's sites into one of ``$modules`` whose ``local`` or ``rest`` may hold one of
# ``$names`` (a superset: the caller keeps those with the identifier itself); a JS namespace
# called (``local`` '*', no ``rest``) is its default export
RELINK_SITES_NAMED = """
UNWIND $modules AS name
MATCH (m:ExternalModule {key: $prefix + name})<-[e:CALLS_EXTERNAL]-(s:Symbol)
WHERE any(n IN $names WHERE e.local CONTAINS n OR e.rest CONTAINS n)
   OR (e.local = '*' AND e.rest = '' AND 'default' IN $names)
RETURN s.key AS src, e.line AS line, m.name AS module, e.local AS local, e.rest AS rest
"""
# the links left in place take the library's new commit (a property, no edge rewritten)
RELINK_STAMP = """
MATCH (:Symbol {repo: $dependent})-[e:XCALLS]->()
WHERE e.repo = $repo AND e.commit <> $commit
SET e.commit = $commit
RETURN count(e) AS stamped
"""
RELINK_STAMP_ALL = """
UNWIND $dependents AS d
MATCH (:Symbol {repo: d})-[e:XCALLS]->()
WHERE e.repo = $repo AND e.commit <> $commit
SET e.commit = $commit
RETURN count(e) AS stamped
"""
