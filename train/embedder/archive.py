"""Members of a downloaded package archive, read in memory, never written to disk.

Nothing is extracted: each member is read into memory when it is wanted, so a member's name
can never place a file anywhere (``../../x``, ``/etc/x``). Members that are unsafe or not
plain files are skipped with a reason (:class:`Skip`): a path that leaves the archive, a
symlink or hard link, a device or FIFO, a member over the size limit (read no further than
the limit, so a lying zip header costs nothing). An archive whose declared contents exceed
the total limit or the member count (a tarbomb, a zip bomb) stops with
:class:`ArchiveRefused`, and the package is skipped.
"""

from __future__ import annotations

import stat
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_MEMBER_BYTES = 1_000_000
MAX_TOTAL_BYTES = 1_500_000_000  # declared, uncompressed, over every member
MAX_MEMBERS = 200_000


class ArchiveRefused(Exception):
    """The archive as a whole is refused (bomb, corrupt, unknown format)."""


@dataclass(frozen=True)
class Member:
    path: str  # relative to the archive's root, posix
    data: bytes


@dataclass(frozen=True)
class Skip:
    path: str
    reason: str  # unsafe_path | link | special | too_large


@dataclass(frozen=True)
class Limits:
    member_bytes: int = MAX_MEMBER_BYTES
    total_bytes: int = MAX_TOTAL_BYTES
    members: int = MAX_MEMBERS


def safe_relative(name: str, strip: str) -> str | None:
    """``name`` relative to the archive root, or None when it would leave the root.

    ``strip``: ``"first"`` drops the first component (an sdist's ``pkg-1.0/``, npm's
    ``package/``), ``"go"`` drops everything through the ``module@version`` component, and
    ``"none"`` keeps the name whole (wheels, jars)."""
    if "\x00" in name or "\\" in name:
        return None
    pure = PurePosixPath(name)
    if pure.is_absolute() or any(part == ".." for part in pure.parts):
        return None
    parts = [p for p in pure.parts if p not in {"", "."}]
    if strip == "first":
        parts = parts[1:]
    elif strip == "go":
        at = next((i for i, p in enumerate(parts) if "@" in p), None)
        parts = [] if at is None else parts[at + 1 :]
    return "/".join(parts) if parts else None


def _check_totals(count: int, total: int, limits: Limits) -> None:
    if count > limits.members:
        raise ArchiveRefused(f"more than {limits.members} members")
    if total > limits.total_bytes:
        raise ArchiveRefused(f"declared contents over {limits.total_bytes} bytes")


def _open_tar(path: Path) -> tarfile.TarFile:
    try:
        return tarfile.open(path, mode="r:*")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ArchiveRefused(f"unreadable tar: {exc}") from exc


def _tar_members(
    path: Path, want: Callable[[str], bool], strip: str, limits: Limits
) -> Iterator[Member | Skip]:
    count = total = 0
    with _open_tar(path) as tf:
        while True:
            try:
                info = tf.next()
            except (tarfile.TarError, OSError, EOFError) as exc:
                raise ArchiveRefused(f"corrupt tar: {exc}") from exc
            if info is None:
                return
            count, total = count + 1, total + max(info.size, 0)
            _check_totals(count, total, limits)
            rel = safe_relative(info.name, strip)
            if rel is None:
                if info.name.strip("./") and not info.isdir():
                    yield Skip(info.name[:200], "unsafe_path")
                continue
            if info.isdir() or not want(rel):
                continue
            if info.issym() or info.islnk():
                yield Skip(rel, "link")
            elif not info.isfile():
                yield Skip(rel, "special")
            elif info.size > limits.member_bytes:
                yield Skip(rel, "too_large")
            else:
                handle = tf.extractfile(info)
                data = handle.read(limits.member_bytes + 1) if handle is not None else b""
                if len(data) > limits.member_bytes:
                    yield Skip(rel, "too_large")
                else:
                    yield Member(rel, data)


def _zip_members(
    path: Path, want: Callable[[str], bool], strip: str, limits: Limits
) -> Iterator[Member | Skip]:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ArchiveRefused(f"unreadable zip: {exc}") from exc
    with zf:
        infos = zf.infolist()
        _check_totals(len(infos), sum(max(i.file_size, 0) for i in infos), limits)
        for info in infos:
            rel = safe_relative(info.filename, strip)
            if rel is None:
                if info.filename.strip("./") and not info.is_dir():
                    yield Skip(info.filename[:200], "unsafe_path")
                continue
            if info.is_dir() or not want(rel):
                continue
            kind = stat.S_IFMT(info.external_attr >> 16)  # 0: no Unix type recorded
            if kind == stat.S_IFLNK:
                yield Skip(rel, "link")
            elif kind not in (0, stat.S_IFREG):
                yield Skip(rel, "special")
            elif info.file_size > limits.member_bytes:
                yield Skip(rel, "too_large")
            else:
                try:
                    with zf.open(info) as handle:
                        data = handle.read(limits.member_bytes + 1)
                except (zipfile.BadZipFile, OSError, NotImplementedError) as exc:
                    raise ArchiveRefused(f"corrupt zip member {rel}: {exc}") from exc
                if len(data) > limits.member_bytes:
                    yield Skip(rel, "too_large")
                else:
                    yield Member(rel, data)


def members(
    path: Path, want: Callable[[str], bool], strip: str, limits: Limits | None = None
) -> Iterator[Member | Skip]:
    """The wanted members of the archive at ``path`` (tar of any compression, zip, wheel or
    jar), in archive order; ``want`` sees each path relative to the root."""
    limits = limits or Limits()
    if zipfile.is_zipfile(path):
        return _zip_members(path, want, strip, limits)
    return _tar_members(path, want, strip, limits)
