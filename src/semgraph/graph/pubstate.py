"""What the last publish of a repository wrote, kept on disk so the next one writes only the
difference.

One SQLite file per repository, ``<state_dir>/graph-state/<sha256 of the repo key>.sqlite``,
holding a digest per node row and per edge group (:mod:`semgraph.graph.rows`) and, in its
``meta`` table, the run id of the publish it describes. A publish reads it only when that run
id is the one the graph's ``:Repository`` node carries, read inside the publishing transaction
after the node is locked; anything else (no file, another rows version, a publish of another
worker host, a commit whose answer was lost, a repository removed and re-added) is a full
publish, never a wrong delta. The file only saves work; it never decides content.

A publish writes a NEW file next to the old one (``.<run id>.tmp``) and renames it over the
old one only after its transaction committed, so the file never runs ahead of the graph.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from semgraph.config import Settings
from semgraph.graph.rows import ROWS_VERSION
from semgraph.logs import event

log = logging.getLogger(__name__)

NODE = "node:"  # kind prefix of node entries; edge groups are "<TYPE>:<target label>"

_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE entries (key TEXT NOT NULL, kind TEXT NOT NULL, digest BLOB NOT NULL,
                      PRIMARY KEY (key, kind)) WITHOUT ROWID;
"""
SELECT_META = "SELECT value FROM meta WHERE key = ?"
INSERT_META = "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)"
INSERT_ENTRY = "INSERT OR REPLACE INTO entries (key, kind, digest) VALUES (?, ?, ?)"
SELECT_UNDER = "SELECT key, kind, digest FROM entries WHERE key >= ? AND key < ?"
SELECT_KIND = "SELECT key, digest FROM entries WHERE kind = ? ORDER BY key"
# entries of the old state that the new one no longer has (the old file is ATTACHed as old)
SELECT_GONE = """
SELECT o.key, o.kind FROM old.entries AS o
WHERE NOT EXISTS (SELECT 1 FROM entries AS n WHERE n.key = o.key AND n.kind = o.kind)
ORDER BY o.kind, o.key
"""
COUNT_ENTRIES = "SELECT count(*) FROM entries"
INSERT_BATCH = 5000


def state_path(settings: Settings, repo_key: str) -> Path:
    """The repository's state file (a hash of the key: no key can escape the directory)."""
    digest = hashlib.sha256(repo_key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return settings.state_dir / "graph-state" / f"{digest}.sqlite"


class OldState:
    """The state of the last publish, opened read-only."""

    def __init__(self, path: Path, db: sqlite3.Connection, run_id: str, entries: int) -> None:
        self.path, self.db, self.run_id, self.entries = path, db, run_id, entries

    @classmethod
    def open(cls, path: Path) -> OldState | None:
        """The state at ``path``, or None when it is missing, of another rows version, or
        unreadable (logged: a full publish follows, nothing is lost)."""
        if not path.exists():
            return None
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("rows_version") != ROWS_VERSION or not meta.get("run_id"):
                db.close()
                return None
            entries = int(db.execute(COUNT_ENTRIES).fetchone()[0])
        except sqlite3.Error as exc:
            event(log, logging.WARNING, "graph_state_unreadable", str(exc), path=str(path))
            return None
        return cls(path, db, meta["run_id"], entries)

    def under(self, prefix: str) -> dict[tuple[str, str], bytes]:
        """Every entry whose key starts with ``prefix`` (one file's nodes and groups)."""
        rows = self.db.execute(SELECT_UNDER, (prefix, prefix + "\U0010ffff"))
        return {(key, kind): digest for key, kind, digest in rows}

    def of_kind(self, kind: str) -> Iterator[tuple[str, bytes]]:
        """(key, digest) of every entry of ``kind``, in key order (a cursor: dropping it
        half-read is fine)."""
        return iter(self.db.execute(SELECT_KIND, (kind,)))

    def close(self) -> None:
        self.db.close()


class NewState:
    """The state being written by a publish; :meth:`promote` once its transaction committed."""

    def __init__(self, final: Path, run_id: str) -> None:
        final.parent.mkdir(parents=True, exist_ok=True)
        for stale in final.parent.glob(f"{final.name}.*.tmp"):  # a crashed publish's
            stale.unlink(missing_ok=True)
        self.final = final
        self.path = final.with_name(f"{final.name}.{run_id}.tmp")
        self.path.unlink(missing_ok=True)
        self.db = sqlite3.connect(self.path)
        self.db.execute("PRAGMA journal_mode = OFF")
        self.db.execute("PRAGMA synchronous = OFF")
        self.db.executescript(_DDL)
        self.db.execute(INSERT_META, ("run_id", run_id))
        self.db.execute(INSERT_META, ("rows_version", ROWS_VERSION))
        self._pending: list[tuple[str, str, bytes]] = []

    def add(self, key: str, kind: str, digest: bytes) -> None:
        self._pending.append((key, kind, digest))
        if len(self._pending) >= INSERT_BATCH:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self.db.executemany(INSERT_ENTRY, self._pending)
            self._pending = []

    def gone(self, old: OldState) -> Iterator[tuple[str, str]]:
        """(key, kind) of every entry of ``old`` that this state does not have."""
        self._flush()
        self.db.commit()
        self.db.execute("ATTACH DATABASE ? AS old", (str(old.path),))
        cursor = self.db.execute(SELECT_GONE)
        try:
            yield from cursor  # streamed: a large removal is not held in memory
        finally:
            cursor.close()
            self.db.execute("DETACH DATABASE old")

    def promote(self) -> None:
        """The publish committed: this state replaces the old one (atomic rename)."""
        self._flush()
        self.db.commit()
        self.db.close()
        os.replace(self.path, self.final)

    def discard(self) -> None:
        try:
            self.db.close()
        finally:
            self.path.unlink(missing_ok=True)
