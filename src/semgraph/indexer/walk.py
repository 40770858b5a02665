"""The file walk: which files of a workspace are indexed, and why each other one is not.

In a git working tree the candidates are the tracked files (``git ls-files``), so
``.gitignore`` is honoured the way git does; elsewhere the tree is walked and every
``.gitignore`` on the way applies. Then, in order, each candidate may be skipped as:

* ``vendored`` / ``generated``: default excludes (``vendor/``, ``node_modules/``, ``dist/``,
  minified bundles, lock files ...), then ``ignored`` by the root ``.semgraphignore``
  (gitignore syntax);
* ``symlink``: every symlink (the detail says whether it leaves the repository; targets
  inside the repository are indexed at their own path), ``unreadable`` (not a regular file,
  a name that is not UTF-8, an I/O error);
* ``empty``, ``too_large`` (over ``max_file_bytes``), ``binary`` (a NUL byte in the first
  8000 bytes, git's rule), ``generated`` (a minified line in a .js/.css file).

Entries come out sorted by path; nothing is held beyond the path list.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatch, translate
from pathlib import Path, PurePosixPath

import pathspec

from semgraph.errors import JobError
from semgraph.model import SkippedFile, SkipReason

VENDORED_DIRS = frozenset(
    {
        "vendor",
        "node_modules",
        "third_party",
        "thirdparty",
        "bower_components",
        "Pods",
        ".venv",
        "venv",
        "site-packages",
        "external",
    }
)
GENERATED_DIRS = frozenset({"dist", "build", "target", "out", "__pycache__", ".next", ".nuxt"})
GENERATED_NAMES = (
    "*.min.js",
    "*.min.css",
    "*.min.mjs",
    "*.bundle.js",
    "*.map",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "Cargo.lock",
    "go.sum",
    "poetry.lock",
    "Gemfile.lock",
    "composer.lock",
    "*.pb.go",
    "*_pb2.py",
    "*_pb2_grpc.py",
    "*.generated.*",
)
# every GENERATED_NAMES pattern at once (fnmatch's own translation: the same matches)
_ANY_GENERATED_NAME = re.compile("|".join(f"(?:{translate(p)})" for p in GENERATED_NAMES))
MINIFIABLE = (".js", ".mjs", ".cjs", ".css")
SAMPLE_BYTES = 8000


@dataclass(frozen=True, slots=True)
class WalkEntry:
    path: str  # repository-relative, posix
    size_bytes: int


def _git_files(root: Path, timeout_s: float) -> list[bytes]:
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--full-name"],
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise JobError(f"cannot list the files of {root}: {exc}") from exc
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip()[:500]
        raise JobError(f"cannot list the files of {root}: {detail}")
    return sorted({p for p in proc.stdout.split(b"\0") if p})


def _load_spec(path: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        lines = path.read_text("utf-8", "replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(specs: dict[str, pathspec.GitIgnoreSpec], rel_path: str, *, is_dir: bool) -> bool:
    for base, spec in specs.items():
        if rel_path.startswith(base):
            sub = rel_path[len(base) :] + ("/" if is_dir else "")
            if spec.match_file(sub):
                return True
    return False


def _tree_files(root: Path) -> tuple[list[bytes], list[SkippedFile]]:
    """Files under ``root`` honouring every .gitignore; pruned directories are recorded."""
    files: list[bytes] = []
    skipped: list[SkippedFile] = []
    specs: dict[str, pathspec.GitIgnoreSpec] = {}
    root_b = os.fsencode(root)
    for dirpath, dirnames, filenames in os.walk(root_b, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root_b)
        rel = "" if rel_dir == b"." else os.fsdecode(rel_dir).replace(os.sep, "/") + "/"
        spec = _load_spec(Path(os.fsdecode(dirpath)) / ".gitignore")
        if spec is not None:
            specs[rel] = spec

        keep = []
        for d in sorted(dirnames):
            name = os.fsdecode(d)
            rel_path = rel + name
            full = os.path.join(dirpath, d)
            if name == ".git":
                continue
            if os.path.islink(full):
                files.append(os.fsencode(rel_path))  # recorded as a symlink by the walk
            elif _ignored(specs, rel_path, is_dir=True):
                skipped.append(SkippedFile(rel_path + "/", SkipReason.IGNORED, "directory"))
            else:
                keep.append(d)
        dirnames[:] = keep
        for f in filenames:
            rel_path = rel + os.fsdecode(f)
            if _ignored(specs, rel_path, is_dir=False):
                skipped.append(SkippedFile(rel_path, SkipReason.IGNORED, ".gitignore"))
            else:
                files.append(os.fsencode(rel_path))
    return sorted(files), skipped


def default_exclude(path: str) -> tuple[str, str] | None:
    """``(reason, detail)`` when a default exclude applies to ``path``."""
    parts = PurePosixPath(path).parts
    for part in parts[:-1]:
        if part in VENDORED_DIRS:
            return SkipReason.VENDORED, f"under {part}/"
        if part in GENERATED_DIRS:
            return SkipReason.GENERATED, f"under {part}/"
    name = parts[-1] if parts else path
    if _ANY_GENERATED_NAME.match(name) is None:  # one regex for the common case
        return None
    for pattern in GENERATED_NAMES:
        if fnmatch(name, pattern):
            return SkipReason.GENERATED, f"matches {pattern}"
    return None


def _symlink_detail(root: Path, full: Path) -> str:
    try:
        target = os.readlink(full)
        resolved = full.resolve(strict=False)
    except (OSError, RuntimeError):
        return "symlink that cannot be resolved"
    inside = resolved == root or root in resolved.parents
    where = "inside the repository" if inside else "leaving the repository"
    return f"symlink {where} -> {target[:200]}"


def _looks_minified(sample: bytes) -> bool:
    lines = sample.split(b"\n")
    return (
        len(sample) >= 2000
        and max(len(line) for line in lines) > 1000
        and (len(sample) / len(lines) > 300)
    )


def _classify(root: Path, path: str, max_file_bytes: int) -> WalkEntry | SkippedFile:
    full = root / path
    try:
        st = os.lstat(full)
    except OSError as exc:
        return SkippedFile(path, SkipReason.UNREADABLE, f"cannot stat: {exc.strerror}")
    if stat.S_ISLNK(st.st_mode):
        return SkippedFile(path, SkipReason.SYMLINK, _symlink_detail(root, full))
    if not stat.S_ISREG(st.st_mode):
        return SkippedFile(path, SkipReason.UNREADABLE, "not a regular file (submodule?)")
    if st.st_size == 0:
        return SkippedFile(path, SkipReason.EMPTY)
    if st.st_size > max_file_bytes:
        return SkippedFile(
            path, SkipReason.TOO_LARGE, f"{st.st_size} bytes > max_file_bytes {max_file_bytes}"
        )
    try:
        with open(full, "rb") as fh:
            sample = fh.read(SAMPLE_BYTES)
    except OSError as exc:
        return SkippedFile(path, SkipReason.UNREADABLE, f"cannot read: {exc.strerror}")
    if b"\0" in sample:
        return SkippedFile(path, SkipReason.BINARY, "NUL byte in the first 8000 bytes")
    if path.endswith(MINIFIABLE) and _looks_minified(sample):
        return SkippedFile(path, SkipReason.GENERATED, "minified")
    return WalkEntry(path=path, size_bytes=st.st_size)


def walk(
    root: Path,
    *,
    max_file_bytes: int,
    git_timeout_s: float = 600.0,
    on_total: Callable[[int], None] | None = None,
    known: Callable[[str], bool] | None = None,
) -> Iterator[WalkEntry | SkippedFile]:
    """Every candidate file of ``root``, either to index (:class:`WalkEntry`) or skipped.
    ``on_total`` is told how many candidates there are before the first is yielded.

    A candidate past the excludes for which ``known(path)`` is true (the caller already
    holds the result of exactly these bytes: an earlier walk classified them) is yielded as
    a :class:`WalkEntry` without being stat'ed or read (``size_bytes`` -1)."""
    root = Path(root).resolve()
    pre_skipped: list[SkippedFile] = []
    if (root / ".git").exists():
        raw = _git_files(root, git_timeout_s)
    else:
        raw, pre_skipped = _tree_files(root)
    if on_total is not None:
        on_total(len(raw) + len(pre_skipped))
    yield from pre_skipped
    semgraphignore = _load_spec(root / ".semgraphignore")
    for raw_path in raw:
        try:
            path = raw_path.decode("utf-8")
        except UnicodeDecodeError:
            yield SkippedFile(
                raw_path.decode("utf-8", "replace"), SkipReason.UNREADABLE, "name is not UTF-8"
            )
            continue
        excluded = default_exclude(path)
        if excluded is not None:
            yield SkippedFile(path, excluded[0], excluded[1])
        elif semgraphignore is not None and semgraphignore.match_file(path):
            yield SkippedFile(path, SkipReason.IGNORED, ".semgraphignore")
        elif known is not None and known(path):
            yield WalkEntry(path=path, size_bytes=-1)
        else:
            yield _classify(root, path, max_file_bytes)
