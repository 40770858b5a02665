"""The parsing of ``git log -z --no-merges -M --name-status`` output (pure: bytes in,
:class:`Commit` records out); :mod:`semgraph.indexer.githistory` runs git and says what is
kept and why.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from semgraph.config import Settings
from semgraph.search.history import SUBJECT_CHARS, Commit

HEADER = b"\x01"
STATUS_LETTERS = frozenset(b"ACDMRTUXB")


@dataclass(frozen=True)
class Limits:
    per_file: int
    body_chars: int
    max_commits: int
    max_files_per_commit: int

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        return cls(
            settings.history_commits_per_file,
            settings.history_body_chars,
            settings.history_max_commits,
            settings.history_max_files_per_commit,
        )

    @property
    def token_bytes(self) -> int:
        """The bound of one token: a message's subject and body in UTF-8, or a path."""
        return max(65_536, 4 * (SUBJECT_CHARS + self.body_chars) + 1024)


def tokens(chunks: Iterable[bytes], max_bytes: int) -> Iterator[bytes]:
    """The NUL-terminated tokens of a byte stream, each cut to ``max_bytes`` (the rest of
    a longer token is dropped as it streams past, never held)."""
    current = bytearray()
    for chunk in chunks:
        start = 0
        while True:
            end = chunk.find(b"\0", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            room = max_bytes - len(current)
            if room > 0:
                current += piece[:room]
            if end < 0:
                break
            yield bytes(current)
            current.clear()
            start = end + 1
    if current:
        yield bytes(current)


def split_message(raw: bytes, body_chars: int) -> tuple[str, str]:
    """The subject (first line, bounded) and the body (the rest, bounded) of a message."""
    text = raw.decode("utf-8", "replace").replace("\r\n", "\n").strip()
    subject, _, body = text.partition("\n")
    return subject.strip()[:SUBJECT_CHARS], body.strip()[:body_chars]


@dataclass
class _Pending:
    sha: str
    time: int
    subject: str = ""
    body: str = ""
    paths: list[str] = field(default_factory=list)
    oversized: bool = False


class LogWalk:
    """Parses the token stream of ``git log`` (module docstring) into :class:`Commit`
    records named at the indexed commit; ``renames`` holds ``old -> current`` after."""

    def __init__(
        self, limits: Limits, *, wanted: set[str] | None = None, skip: frozenset[str] = frozenset()
    ) -> None:
        self.limits = limits
        self.wanted = wanted
        self.skip = skip
        self.renames: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self.full = 0
        self.walked = 0
        self.skipped = 0

    def current(self, path: str) -> str:
        return self.renames.get(path, path)

    def done(self) -> bool:
        """Every wanted file holds its bound (a walk over the whole history may stop)."""
        return self.wanted is not None and self.full >= len(self.wanted)

    def commits(self, stream: Iterable[bytes]) -> Iterator[Commit]:
        pending: _Pending | None = None
        it = iter(stream)
        for token in it:
            if token.startswith(b"\n"):
                token = token[1:]
            if token.startswith(HEADER):
                if pending is not None:
                    yield from self._finish(pending)
                    if self.walked >= self.limits.max_commits or self.done():
                        return
                pending = self._header(token, next(it, b""))
                continue
            if pending is None or not token or token[0] not in STATUS_LETTERS:
                continue  # nothing git writes: ignored rather than trusted
            first = os.fsdecode(next(it, b""))
            if token[:1] in (b"R", b"C"):
                second = os.fsdecode(next(it, b""))
                if token[:1] == b"R":
                    # named as the newer commits name it; older commits' old name follows
                    now = self.current(second)
                    self.renames.setdefault(first, now)
                    first = second
                else:
                    first = second
            self._add(pending, first)
        if pending is not None:
            yield from self._finish(pending)

    def _header(self, token: bytes, message: bytes) -> _Pending:
        fields = token[1:].decode("ascii", "replace").split()
        sha = fields[0] if fields else ""
        try:
            when = int(fields[1]) if len(fields) > 1 else 0
        except ValueError:
            when = 0
        subject, body = split_message(message, self.limits.body_chars)
        return _Pending(sha, when, subject, body)

    def _add(self, pending: _Pending, path: str) -> None:
        if pending.oversized:
            return
        if len(pending.paths) >= self.limits.max_files_per_commit:
            pending.oversized = True
            pending.paths = []
            return
        pending.paths.append(path)

    def _finish(self, pending: _Pending) -> Iterator[Commit]:
        self.walked += 1
        if pending.oversized or pending.sha in self.skip or not pending.sha:
            self.skipped += 1
            return
        kept: list[str] = []
        for path in dict.fromkeys(self.current(p) for p in pending.paths):
            if self.wanted is not None and path not in self.wanted:
                continue
            count = self.counts.get(path, 0)
            if count >= self.limits.per_file:
                continue
            self.counts[path] = count + 1
            self.full += count + 1 == self.limits.per_file
            kept.append(path)
        if kept:
            yield Commit(pending.sha, pending.time, pending.subject, pending.body, tuple(kept))
