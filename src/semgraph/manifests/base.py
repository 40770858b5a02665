"""The types and helpers every manifest reader shares (:mod:`semgraph.manifests`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: a manifest over this size is skipped (and recorded as an error)
MAX_MANIFEST_BYTES = 1_000_000
#: at most this many dependencies or modules are kept from one manifest
MAX_ENTRIES = 2_000
#: the longest name or spec kept
MAX_NAME_CHARS = 300

PYPI, GO, NPM, CARGO, MAVEN, NUGET, COMPOSER, GEM = (
    "pypi",
    "go",
    "npm",
    "cargo",
    "maven",
    "nuget",
    "composer",
    "gem",
)


@dataclass(frozen=True, slots=True)
class Provided:
    ecosystem: str
    name: str
    manifest: str  # the file it was read from
    modules: tuple[str, ...] = ()
    exports: tuple[str, ...] = ()  # npm: ``subpath<TAB>file`` of each entry point


@dataclass(frozen=True, slots=True)
class Dependency:
    ecosystem: str
    name: str
    spec: str  # the version constraint as written ("" when none)
    manifest: str


@dataclass(slots=True)
class Identity:
    provides: list[Provided] = field(default_factory=list)
    depends: list[Dependency] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # "path: why"

    def merged(self) -> Identity:
        """Duplicates removed (first kept), sorted: the same manifests give the same rows."""
        seen_p: dict[tuple[str, str], Provided] = {}
        for p in self.provides:
            seen_p.setdefault((p.ecosystem, p.name), p)
        seen_d: dict[tuple[str, str], Dependency] = {}
        provided = set(seen_p)
        for d in self.depends:
            if (d.ecosystem, d.name) not in provided:  # a package never depends on itself
                seen_d.setdefault((d.ecosystem, d.name), d)
        return Identity(
            [seen_p[k] for k in sorted(seen_p)],
            [seen_d[k] for k in sorted(seen_d)],
            sorted(self.errors),
        )


class ManifestError(ValueError):
    """A manifest that cannot be read; the message says why."""


_PEP503 = re.compile(r"[-_.]+")
_NAME_OK = re.compile(r"^[A-Za-z0-9@][A-Za-z0-9._\-/@:~+]*$")


def pep503(name: str) -> str:
    return _PEP503.sub("-", name).lower()


def clean_name(name: object) -> str | None:
    """``name`` when it is a plausible package name, else None (never raises)."""
    if not isinstance(name, str):
        return None
    name = name.strip()
    if not name or len(name) > MAX_NAME_CHARS or not _NAME_OK.match(name):
        return None
    return name


def clean_spec(spec: object) -> str:
    if not isinstance(spec, str):
        return ""
    return " ".join(spec.split())[:MAX_NAME_CHARS]


def text_of(path: str, data: bytes) -> str:
    if len(data) > MAX_MANIFEST_BYTES:
        raise ManifestError(f"over {MAX_MANIFEST_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"not UTF-8 ({exc.reason})") from exc
