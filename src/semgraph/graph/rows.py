"""The canonical rows of one repository's code graph, read file by file from the resolution
(its SQLite file holds the whole model: files, symbols, and every edge), with a digest per row.

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
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from semgraph.graph import publish_queries as q
from semgraph.resolve.resolution import Resolution
from semgraph.resolve.symtab import CLASS_KINDS, external_key, family, file_key

#: bump when the rows or their digests change: a published state of another version is not
#: compared against (the next publish is a full one)
ROWS_VERSION = "5"  # 5: CALLS_EXTERNAL (the cross-repository link's sites)

FILE, SYMBOL, EXTERNAL = "File", "Symbol", "ExternalModule"


def _digest(material: object) -> bytes:
    return hashlib.blake2b(repr(material).encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass(slots=True)
class NodeRow:
    key: str
    label: str  # File | Symbol | ExternalModule
    kind_label: str  # a Symbol's extra label (q.SYMBOL_LABELS), "" otherwise
    props: dict[str, Any]
    material: tuple[Any, ...]  # every value ``props`` is made of, for the digest

    @property
    def digest(self) -> bytes:
        return _digest((self.label, self.kind_label, self.material))


@dataclass(slots=True)
class EdgeGroup:
    """Every ``type`` edge leaving ``src``; ``dst`` rows are ``{"key": ..., **edge props}``
    in sorted order, and ``dst_label`` is the label the targets are matched by."""

    type: str
    src_label: str
    src: str
    dst_label: str
    dst: list[dict[str, Any]]
    material: tuple[Any, ...]  # the sorted (target, edge props) tuples, for the digest

    @property
    def kind(self) -> str:
        """The name of the group in the published state: one per statement shape."""
        return f"{self.type}:{self.dst_label}"

    @property
    def digest(self) -> bytes:
        return _digest(self.material)


def file_nodes(res: Resolution, path: str) -> tuple[list[NodeRow], list[EdgeGroup]]:
    """The file's node, its symbols' nodes, and the symbol-to-symbol structure edges
    (``CONTAINS`` / ``HAS_METHOD``) grouped by parent, read from the resolution (which must
    have run :meth:`Resolution.prepare_lookups`)."""
    record = res.file_record(path)
    if record is None:
        return [], []
    fkey, language, blob_sha, loc, size_bytes, status, error = record
    props: dict[str, Any] = {
        "key": fkey,
        "repo": res.repo_key,
        "path": path,
        "language": language,
        "blob_sha": blob_sha,
        "loc": loc,
        "size_bytes": size_bytes,
        "parse_status": status,
    }
    if error:
        props["parse_error"] = error
    unresolved = res.unresolved_imports(path)
    if unresolved:
        props["imports_unresolved"] = unresolved
    fam = family(language)
    reexports = res.reexports_of(path, fam) if fam in ("python", "js", "rust") else []
    if reexports:  # what the cross-repository link follows (semgraph.xrepo.link)
        props["reexports"] = reexports
    nodes = [NodeRow(fkey, FILE, "", props, (record, unresolved, reexports))]
    syms = res.symbols_of(path)
    if not syms:
        return nodes, []
    stats = res.symbol_stats_of(path)
    children: dict[tuple[str, str], list[str]] = {}
    repo = res.repo_key
    for row in syms:
        key, qn, name, kind, parent_key, parent_kind, start, end, signature = row
        sprops: dict[str, Any] = {
            "key": key,
            "repo": repo,
            "name": name,
            "qualified_name": qn,
            "kind": kind,
            "path": path,
            "start_line": start,
            "end_line": end,
            "signature": signature,
        }
        counts = stats.get(key)
        if counts is not None:
            sprops["calls_unresolved"], sprops["calls_external"] = counts[0], counts[1]
            sprops["calls_ambiguous"], sprops["possible_callers"] = counts[2], counts[3]
        label = q.SYMBOL_LABELS.get(kind, q.GENERIC_SYMBOL_LABEL)
        nodes.append(NodeRow(key, SYMBOL, label, sprops, (row, counts)))
        if parent_key is not None:
            method = kind == "method" and (parent_kind or "") in CLASS_KINDS
            edge = "HAS_METHOD" if method else "CONTAINS"
            children.setdefault((parent_key, edge), []).append(key)
    groups = []
    for (parent, edge), keys in sorted(children.items()):
        keys.sort()
        groups.append(
            EdgeGroup(edge, SYMBOL, parent, SYMBOL, [{"key": k} for k in keys], tuple(keys))
        )
    return nodes, groups


def file_groups(res: Resolution, path: str) -> list[EdgeGroup]:
    """The edge groups the resolution made leaving ``path``: its imports (of files, of
    external modules), its classes' bases, its symbols' calls."""
    groups: list[EdgeGroup] = []
    repo = res.repo_key
    src = file_key(repo, path)
    for kind, imports in itertools.groupby(res.imports_of(path), key=lambda r: r[0]):
        label, key_of = (EXTERNAL, external_key) if kind == "external" else (FILE, file_key)
        targets = tuple((key_of(repo, dst), line) for _, dst, line in imports)
        dst = [{"key": k, "line": line} for k, line in targets]
        groups.append(EdgeGroup("IMPORTS", FILE, src, label, dst, targets))
    groups.sort(key=lambda g: g.dst_label)
    for child, bases in itertools.groupby(res.inherits_of(path), key=lambda r: r[0]):
        parents = tuple(parent for _, parent in bases)
        dst = [{"key": p} for p in parents]
        groups.append(EdgeGroup("INHERITS", SYMBOL, child, SYMBOL, dst, parents))
    for caller, calls in itertools.groupby(res.calls_of(path), key=lambda r: r[0]):
        material = tuple(c[1:] for c in calls)
        # ``candidates`` only where it says something: a resolved edge has exactly one
        dst = [
            {"key": k, "line": ln, "tier": t, "candidates": c}
            if c != 1
            else {"key": k, "line": ln, "tier": t}
            for k, ln, t, c in material
        ]
        groups.append(EdgeGroup("CALLS", SYMBOL, caller, SYMBOL, dst, material))
    for caller, sites in itertools.groupby(res.external_sites_of(path), key=lambda r: r[0]):
        found = tuple((external_key(repo, m), ln, loc, rest) for _, ln, m, loc, rest in sites)
        dst = [{"key": k, "line": ln, "local": loc, "rest": rest} for k, ln, loc, rest in found]
        groups.append(EdgeGroup("CALLS_EXTERNAL", SYMBOL, caller, EXTERNAL, dst, found))
    return groups


def external_rows(res: Resolution) -> Iterator[NodeRow]:
    for key, name in res.iter_externals():
        yield NodeRow(key, EXTERNAL, "", {"key": key, "repo": res.repo_key, "name": name}, (name,))
