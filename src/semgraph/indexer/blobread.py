"""A file's bytes at a published blob, read from the repository's bare mirror on whichever
host asks (nothing a reader needs lives on the disk of the host that indexed).

The graph records every file's git blob id (``File.blob_sha``) and the repository's source
(``Repository.url``). Any host can therefore read a published file: ``git cat-file`` in its
own mirror of the repository, after fetching the mirror (or cloning it, the first time) when
it lacks the blob. The mirror is the one the worker keeps (:func:`sync_mirror`, locked while
it is fetched), so a host that runs jobs reads without fetching. A blob id the source no
longer has (history rewritten, the repository gone) or a file git converted at checkout (its
recorded id is of the converted bytes: ``core.autocrlf``, ``eol`` attributes) is a miss,
never other bytes: the bytes returned always hash to the id asked for.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from semgraph.config import Settings
from semgraph.errors import CheckoutError
from semgraph.indexer.checkout import sync_mirror
from semgraph.indexer.extract import blob_sha

_BLOB_ID = re.compile(r"^[0-9a-f]{40}$")
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}


def _cat(mirror: Path, blob: str, max_bytes: int, timeout_s: float) -> bytes | None:
    """The blob's bytes from ``mirror`` (None: no such blob there, or larger than
    ``max_bytes``)."""
    if not (mirror / "HEAD").is_file():
        return None
    base = ["git", "-c", "protocol.ext.allow=never", "--git-dir", str(mirror), "cat-file"]
    env = {**os.environ, **_GIT_ENV}
    try:
        size = subprocess.run(
            [*base, "-s", blob], capture_output=True, timeout=timeout_s, env=env, check=False
        )
        if size.returncode != 0 or int(size.stdout.strip() or b"-1") > max_bytes:
            return None
        proc = subprocess.run(
            [*base, "blob", blob], capture_output=True, timeout=timeout_s, env=env, check=False
        )
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0 or blob_sha(proc.stdout) != blob:
        return None
    return proc.stdout


def read_blob(
    settings: Settings, url: str, repo_key: str, blob: str, *, fetch: bool = True
) -> bytes | None:
    """The bytes of ``blob`` of repository ``repo_key`` (source ``url``): from this host's
    mirror, fetched first (cloned when there is none) when it lacks the blob and ``fetch``.
    None when the blob is not a git blob id, over ``max_file_bytes``, or not in the source;
    a source that cannot be fetched raises :class:`CheckoutError`."""
    if not _BLOB_ID.match(blob):
        return None
    mirror = settings.mirrors_path / f"{repo_key}.git"
    limit, timeout = settings.max_file_bytes, settings.git_timeout_s
    data = _cat(mirror, blob, limit, timeout)
    if data is None and fetch:
        if not url:
            raise CheckoutError(f"repository {repo_key} has no recorded source to fetch")
        data = _cat(sync_mirror(settings, url, repo_key), blob, limit, timeout)
    return data
