"""Blob ids from git's index instead of reading and hashing every file.

After a checkout, git's index holds the blob id of every tracked file, and the work tree holds
exactly those blobs' contents unless git converted them on the way out: end-of-line
conversion (``core.autocrlf``, the ``text``/``eol`` attributes), ``ident``, smudge filters
or a ``working-tree-encoding``. Each of these needs an attribute (a tracked
``.gitattributes``, ``$GIT_DIR/info/attributes``, a global attributes file) or
``core.autocrlf``, so when none is present the index's blob id *is* the hash of the file's
bytes, and a job whose parse cache already holds ``(path, blob)`` need not read the file at
all. When any is present (or sparse checkout is on, or git cannot answer) this module says so
and the job reads and hashes every file as before: the id here is only ever a shortcut to the
same value :func:`semgraph.indexer.extract.blob_sha` computes from the bytes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REGULAR_MODES = frozenset({b"100644", b"100755"})
ATTRIBUTES = ".gitattributes"
# configuration that makes a checkout write something other than the blob's bytes, or leave
# a tracked file out of the work tree
CONVERTING_CONFIG = ("core.autocrlf", "core.attributesFile", "core.sparseCheckout")


def _git(root: Path, args: list[str], timeout_s: float) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        timeout=timeout_s,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def parse_ls_files(out: bytes) -> tuple[dict[str, str], bool]:
    """``git ls-files -z -s`` output as ``{path: blob id}`` of the regular files (mode
    100644/100755, stage 0, UTF-8 names), and whether any ``.gitattributes`` is tracked."""
    blobs: dict[str, str] = {}
    attributes = False
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        parts = meta.split(b" ")
        if raw_path.rsplit(b"/", 1)[-1] == ATTRIBUTES.encode():
            attributes = True
        if len(parts) != 3 or parts[0] not in REGULAR_MODES or parts[2] != b"0":
            continue
        try:
            blobs[raw_path.decode("utf-8")] = parts[1].decode("ascii")
        except UnicodeDecodeError:
            continue  # the walk skips such a name as unreadable
    return blobs, attributes


def _global_attributes_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "git" / "attributes"


def _converts(root: Path, timeout_s: float) -> str | None:
    """Why a checkout of ``root`` may not hold the blobs' bytes, or None."""
    for key in CONVERTING_CONFIG:
        value = _git(root, ["config", "--get", key], timeout_s).stdout.strip()
        if value and value.lower() not in {b"false", b"no", b"off", b"0"}:
            return f"{key} is set"
    info = _git(root, ["rev-parse", "--git-path", "info/attributes"], timeout_s)
    if info.returncode != 0:
        return "git cannot name the repository's info/attributes"
    info_path = Path(os.fsdecode(info.stdout.strip()))
    if not info_path.is_absolute():
        info_path = root / info_path
    if info_path.is_file():
        return f"{info_path} exists"
    if _global_attributes_file().is_file():
        return f"{_global_attributes_file()} exists"
    return None


def index_blobs(root: Path, timeout_s: float = 600.0) -> tuple[dict[str, str] | None, str]:
    """``({path: blob id}, "")`` for the regular files of the git work tree at ``root`` when
    those ids are the hashes of the files' bytes; ``(None, why not)`` otherwise."""
    root = Path(root)
    if not (root / ".git").exists():
        return None, "not a git work tree"
    try:
        why = _converts(root, timeout_s)
        if why is not None:
            return None, why
        proc = _git(root, ["ls-files", "-z", "-s", "--full-name"], timeout_s)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"git failed: {exc}"
    if proc.returncode != 0:
        return None, "git ls-files failed: " + proc.stderr.decode("utf-8", "replace")[:300]
    blobs, attributes = parse_ls_files(proc.stdout)
    if attributes:
        return None, "a .gitattributes file is tracked"
    return blobs, ""
