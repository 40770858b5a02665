"""The canonical rows of one repository's code graph, built from the parsed model and the
resolution, with a digest per row.

Every way of writing the graph (first publish, in-place full publish, delta publish) and the
parity check (:mod:`semgraph.graph.parity`) take their rows from here, so "the graph of a
commit" has one definition:

* a **node row** is one node: its key, base label (``File`` / ``Symbol`` /
  ``ExternalModule``), the extra kind label of a symbol, and every property it carries,
  statistics included (``calls_*``, ``possible_callers`` on symbols, ``imports_unresolved``
  on files), so one digest covers everything a delta must compare;
* an **edge group** is every edge of one type leaving one source node (``CALLS`` of one
  function, ``IMPORTS`` of one file, ...), with its targets sorted, so its digest does not
  depend on the order the resolver found the edges in. Resolution is global: a new definition
  elsewhere changes a group whose own file did not change, and the group's digest catches it.

The structural edges (``Repository-CONTAINS->File``, ``File-DEFINES->Symbol``) exist exactly
when their target node does (a symbol's key names its file), so they belong to the node rows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from semgraph.graph import queries as q
from semgraph.graph.resolve import Resolution
from semgraph.graph.symtab import CLASS_KINDS, file_key, symbol_rows
from semgraph.indexer.model import FileFacts

#: bump when the rows or their digests change: a published state of another version is not
#: compared against (the next publish is a full one)
ROWS_VERSION = "1"
MAX_PARSE_ERROR_CHARS = 500

FILE, SYMBOL, EXTERNAL = "File", "Symbol", "ExternalModule"


def _digest(material: object) -> bytes:
    return hashlib.blake2b(repr(material).encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass(frozen=True, slots=True)
class NodeRow:
    key: str
    label: str  # File | Symbol | ExternalModule
    kind_label: str  # a Symbol's extra label (q.SYMBOL_LABELS), "" otherwise
    props: dict[str, Any]

    @property
    def digest(self) -> bytes:
        return _digest((self.label, self.kind_label, sorted(self.props.items())))


@dataclass(frozen=True, slots=True)
class EdgeGroup:
    """Every ``type`` edge leaving ``src``; ``dst`` rows are ``{"key": ..., **edge props}``
    sorted, and ``dst_label`` is the label the targets are matched by."""

    type: str
    src_label: str
    src: str
    dst_label: str
    dst: list[dict[str, Any]]

    @property
    def kind(self) -> str:
        """The name of the group in the published state: one per statement shape."""
        return f"{self.type}:{self.dst_label}"

    @property
    def digest(self) -> bytes:
        return _digest([sorted(d.items()) for d in self.dst])


def file_rows(
    repo_key: str, facts: FileFacts, res: Resolution
) -> tuple[list[NodeRow], list[EdgeGroup]]:
    """The file's node, its symbols' nodes, and the symbol-to-symbol structure edges
    (``CONTAINS`` / ``HAS_METHOD``) grouped by parent. ``res`` must have run
    :meth:`Resolution.prepare_lookups`."""
    fkey = file_key(repo_key, facts.path)
    props: dict[str, Any] = {
        "key": fkey,
        "repo": repo_key,
        "path": facts.path,
        "language": facts.language,
        "blob_sha": facts.blob_sha,
        "loc": facts.line_count,
        "size_bytes": facts.size_bytes,
        "parse_status": str(facts.parse_status),
    }
    if facts.parse_error:
        props["parse_error"] = facts.parse_error[:MAX_PARSE_ERROR_CHARS]
    unresolved = res.unresolved_imports(facts.path)
    if unresolved:
        props["imports_unresolved"] = unresolved
    nodes = [NodeRow(fkey, FILE, "", props)]
    syms = symbol_rows(repo_key, facts)
    if not syms:
        return nodes, []
    stats = res.symbol_stats_under(f"{fkey}|")
    kinds = {sym.key: sym.kind for sym in syms}
    children: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for sym in syms:
        sprops: dict[str, Any] = {
            "key": sym.key,
            "repo": repo_key,
            "name": sym.name,
            "qualified_name": sym.qualified_name,
            "kind": sym.kind,
            "path": facts.path,
            "start_line": sym.start_line,
            "end_line": sym.end_line,
            "signature": sym.signature,
        }
        counts = stats.get(sym.key)
        if counts is not None:
            sprops["calls_unresolved"], sprops["calls_external"] = counts[0], counts[1]
            sprops["calls_ambiguous"], sprops["possible_callers"] = counts[2], counts[3]
        label = q.SYMBOL_LABELS.get(sym.kind, q.GENERIC_SYMBOL_LABEL)
        nodes.append(NodeRow(sym.key, SYMBOL, label, sprops))
        if sym.parent_key is not None:
            method = sym.kind == "method" and kinds.get(sym.parent_key, "") in CLASS_KINDS
            edge = "HAS_METHOD" if method else "CONTAINS"
            children.setdefault((sym.parent_key, edge), []).append({"key": sym.key})
    groups = [
        EdgeGroup(edge, SYMBOL, parent, SYMBOL, sorted(dst, key=_dst_order))
        for (parent, edge), dst in sorted(children.items())
    ]
    return nodes, groups


def external_rows(repo_key: str, res: Resolution) -> Iterator[NodeRow]:
    for key, name in res.iter_externals():
        yield NodeRow(key, EXTERNAL, "", {"key": key, "repo": repo_key, "name": name})


def _dst_order(d: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted(d.items()))


#: the kinds of resolution edge groups, each in key order (see :func:`resolution_groups`)
RESOLUTION_KINDS = (
    f"IMPORTS:{FILE}",
    f"IMPORTS:{EXTERNAL}",
    f"INHERITS:{SYMBOL}",
    f"CALLS:{SYMBOL}",
)


def resolution_groups(res: Resolution, kind: str) -> Iterator[EdgeGroup]:
    """The resolution's edge groups of one kind (of :data:`RESOLUTION_KINDS`), by source key."""
    if kind.startswith("IMPORTS:"):
        label = kind.split(":", 1)[1]
        for src, edges in res.iter_import_groups():
            dst = sorted(
                ({"key": e.dst_key, "line": e.line} for e in edges if e.dst_label == label),
                key=_dst_order,
            )
            if dst:
                yield EdgeGroup("IMPORTS", FILE, src, label, dst)
    elif kind == f"INHERITS:{SYMBOL}":
        for src, parents in res.iter_inherit_groups():
            yield EdgeGroup("INHERITS", SYMBOL, src, SYMBOL, [{"key": p} for p in parents])
    elif kind == f"CALLS:{SYMBOL}":
        for src, calls in res.iter_call_groups():
            dst = [
                {"key": c.dst_key, "line": c.line, "tier": c.tier, "candidates": c.candidates}
                for c in calls
            ]
            yield EdgeGroup("CALLS", SYMBOL, src, SYMBOL, sorted(dst, key=_dst_order))
    else:
        raise ValueError(f"not a resolution edge kind: {kind}")
