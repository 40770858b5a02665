"""One downloaded package read: its licence, then the source files worth pairing.

The licence comes from the package's own metadata (``licences``): a wheel's ``METADATA`` or
an sdist's ``PKG-INFO``, npm's ``package.json``, a Maven POM (and its parents'), and the
LICENSE file's text where the metadata says nothing (always, for a Go module).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from train.embedder import archive, licences, sourcefiles
from train.embedder.heldout import HeldOut

_LICENCE_NAMES = ("license", "licence", "copying")


def strip_mode(registry: str, archive_path: Path) -> str:
    """How member names are made relative to the package root (:func:`archive.safe_relative`)."""
    if registry == "go":
        return "go"
    if registry == "maven" or archive_path.name.endswith(".whl"):
        return "none"
    return "first"


def _is_licence_file(path: str) -> bool:
    p = PurePosixPath(path)
    top = len(p.parts) == 1 or (len(p.parts) == 2 and p.parts[0].endswith(".dist-info"))
    top = top or (len(p.parts) == 3 and p.parts[1] == "licenses")  # dist-info/licenses/
    top = top or (len(p.parts) == 2 and p.parts[0] == "META-INF")
    return top and p.name.lower().startswith(_LICENCE_NAMES)


def _is_metadata(registry: str, path: str) -> bool:
    p = PurePosixPath(path)
    if registry == "pypi":
        return path == "PKG-INFO" or (
            len(p.parts) == 2 and p.parts[0].endswith(".dist-info") and p.name == "METADATA"
        )
    return registry == "npm" and path == "package.json"


@dataclass(frozen=True)
class Licence:
    spdx: str | None  # None: unreadable
    source: str  # where it was read: "PKG-INFO", "package.json", "LICENSE", "pom", ...

    @property
    def allowed(self) -> bool:
        return licences.allowed(self.spdx)


def _from_metadata(registry: str, path: str, data: bytes) -> str | None:
    text = data.decode("utf-8", "replace")
    if registry == "pypi":
        return licences.from_pkg_info(text)
    try:
        meta = json.loads(text)
    except ValueError:
        return None
    return licences.from_package_json(meta) if isinstance(meta, dict) else None


def read_licence(registry: str, archive_path: Path, poms: tuple[Path, ...]) -> Licence:
    """The package's licence as its metadata declares it (ArchiveRefused propagates)."""
    for pom in poms:
        spdx = licences.from_pom(pom.read_text(errors="replace"))
        if spdx is not None:
            return Licence(spdx, f"pom:{pom.name.rsplit('--', 1)[-1]}")
    meta: list[tuple[str, bytes]] = []
    texts: list[tuple[str, bytes]] = []
    mode = strip_mode(registry, archive_path)

    def want(path: str) -> bool:
        return _is_metadata(registry, path) or _is_licence_file(path)

    for item in archive.members(archive_path, want, mode):
        if isinstance(item, archive.Member):
            (meta if _is_metadata(registry, item.path) else texts).append((item.path, item.data))
    for path, data in sorted(meta):
        spdx = _from_metadata(registry, path, data)
        if spdx is not None:
            return Licence(spdx, PurePosixPath(path).name)
    for path, data in sorted(texts, key=lambda t: (t[0].count("/"), t[0])):
        spdx = licences.from_licence_text(data.decode("utf-8", "replace"))
        if spdx is not None:
            return Licence(spdx, path)
    return Licence(None, "none found")


def source_files(
    registry: str, archive_path: Path, heldout: HeldOut, skipped: Counter[str]
) -> Iterator[tuple[str, bytes]]:
    """``(path, bytes)`` of each file to pair, in archive order; each skip is counted in
    ``skipped`` by reason (ArchiveRefused propagates)."""

    def want(path: str) -> bool:
        language, reason = sourcefiles.path_reason(path)
        if language is None:
            if reason is not None:
                skipped[reason] += 1
            return False
        if heldout.blocks_path(path) is not None:
            skipped["held_out_copy"] += 1
            return False
        return True

    for item in archive.members(archive_path, want, strip_mode(registry, archive_path)):
        if isinstance(item, archive.Skip):
            skipped[item.reason] += 1
            continue
        reason = sourcefiles.content_reason(item.data)
        if reason is not None:
            skipped[reason] += 1
            continue
        yield item.path, item.data
