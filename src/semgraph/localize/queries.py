"""The statements :mod:`semgraph.localize.locate` runs that the graph reader does not have
(Cypher, parameters always bound) and its one Elasticsearch body. The call-graph hops reuse
the reader's ``CALLERS_STEP`` and ``CALLEES_STEP`` (:mod:`semgraph.graph.queries`)."""

from __future__ import annotations

from typing import Any

_SYMBOL = """
s.key AS key, s.name AS name, s.qualified_name AS qualified_name, s.kind AS kind,
s.path AS path, s.start_line AS start_line, s.end_line AS end_line
"""

# frames: which of the repository-relative paths a printed path may be are files, by key
LOCALIZE_FILES = """
UNWIND $keys AS k
MATCH (f:File {key: k})
RETURN f.key AS key, f.path AS path
"""

# frames: the files whose module is named like a printed path's file (its stem): a path
# printed from an installed package (``.../site-packages/shop/app.py``) is matched by its
# tail against the module's path (``src/shop/app.py``); kind is filtered after the seek
# by name (it has no index)
LOCALIZE_MODULES = """
UNWIND $names AS n
MATCH (s:Symbol {name: n})
WHERE s.repo = $repo
WITH s WHERE s.kind = 'module'
RETURN DISTINCT s.path AS path
ORDER BY path
LIMIT $limit
"""

# frames: the symbols of a frame's file whose lines span the frame's line
LOCALIZE_FRAME_SYMBOLS = f"""
UNWIND $frames AS fr
MATCH (f:File {{key: fr.key}})-[:DEFINES]->(s:Symbol)
WHERE s.start_line <= fr.line AND s.end_line >= fr.line AND s.kind <> 'module'
RETURN fr.key AS file, fr.line AS line, {_SYMBOL}
ORDER BY file, line, s.start_line DESC
LIMIT $limit
"""

# names: the symbols of the repository each name names (at most $per_name each, and how
# many there are: a name that names many symbols says little about any of them)
LOCALIZE_NAMED = """
UNWIND $names AS n
MATCH (s:Symbol {name: n})
WHERE s.repo = $repo
WITH n, s ORDER BY s.qualified_name, s.path, s.start_line
WITH n, count(s) AS total,
     collect({key: s.key, name: s.name, qualified_name: s.qualified_name, kind: s.kind,
              path: s.path, start_line: s.start_line, end_line: s.end_line}) AS found
RETURN n AS mention, total, found[..$per_name] AS found
ORDER BY mention
"""


def file_chunks_body(paths: list[str], size: int) -> dict[str, Any]:
    """The chunks of ``paths`` (the re-rank reads their code), largest files cut at
    ``size`` chunks in all."""
    return {
        "query": {"bool": {"filter": [{"terms": {"path": paths}}]}},
        "_source": ["path", "symbol", "start_line", "end_line", "code"],
        "sort": [{"path": "asc"}, {"start_line": "asc"}],
        "size": size,
    }
