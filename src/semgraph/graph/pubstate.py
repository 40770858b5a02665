"""What the last publish of a repository wrote, kept on disk so the next one writes only the
difference, and touches only the files whose graph rows can have changed.

One SQLite file per repository, ``<state_dir>/graph-state/<sha256 of the repo key>.sqlite``:

* ``files``: each file's bundle digest (:meth:`Resolution.file_bundles`: its facts and
  everything the resolution produced for it), so the files to look at are found by one join
  with the new resolution, without reading any row of the others;
* ``entries``: a digest per node row and per edge group (:mod:`semgraph.graph.rows`) under
  the path of the file that owns it (``""`` for external modules), for the row-level
  comparison inside a changed file;
* ``meta``: the run id of the publish it describes and the rows version.

A publish uses it only when that run id is the one the graph's ``:Repository`` node carries,
read inside the publishing transaction after the node is locked; anything else (no file,
another rows version, a publish by another worker host, a commit whose answer was lost, a
repository removed and re-added) is a full publish, never a wrong delta. The file only saves
work; it never decides content.

A delta changes the file inside one SQLite transaction that is committed only after the graph
transaction committed (and rolled back otherwise); a full or first publish writes a new file
(``.<run id>.tmp``) renamed over the old one after the commit. So the file never runs ahead
of the graph: if the process dies between the two commits, the run ids differ and the next
publish is a full one.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from pathlib import Path

from semgraph.config import Settings
from semgraph.graph.rows import ROWS_VERSION
from semgraph.logs import event

log = logging.getLogger(__name__)

NODE = "node:"  # kind prefix of node entries; edge groups are "<TYPE>:<target label>"
EXTERNALS = ""  # the owner path of external-module entries

_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (path TEXT PRIMARY KEY, bundle BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE entries (path TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL,
                      digest BLOB NOT NULL, PRIMARY KEY (path, kind, key)) WITHOUT ROWID;
"""
SELECT_META = "SELECT key, value FROM meta"
INSERT_META = "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)"
SELECT_ENTRIES = "SELECT key, kind, digest FROM entries WHERE path = ?"
DELETE_ENTRIES = "DELETE FROM entries WHERE path = ?"
INSERT_ENTRY = "INSERT OR REPLACE INTO entries (path, kind, key, digest) VALUES (?, ?, ?, ?)"
PUT_FILE = "INSERT OR REPLACE INTO files (path, bundle) VALUES (?, ?)"
DELETE_FILE = "DELETE FROM files WHERE path = ?"
# the resolution of the new model is ATTACHed as ``res``
SELECT_CHANGED = """
SELECT n.path FROM res.files AS n LEFT JOIN files AS o ON o.path = n.path
WHERE o.bundle IS NULL OR o.bundle != n.bundle ORDER BY n.path
"""
SELECT_REMOVED = """
SELECT o.path FROM files AS o
WHERE NOT EXISTS (SELECT 1 FROM res.files AS n WHERE n.path = o.path) ORDER BY o.path
"""
INSERT_BATCH = 5000

Entries = dict[tuple[str, str], bytes]  # (key, kind) -> digest


def state_path(settings: Settings, repo_key: str) -> Path:
    """The repository's state file (a hash of the key: no key can escape the directory)."""
    digest = hashlib.sha256(repo_key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return settings.state_dir / "graph-state" / f"{digest}.sqlite"


class PublishedState:
    """The state file of one publish: the last one's (``open``, changed in place by a
    delta) or a new one (``create``, for a full or first publish)."""

    def __init__(self, db: sqlite3.Connection, path: Path, final: Path, run_id: str) -> None:
        self.db, self.path, self.final, self.run_id = db, path, final, run_id
        self._pending: list[tuple[str, str, str, bytes]] = []

    @classmethod
    def open(cls, final: Path) -> PublishedState | None:
        """The last publish's state, or None when it is missing, of another rows version,
        or unreadable (logged: a full publish follows, nothing is lost)."""
        if not final.exists():
            return None
        try:
            db = sqlite3.connect(final, isolation_level=None)
            meta = dict(db.execute(SELECT_META).fetchall())
        except sqlite3.Error as exc:
            event(log, logging.WARNING, "graph_state_unreadable", str(exc), path=str(final))
            return None
        if meta.get("rows_version") != ROWS_VERSION or not meta.get("run_id"):
            db.close()
            return None
        return cls(db, final, final, meta["run_id"])

    @classmethod
    def create(cls, final: Path, run_id: str) -> PublishedState:
        final.parent.mkdir(parents=True, exist_ok=True)
        for stale in final.parent.glob(f"{final.name}.*.tmp"):  # a crashed publish's
            stale.unlink(missing_ok=True)
        path = final.with_name(f"{final.name}.{run_id}.tmp")
        path.unlink(missing_ok=True)
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        db.executescript(_DDL)
        db.execute("BEGIN")
        db.execute(INSERT_META, ("rows_version", ROWS_VERSION))
        return cls(db, path, final, run_id)

    # -- a delta: what changed ----------------------------------------------------------------

    def begin(self) -> None:
        """Start the transaction that the delta's changes go into."""
        self.db.execute("BEGIN IMMEDIATE")

    def plan(self, resolution_db: Path) -> tuple[list[str], list[str]]:
        """(paths whose bundle is new or changed, paths no longer in the model)."""
        self.db.execute("ATTACH DATABASE ? AS res", (str(resolution_db),))
        try:
            changed = [r[0] for r in self.db.execute(SELECT_CHANGED)]
            removed = [r[0] for r in self.db.execute(SELECT_REMOVED)]
        finally:
            self.db.execute("DETACH DATABASE res")
        return changed, removed

    def entries(self, path: str) -> Entries:
        """Every entry owned by ``path`` as the last publish wrote it."""
        rows = self.db.execute(SELECT_ENTRIES, (path,))
        return {(key, kind): digest for key, kind, digest in rows}

    # -- writing --------------------------------------------------------------------------------

    def replace(self, path: str, bundle: bytes | None, entries: Entries) -> None:
        """``path``'s entries (and bundle; None for the externals) as this publish wrote them."""
        self._flush()
        self.db.execute(DELETE_ENTRIES, (path,))
        if bundle is not None:
            self.db.execute(PUT_FILE, (path, bundle))
        self._pending.extend((path, kind, key, digest) for (key, kind), digest in entries.items())
        if len(self._pending) >= INSERT_BATCH:
            self._flush()

    def remove(self, path: str) -> None:
        self._flush()
        self.db.execute(DELETE_ENTRIES, (path,))
        self.db.execute(DELETE_FILE, (path,))

    def _flush(self) -> None:
        if self._pending:
            self.db.executemany(INSERT_ENTRY, self._pending)
            self._pending = []

    def commit(self, run_id: str) -> None:
        """The graph committed ``run_id``: make this state the repository's."""
        self._flush()
        self.db.execute(INSERT_META, ("run_id", run_id))
        self.db.execute("COMMIT")
        self.db.close()
        if self.path != self.final:
            os.replace(self.path, self.final)

    def discard(self) -> None:
        """The graph did not commit (or this state could not be saved): the file stays what
        it was, so its run id tells the next publish not to trust it."""
        try:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            self.db.close()
        except sqlite3.Error as exc:
            event(log, logging.WARNING, "graph_state_discard_failed", str(exc), path=str(self.path))
        finally:
            if self.path != self.final:
                self.path.unlink(missing_ok=True)

    def close(self) -> None:
        self.db.close()
