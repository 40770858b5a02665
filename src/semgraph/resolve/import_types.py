"""The values import resolution passes around: the importing file and what one import
resolved to (shared by :mod:`semgraph.resolve.imports` and
:mod:`semgraph.resolve.import_handlers`)."""

from __future__ import annotations

from dataclasses import dataclass

MEMBER_SEP = "\x00"


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    status: str  # "internal" | "external" | "unresolved"
    dst_kind: str | None  # "file" | "dir" | "external" | None
    dst: str | None
    bindings: tuple[tuple[str, str, str], ...]  # (local, kind, target)


@dataclass(frozen=True, slots=True)
class ImportFile:
    path: str
    module: str
    language: str
    family: str
    dir: str


UNRESOLVED = ImportOutcome("unresolved", None, None, ())
