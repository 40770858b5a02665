"""The parse cache: each file's parse result keyed by ``(path, blob sha)``, kept per
repository between jobs, so a reindex after a small push parses only the files that changed.

One SQLite file per repository, ``<state_dir>/cache/<sha256 of the repo key>/parse.sqlite``,
whose ``meta`` table holds the parser fingerprint (grammar versions, model and schema
versions, chunking options): a cache written under another fingerprint is a miss as a whole.
A job reads the previous cache and, when the parse phase succeeded, leaves a cache holding
exactly the files of this job (so the cache never grows beyond the repository): with a valid
previous cache, that cache is updated in place in one SQLite transaction (the rows of the
files parsed this time replace or join its own, the rows of files gone are deleted: a push
costs the change); otherwise a NEW file written during the job replaces it with an
atomic rename. A missing, unreadable or corrupt cache is a miss (logged), never an error: the
cache only saves work, it never decides content. The previous cache is read in one scan in
path order, as the walk looks files up.

Parse failures are never cached (a timeout may pass next time). Rows are zstd-compressed
msgpack records, exactly what the pool children produce for the spill.

The module is over 300 lines because reading, writing and the in-place commit share the
cache's one state (its connections, the scan and the paths this job keeps).
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import zstandard

from semgraph.config import Settings
from semgraph.logs import event
from semgraph.model import ParseStatus

log = logging.getLogger(__name__)

CACHE_FILE = "parse.sqlite"
CACHE_FORMAT = "2"  # 2: each row's language and resolution row digest
META_KEYS = ("fingerprint", "format")

CREATE_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, blob TEXT NOT NULL, "
    "kind TEXT NOT NULL, status TEXT NOT NULL, size_bytes INTEGER NOT NULL, packed BLOB NOT NULL, "
    "language TEXT NOT NULL, row_digest BLOB NOT NULL)",
)
SELECT_META = "SELECT value FROM meta WHERE key = ?"
INSERT_META = "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)"
# the in-place commit (connection to the previous cache, the new file attached as "fresh")
CREATE_CURRENT = "CREATE TEMP TABLE current_paths (path TEXT PRIMARY KEY)"
INSERT_CURRENT = "INSERT INTO temp.current_paths (path) VALUES (?)"
MERGE_FRESH = "INSERT OR REPLACE INTO main.files SELECT * FROM fresh.files"
DELETE_STALE = "DELETE FROM main.files WHERE path NOT IN (SELECT path FROM temp.current_paths)"
SELECT_BLOBS = "SELECT path, blob FROM files"
ROW = "kind, status, size_bytes, packed, language, row_digest"
SCAN_FILES = f"SELECT path, blob, {ROW} FROM files ORDER BY path"
SELECT_FILE = f"SELECT {ROW} FROM files WHERE path = ? AND blob = ?"
INSERT_FILE = f"INSERT OR REPLACE INTO files (path, blob, {ROW}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"


def cache_dir(settings: Settings, repo_key: str) -> Path:
    """The repository's cache directory (a hash of the key: no key can escape the root)."""
    digest = hashlib.sha256(repo_key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return settings.state_dir / "cache" / digest


class CachedResult:
    """One cached parse result, as the spill takes it."""

    __slots__ = ("compressed", "kind", "language", "packed", "row_digest", "size_bytes", "status")

    def __init__(
        self,
        kind: str,
        status: str,
        size_bytes: int,
        packed: bytes,
        compressed: bytes = b"",
        *,
        language: str = "",
        row_digest: bytes = b"",
    ) -> None:
        self.kind, self.status, self.size_bytes, self.packed = kind, status, size_bytes, packed
        self.compressed = compressed  # the row as stored, when it came from a cache
        # a parsed file's language and resolution row digest: the spill carries them beside
        # the frame, so the incremental resolver need not decode an unchanged file
        self.language, self.row_digest = language, row_digest


class ParseCache:
    """Read the previous cache of one repository and write the next one.

    Use as a context manager: leaving the block by an exception discards the new cache
    (the previous one stays); :meth:`commit` installs the new one.
    """

    def __init__(
        self,
        directory: Path,
        fingerprint: str,
        *,
        repo: str = "",
        reuse: bool = True,
        in_place: bool = True,
    ) -> None:
        self.directory = Path(directory)
        self.fingerprint = fingerprint
        self.repo = repo
        self.path = self.directory / CACHE_FILE
        self.new_path = self.directory / f"{CACHE_FILE}.new-{os.getpid()}"
        self.hits = 0
        self.misses = 0
        self.read_s = 0.0  # seconds reading the previous cache (the parse phase's steps)
        self.write_s = 0.0  # seconds writing the new one
        self.commit_s = 0.0
        self._blobs: dict[str, str] | None = None  # path -> blob of the previous cache
        self._scan: sqlite3.Cursor | None = None  # one ordered scan of the previous cache
        self._scan_row: tuple[Any, ...] | None = None
        self._scan_last = ""
        self._zc = zstandard.ZstdCompressor(level=1)
        self._zd = zstandard.ZstdDecompressor()
        self._old = self._open_old() if reuse else None
        # with a valid previous cache, hits are not copied: commit applies the misses and
        # the removals to the previous file in one transaction (see commit)
        self._in_place = in_place and self._old is not None
        self._current: set[str] = set()  # paths whose row is valid for this job (in place)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.new_path.unlink(missing_ok=True)
        self._new: sqlite3.Connection | None = sqlite3.connect(self.new_path)
        for statement in CREATE_TABLES:
            self._new.execute(statement)
        self._new.execute(INSERT_META, ("fingerprint", fingerprint))
        self._new.execute(INSERT_META, ("format", CACHE_FORMAT))

    @classmethod
    def for_repo(
        cls, settings: Settings, repo_key: str, fingerprint: str, *, reuse: bool = True
    ) -> ParseCache:
        """``reuse=False`` ignores the previous cache (a forced reindex) but still writes
        the next one."""
        return cls(
            cache_dir(settings, repo_key),
            fingerprint,
            repo=repo_key,
            reuse=reuse,
            in_place=settings.parse_cache_in_place,
        )

    def __enter__(self) -> ParseCache:
        return self

    def __exit__(self, *_: object) -> None:
        if self._new is not None:
            self.discard()
        self._close_old()

    def _miss_all(self, why: str) -> None:
        event(log, logging.INFO, "parse_cache_miss", f"parse cache not used: {why}", repo=self.repo)

    def _open_old(self) -> sqlite3.Connection | None:
        if not self.path.is_file():
            return None
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            rows = {key: conn.execute(SELECT_META, (key,)).fetchone() for key in META_KEYS}
        except sqlite3.Error as exc:
            self._miss_all(f"unreadable cache {self.path}: {exc}")
            return None
        found = {key: row[0] if row else None for key, row in rows.items()}
        if found != {"fingerprint": self.fingerprint, "format": CACHE_FORMAT}:
            conn.close()
            self._miss_all("written under another parser fingerprint or format")
            return None
        return conn

    def _close_old(self) -> None:
        self._scan = None
        self._scan_row = None
        if self._old is not None:
            self._old.close()
            self._old = None

    def has(self, path: str, blob: str) -> bool:
        """Whether the previous cache holds ``path`` at ``blob`` (one query for all paths,
        on first use; :meth:`lookup` still reads and checks the row)."""
        if self._blobs is None:
            self._blobs = {}
            if self._old is not None:
                try:
                    self._blobs = dict(self._old.execute(SELECT_BLOBS).fetchall())
                except sqlite3.Error as exc:
                    self._miss_all(f"corrupt cache {self.path}: {exc}")
                    self._close_old()
        return self._blobs.get(path) == blob

    def lookup(self, path: str, blob: str) -> CachedResult | None:
        """The cached result of ``path`` at ``blob``, or None (a corrupt row is a miss)."""
        if self._old is None:
            self.misses += 1
            return None
        started = time.perf_counter()
        try:
            row = self._row(self._old, path, blob)
            result = None
            if row is not None:
                stored = bytes(row[3])
                packed = self._zd.decompress(stored)
                result = CachedResult(
                    str(row[0]),
                    str(row[1]),
                    int(row[2]),
                    packed,
                    stored,
                    language=str(row[4]),
                    row_digest=bytes(row[5]),
                )
        except (sqlite3.Error, zstandard.ZstdError, TypeError, ValueError) as exc:
            self._miss_all(f"corrupt cache {self.path}: {exc}")
            self._close_old()
            result = None
        self.read_s += time.perf_counter() - started
        if result is None:
            self.misses += 1
        else:
            self.hits += 1
            if self._in_place:
                self._current.add(path)  # its row stays where it is
            else:
                self.keep(path, blob, result)
        return result

    def _row(self, old: sqlite3.Connection, path: str, blob: str) -> tuple[Any, ...] | None:
        """The stored row (:data:`ROW`'s columns) of ``path`` at ``blob``: read
        from one scan of the previous cache in path order while lookups come in that order
        (the walk's), else by its key. A row the scan passed is only ever a miss."""
        if path <= self._scan_last:
            row = old.execute(SELECT_FILE, (path, blob)).fetchone()
            return None if row is None else tuple(row)
        if self._scan is None:
            self._scan = old.execute(SCAN_FILES)
            self._scan_row = self._scan.fetchone()
        self._scan_last = path
        current = self._scan_row
        while current is not None and current[0] < path:
            current = self._scan.fetchone()
        self._scan_row = current
        if current is None or current[0] != path or current[1] != blob:
            return None
        return tuple(current[2:])

    def keep(self, path: str, blob: str, result: CachedResult) -> None:
        """Record a result in the new cache (parse failures are not kept)."""
        if self._new is None or result.status == ParseStatus.PARSE_FAILED:
            return
        started = time.perf_counter()
        self._current.add(path)
        self._new.execute(
            INSERT_FILE,
            (
                path,
                blob,
                result.kind,
                result.status,
                result.size_bytes,
                result.compressed or self._zc.compress(result.packed),
                result.language,
                result.row_digest,
            ),
        )
        self.write_s += time.perf_counter() - started

    def commit(self) -> None:
        """Install the new cache in place of the previous one (atomic rename)."""
        if self._new is None:
            return
        started = time.perf_counter()
        self._new.commit()
        self._new.close()
        self._new = None
        in_place = self._in_place and self._old is not None  # not if it turned out corrupt
        self._close_old()
        if in_place:
            self._apply_in_place()
        else:
            # an in-place commit that died leaves the old file's hot journal: it must not be
            # rolled back into the new file
            (self.directory / f"{CACHE_FILE}-journal").unlink(missing_ok=True)
            os.replace(self.new_path, self.path)
        self.commit_s = time.perf_counter() - started
        event(
            log,
            logging.INFO,
            "parse_cache_saved",
            repo=self.repo,
            hits=self.hits,
            misses=self.misses,
            path=str(self.path),
        )

    def _apply_in_place(self) -> None:
        """Make the previous cache hold exactly this job's rows: the new file's (the
        misses) replace or join its own, the rows of paths this job neither hit nor kept go;
        one SQLite transaction, so a failure leaves it as it was (and a later job that
        cannot open it takes it as a miss). The same rows a full rewrite would hold."""
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            conn.execute("ATTACH DATABASE ? AS fresh", (str(self.new_path),))
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(CREATE_CURRENT)
            conn.executemany(INSERT_CURRENT, ((path,) for path in self._current))
            conn.execute(MERGE_FRESH)
            conn.execute(DELETE_STALE)
            conn.execute("COMMIT")
            conn.execute("DETACH DATABASE fresh")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()
        self.new_path.unlink(missing_ok=True)

    def discard(self) -> None:
        """Drop the new cache; the previous one stays as it was."""
        if self._new is not None:
            self._new.close()
            self._new = None
        self.new_path.unlink(missing_ok=True)
