"""Who may call the API: scoped bearer tokens from a secrets file, plus ``SEMGRAPH_API_TOKEN``.

The file (``SEMGRAPH_API_TOKENS_FILE``) is TOML, one ``[[tokens]]`` table per token::

    [[tokens]]
    name = "ci"                              # in the audit log; never the token itself
    token_sha256 = "<64 hex>"                # or: token = "<at least 16 characters>"
    scopes = ["read", "enqueue"]             # read, enqueue, admin
    repos = ["svc-1a2b3c4d5e", "web-*"]      # optional, read only: repository keys or globs
    expires_at = 2027-01-01T00:00:00Z        # optional

A given token is hashed and compared with every entry in constant time (no early exit).
:class:`TokenTable` rereads the file when it changes (checked at most once a second) or on
``reload()`` (SIGHUP); a file that no longer parses keeps the previous table and is logged.
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
import logging
import os
import re
import threading
import time
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from semgraph.config import Settings
from semgraph.errors import ConfigError
from semgraph.logs import event

log = logging.getLogger(__name__)

SCOPES = ("read", "enqueue", "admin", "metrics")  # metrics: GET /metrics only
MAX_FILE_BYTES = 1_000_000
MIN_TOKEN_CHARS = 16
MAX_TOKEN_CHARS = 4096
_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_KEYS = {"name", "token", "token_sha256", "scopes", "repos", "expires_at"}
RECHECK_S = 1.0


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


@dataclass(frozen=True)
class Principal:
    """Who a request is: a token's name, its scopes and, for reads, the repositories it may
    see (``repos is None``: every repository)."""

    name: str
    scopes: frozenset[str]
    repos: tuple[str, ...] | None = None

    def allows(self, repo_key: str) -> bool:
        """Whether this caller may read ``repo_key`` (keys or fnmatch globs)."""
        if self.repos is None:
            return True
        return any(fnmatch.fnmatchcase(repo_key, pattern) for pattern in self.repos)

    def filter_repos(self, keys: Iterable[str]) -> list[str]:
        return [key for key in keys if self.allows(key)]


#: who an unauthenticated read is, where reads need no token (loopback or opened reads)
ANONYMOUS = Principal("anonymous", frozenset({"read"}))


@dataclass(frozen=True)
class _Entry:
    principal: Principal
    sha256: bytes
    expires_at: float | None


def _entry(number: int, raw: Any) -> _Entry:
    where = f"token #{number}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: must be a table")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown keys {unknown}")
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(f"{where}: name must be 1-64 characters of A-Z a-z 0-9 _ . : -")
    where = f"token {name!r}"
    sha = _secret_digest(where, raw.get("token"), raw.get("token_sha256"))
    scopes = raw.get("scopes")
    if (
        not isinstance(scopes, list)
        or not scopes
        or not all(isinstance(s, str) and s in SCOPES for s in scopes)
    ):
        raise ConfigError(f"{where}: scopes must be a non-empty list of {', '.join(SCOPES)}")
    repos = raw.get("repos")
    if repos is not None and (
        not isinstance(repos, list)
        or not all(isinstance(r, str) and 0 < len(r.strip()) <= 512 for r in repos)
    ):
        raise ConfigError(f"{where}: repos must be a list of repository keys or globs")
    expires = raw.get("expires_at")
    if expires is not None and (not isinstance(expires, datetime) or expires.tzinfo is None):
        raise ConfigError(f"{where}: expires_at must be a date-time with a time zone")
    principal = Principal(
        name,
        frozenset(scopes),
        None if repos is None else tuple(r.strip() for r in repos),
    )
    return _Entry(principal, sha, None if expires is None else expires.timestamp())


def _secret_digest(where: str, token: Any, token_sha256: Any) -> bytes:
    if (token is None) == (token_sha256 is None):
        raise ConfigError(f"{where}: give exactly one of token and token_sha256")
    if token is not None:
        if not isinstance(token, str) or not MIN_TOKEN_CHARS <= len(token) <= MAX_TOKEN_CHARS:
            raise ConfigError(
                f"{where}: token must be {MIN_TOKEN_CHARS}-{MAX_TOKEN_CHARS} characters"
            )
        return digest(token)
    if not isinstance(token_sha256, str) or not _HEX64.match(token_sha256.lower()):
        raise ConfigError(f"{where}: token_sha256 must be 64 hexadecimal digits")
    return bytes.fromhex(token_sha256)


def parse_tokens(text: str) -> list[_Entry]:
    """The entries of a tokens file's text; a :class:`ConfigError` names the first problem
    (never a token's value)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {str(exc)[:200]}") from exc
    unknown = sorted(set(doc) - {"tokens"})
    if unknown:
        raise ConfigError(f"unknown top-level keys {unknown} (expected [[tokens]] tables)")
    raw = doc.get("tokens", [])
    if not isinstance(raw, list):
        raise ConfigError("tokens must be an array of tables ([[tokens]])")
    entries = [_entry(n, item) for n, item in enumerate(raw, start=1)]
    names = [e.principal.name for e in entries]
    if len(set(names)) != len(names):
        raise ConfigError("two tokens have the same name")
    if len({e.sha256 for e in entries}) != len(entries):
        raise ConfigError("two entries have the same token")
    return entries


def read_tokens_file(path: Path) -> list[_Entry]:
    """Parse ``path``, refusing what is not a small regular file."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"SEMGRAPH_API_TOKENS_FILE: cannot read {path}: {exc.strerror}") from exc
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(f"SEMGRAPH_API_TOKENS_FILE: {path} is over {MAX_FILE_BYTES} bytes")
    try:
        return parse_tokens(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"SEMGRAPH_API_TOKENS_FILE: {path}: not UTF-8") from exc
    except ConfigError as exc:
        raise ConfigError(f"SEMGRAPH_API_TOKENS_FILE: {path}: {exc.message}") from exc


def _stamp(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class TokenTable:
    """The configured tokens: ``SEMGRAPH_API_TOKEN`` (every scope) and the tokens file."""

    def __init__(self, settings: Settings, *, clock: Any = time.monotonic) -> None:
        self._path = settings.api_tokens_file
        self._clock = clock
        self._lock = threading.Lock()
        self._fixed: list[_Entry] = []
        if settings.api_token:
            self._fixed.append(
                _Entry(Principal("api_token", frozenset(SCOPES)), digest(settings.api_token), None)
            )
        self._file: list[_Entry] = []
        self._stamp: tuple[int, int, int, int] | None = None
        self._checked = 0.0
        if self._path is not None:
            self._stamp = _stamp(self._path)
            self._file = read_tokens_file(self._path)  # at start a bad file is fatal
            self._checked = clock()

    @property
    def configured(self) -> bool:
        """Whether any token is configured (a tokens file counts even while empty)."""
        return bool(self._fixed) or self._path is not None

    def __len__(self) -> int:
        return len(self._fixed) + len(self._file)

    def reload(self) -> bool:
        """Reread the file; on a problem keep the previous tokens and log it. True: reread."""
        if self._path is None:
            return False
        stamp = _stamp(self._path)
        try:
            entries = read_tokens_file(self._path)
        except ConfigError as exc:
            event(
                log,
                logging.ERROR,
                "api_tokens_reload_failed",
                f"{exc}; keeping the previous tokens",
            )
            with self._lock:
                self._stamp = stamp  # not again until it changes
            return False
        with self._lock:
            self._file, self._stamp = entries, stamp
        event(log, logging.INFO, "api_tokens_reloaded", f"{len(entries)} tokens from {self._path}")
        return True

    def _maybe_reload(self) -> None:
        if self._path is None:
            return
        now = self._clock()
        if now - self._checked < RECHECK_S:
            return
        self._checked = now
        if _stamp(self._path) != self._stamp:
            self.reload()

    def lookup(self, token: str, *, now: float | None = None) -> Principal | None:
        """The principal of ``token``, None when it is unknown or expired. Every entry is
        compared (constant time for a given table size)."""
        self._maybe_reload()
        given = digest(token)
        with self._lock:
            entries = [*self._fixed, *self._file]
        found: _Entry | None = None
        for entry in entries:
            if hmac.compare_digest(given, entry.sha256):
                found = entry
        if found is None:
            return None
        wall = time.time() if now is None else now
        if found.expires_at is not None and found.expires_at <= wall:
            return None
        return found.principal
