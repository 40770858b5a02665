"""Each file's commit messages, read from the bare mirror in ONE ``git log`` pass.

``git log -z --no-merges -M --name-status`` walks the history newest first, up to the
indexed commit (never a commit after it) or over ``old..new`` for a push, at most
``history_max_commits`` commits (git stops there). The stream is cut into NUL-separated
tokens as it is read, each token bounded (a 10 MB message costs its bound, not 10 MB), and
parsed positionally (:mod:`semgraph.indexer.gitlog`): a header, the message, then
``status path`` (``R``/``C``: two paths) entries, so no message or path can pass for a
header. What is kept:

- merges are skipped (``--no-merges``): their message says "merge branch x", and the
  commits they bring are walked themselves;
- a commit touching more than ``history_max_files_per_commit`` files (an import, a mass
  reformat, a shallow mirror's boundary) says little about any one file: skipped, as is a
  shallow mirror's boundary commit (its diff is against nothing);
- renames are followed: the walk keeps ``old -> current`` for every rename it has passed,
  so an older commit's message is attributed to the file's name at the indexed commit;
- each file keeps its newest ``history_commits_per_file`` commits; a walk over the whole
  history stops once every wanted file is full;
- messages are decoded as UTF-8 with replacement (a commit that declares another encoding
  is re-encoded by git), paths as the file walk decodes them (``os.fsdecode``).
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from semgraph.config import Settings
from semgraph.errors import CheckoutError
from semgraph.indexer.checkout import _GIT_ENV, _GIT_SAFE, git
from semgraph.indexer.gitlog import Limits, LogWalk, tokens
from semgraph.logs import event
from semgraph.search.history import Appended, Commit, HistorySource, history_fingerprint

log = logging.getLogger(__name__)

READ_BYTES = 1 << 16
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def shallow_boundary(git_dir: Path) -> frozenset[str]:
    """The boundary commits of a shallow repository (empty for a full one)."""
    try:
        return frozenset((git_dir / "shallow").read_text("ascii", "replace").split())
    except OSError:
        return frozenset()


def is_ancestor(git_dir: Path, old: str, new: str, timeout_s: float) -> bool:
    """Whether ``old`` is an ancestor of ``new`` (False when git cannot tell: an unknown
    commit after a force-push, a shallow cut)."""
    try:
        base = git(
            ["--git-dir", str(git_dir), "merge-base", "--end-of-options", old, new],
            timeout_s=timeout_s,
            what="history merge base",
        )
    except CheckoutError:
        return False
    return base.stdout.strip() == old


def log_command(git_dir: Path, rev: str, max_commits: int) -> list[str]:
    return [
        "git",
        *_GIT_SAFE,
        "--git-dir",
        str(git_dir),
        "log",
        "-z",
        "--no-merges",
        "-M",
        "--name-status",
        "--encoding=UTF-8",
        "--format=%x01%H %ct%x00%B",
        f"--max-count={max_commits}",
        "--end-of-options",
        rev,
        "--",
    ]


def read_history(
    git_dir: Path,
    rev: str,
    limits: Limits,
    *,
    wanted: set[str] | None,
    timeout_s: float,
    on_done: Callable[[LogWalk], None] | None = None,
) -> Iterator[Commit]:
    """The commits of ``rev`` (a commit, or ``old..new``) as :class:`LogWalk` keeps them,
    read as git writes them; git is killed when the walk stops early or is abandoned, or
    after ``timeout_s`` (:class:`CheckoutError`). ``on_done`` gets the walk at the end."""
    if limits.per_file <= 0:
        return
    walk = LogWalk(limits, wanted=wanted, skip=shallow_boundary(git_dir))
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(
            log_command(git_dir, rev, limits.max_commits),
            stdout=subprocess.PIPE,
            stderr=errors,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **_GIT_ENV},
        )
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            proc.kill()

        timer = threading.Timer(timeout_s, expire)
        timer.start()
        stopped_early = False
        out = proc.stdout
        assert out is not None
        try:
            fd = out.fileno()
            chunks = iter(lambda: os.read(fd, READ_BYTES), b"")
            yield from walk.commits(tokens(chunks, limits.token_bytes))
            stopped_early = walk.done() or walk.walked >= limits.max_commits
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
            rc = proc.wait()
            out.close()
        if expired.is_set():
            raise CheckoutError(f"git log {rev[:100]}: timed out after {timeout_s:g}s")
        if rc != 0 and not stopped_early:
            errors.seek(0)
            detail = " ".join(errors.read()[-800:].decode("utf-8", "replace").split())
            raise CheckoutError(f"git log {rev[:100]}: {detail or f'exit {rc}'}")
    event(
        log,
        logging.INFO,
        "history_read",
        rev=rev[:100],
        walked=walk.walked,
        skipped=walk.skipped,
        files=len(walk.counts),
    )
    if on_done is not None:
        on_done(walk)


def history_source(settings: Settings, git_dir: Path, commit: str) -> HistorySource | None:
    """The run's history walks over ``git_dir`` (None when history is off)."""
    limits = Limits.of(settings)
    if limits.per_file <= 0:
        return None
    timeout = settings.git_timeout_s

    def full(wanted: set[str]) -> Iterator[Commit]:
        return read_history(git_dir, commit, limits, wanted=wanted, timeout_s=timeout)

    def since(old: str, wanted: set[str]) -> Appended | None:
        if not _SHA.fullmatch(old) or not is_ancestor(git_dir, old, commit, timeout):
            event(log, logging.INFO, "history_rebuilt", f"{old[:12]} is not an ancestor")
            return None
        done: list[LogWalk] = []
        commits = read_history(
            git_dir,
            f"{old}..{commit}",
            limits,
            wanted=wanted,
            timeout_s=timeout,
            on_done=done.append,
        )
        return Appended(commits, lambda: done[0].renames if done else {})

    return HistorySource(commit, history_fingerprint(settings), full, since)
