"""What the last publish of a repository wrote, kept IN THE GRAPH beside what it describes, so
that the next publish, on any worker host, writes only the difference.

The state is written by the publishing transaction itself, so it can never run ahead of or
behind the graph (docs/architecture.md, "Scale-out"); a host's disk holds nothing the delta needs.

* ``:Repository.delta_version``: ``<state format>/<rows version>/<digest of the repo key>``,
  set by every publish (:data:`semgraph.graph.publish_queries.PUBLISH_REPOSITORY` returns the
  one it replaced). A delta is tried only when the previous one is this version's for this
  key: a state written by an older or newer semgraph, or under another repository key (a
  repository renamed), is a full publish;
* ``:File.delta_bundle``: the file's bundle digest (:meth:`Resolution.file_bundles`: its facts
  and everything the resolution produced for it), base64. One read of every file's bundle
  (the only per-file read of a delta) finds the new, changed and removed files;
* ``:File.delta_rows``: a digest per node row and per edge group (:mod:`semgraph.graph.rows`)
  the file owns, one string each (:func:`encode`), after a checksum over the file key, the
  bundle and the rows. Read only for the changed and removed files;
* ``:Repository.delta_externals``: the same for the external-module nodes.

A state that does not decode, whose checksum does not match, or a file without one while the
version says it should have one, is :class:`StateInvalid`: the writer logs it and publishes
in full (never a wrong delta). A graph changed behind the state's back (a delta row that finds
no node) is caught by the writer the same way.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from typing import Any

from semgraph.db import Tx
from semgraph.graph import publish_queries as q
from semgraph.graph.rows import ROWS_VERSION
from semgraph.resolve.resolution import Resolution
from semgraph.resolve.symtab import external_key, file_key

#: bump when the encoding below changes (a state of another format is never compared against)
STATE_FORMAT = "1"
NODE = "node:"  # kind prefix of node entries; edge groups are "<TYPE>:<target label>"
EXTERNALS = ""  # the owner path of external-module entries
DIGEST_CHARS = 22  # a 16-byte row digest in unpadded base64
READ_KEYS = 2000  # files whose rows one read statement fetches
#: the published state's properties on a ``:File`` node (not compared by graph parity)
STATE_PROPS = frozenset({"delta_bundle", "delta_rows"})

Entries = dict[tuple[str, str], bytes]  # (key, kind) -> digest

#: entry kind -> its one-character code in an encoded row
_CODE = {
    "node:File": "F",
    "node:Symbol": "S",
    "node:ExternalModule": "E",
    "CONTAINS:Symbol": "c",
    "HAS_METHOD:Symbol": "h",
    "INHERITS:Symbol": "i",
    "CALLS:Symbol": "k",
    "IMPORTS:File": "m",
    "IMPORTS:ExternalModule": "x",
    "CALLS_EXTERNAL:ExternalModule": "q",
}
_KIND = {code: kind for kind, code in _CODE.items()}


class StateInvalid(Exception):
    """The published state in the graph cannot be trusted: publish in full."""


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)


def version(repo_key: str) -> str:
    """The ``delta_version`` a publish of ``repo_key`` by this code writes and accepts."""
    key = hashlib.blake2b(repo_key.encode("utf-8", "surrogatepass"), digest_size=9).digest()
    return f"{STATE_FORMAT}/{ROWS_VERSION}/{_b64(key)}"


def bundle_text(bundle: bytes) -> str:
    return _b64(bundle)


def _checksum(owner: str, bundle: str, rows: Iterable[str]) -> str:
    h = hashlib.blake2b(digest_size=12)
    for part in (owner, bundle, *rows):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return "#" + _b64(h.digest())


def encode(owner: str, prefix: str, bundle: str, entries: Entries) -> list[str]:
    """``entries`` as stored: the checksum, then ``<digest><kind code><r|a><key>`` per entry,
    sorted, a key that starts with ``prefix`` stored relative to it (``r``)."""
    rows = []
    for (key, kind), digest in entries.items():
        tail = "r" + key[len(prefix) :] if key.startswith(prefix) else "a" + key
        rows.append(_b64(digest) + _CODE[kind] + tail)
    rows.sort()
    return [_checksum(owner, bundle, rows), *rows]


def decode(owner: str, prefix: str, bundle: str, stored: Any) -> Entries:
    """What :func:`encode` stored; :class:`StateInvalid` on anything else."""
    if not isinstance(stored, list) or not stored or not all(isinstance(s, str) for s in stored):
        raise StateInvalid(f"the published state of {owner!r} is missing or not a list")
    check, rows = stored[0], stored[1:]
    if check != _checksum(owner, bundle, rows):
        raise StateInvalid(f"the published state of {owner!r} does not match its checksum")
    out: Entries = {}
    for row in rows:
        kind = _KIND.get(row[DIGEST_CHARS : DIGEST_CHARS + 1])
        mode = row[DIGEST_CHARS + 1 : DIGEST_CHARS + 2]
        try:
            digest = _unb64(row[:DIGEST_CHARS])
        except ValueError:
            digest = b""
        if kind is None or mode not in ("r", "a") or len(digest) != 16:
            raise StateInvalid(f"the published state of {owner!r} has a malformed row")
        tail = row[DIGEST_CHARS + 2 :]
        out[(prefix + tail if mode == "r" else tail, kind)] = digest
    return out


def payload_bytes(rows: list[str], bundle: str = "") -> int:
    """UTF-8 bytes of the stored values (what the state adds to the graph, before the
    server's own per-property overhead)."""
    return len(bundle.encode()) + sum(len(r.encode("utf-8", "surrogatepass")) for r in rows)


class PublishedState:
    """The state a delta publish compares against, read from the graph inside the publishing
    transaction (after the ``:Repository`` node is locked, before any row is written)."""

    def __init__(self, repo_key: str) -> None:
        self.repo_key = repo_key
        self.loaded: dict[str, Entries] = {}  # owner path -> its published entries

    def plan(self, tx: Tx, res: Resolution) -> tuple[list[str], list[str]]:
        """(paths whose bundle is new or changed, paths no longer in the model); loads the
        published entries of both."""
        published: dict[str, str] = {}
        record = tx.run(q.PUBLISH_STATE_FILES, repo=self.repo_key).single()
        for path, bundle in record["files"] if record is not None else []:
            if not isinstance(bundle, str):
                raise StateInvalid(f"file {path!r} has no published state")
            published[path] = bundle
        before = dict(published)
        changed = []
        for path, bundle in res.file_bundles():
            if published.pop(path, None) != bundle_text(bundle):
                changed.append(path)
        removed = sorted(published)
        self._load(tx, [p for p in changed if p in before] + removed, before)
        self._load_externals(tx)
        return changed, removed

    def _load(self, tx: Tx, paths: list[str], bundles: dict[str, str]) -> None:
        by_key = {file_key(self.repo_key, p): p for p in paths}
        keys = list(by_key)
        for i in range(0, len(keys), READ_KEYS):
            for record in tx.run(q.PUBLISH_STATE_ROWS, keys=keys[i : i + READ_KEYS]):
                key = record["key"]
                path = by_key[key]
                self.loaded[path] = decode(key, key, bundles[path], record["rows"])
        missing = set(by_key.values()) - set(self.loaded)
        if missing:
            raise StateInvalid(f"{len(missing)} published files were not found by key")

    def _load_externals(self, tx: Tx) -> None:
        record = tx.run(q.PUBLISH_STATE_EXTERNALS, repo=self.repo_key).single()
        stored = record["rows"] if record is not None else None
        prefix = external_key(self.repo_key, "")
        self.loaded[EXTERNALS] = decode(self.repo_key, prefix, "", stored)

    def entries(self, path: str) -> Entries:
        """Every entry owned by ``path`` as the last publish wrote it (none unless loaded)."""
        return self.loaded.get(path, {})
