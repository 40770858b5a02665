"""Package identity from a repository's manifests: what the repository *provides*
(a distribution, a Go module, an npm package, a crate, Maven coordinates, ...) and what it
*depends on*, read statically from the manifest files at its root. Nothing is executed:
``setup.py`` and ``*.gemspec`` are read as text (``setup.py`` through :mod:`ast`, literals
only).

Pure: :func:`identity` takes ``{relative path: bytes}`` (the indexer reads the files) and a
listing of the root's directories (for Python's top-level packages), and returns an
:class:`Identity`. A manifest that is malformed, hostile (an XML entity declaration),
oversized or not UTF-8 is recorded in ``Identity.errors`` and contributes nothing; the others
still count.

Names are normalised per ecosystem so that a dependency and a provider meet:
Python distribution names per PEP 503 (``Foo_Bar`` -> ``foo-bar``), npm and Go as written,
Maven as ``group:artifact``, Cargo with ``_`` -> ``-``, Composer lower-case.

``modules`` of a provided package are the import roots its code is reached by (Python's
top-level packages, the Go module path, the npm name, the crate's ``snake_case`` name, a
C# root namespace, PSR-4 prefixes): the link step matches an external import against them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from semgraph.manifests import jvm, native, python
from semgraph.manifests.base import (
    MAX_ENTRIES,
    Dependency,
    Identity,
    ManifestError,
    Provided,
    text_of,
)

__all__ = ["Dependency", "Identity", "Provided", "identity", "is_manifest"]

#: the file names (at the repository's root) :func:`identity` reads, and the suffixes
MANIFEST_NAMES = frozenset(
    {
        "pyproject.toml",
        "setup.cfg",
        "setup.py",
        "go.mod",
        "package.json",
        "Cargo.toml",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "composer.json",
    }
)
MANIFEST_SUFFIXES = (".csproj", ".gemspec")


def is_manifest(path: str) -> bool:
    """A root-level file :func:`identity` reads."""
    if "/" in path:
        return False
    return path in MANIFEST_NAMES or path.endswith(MANIFEST_SUFFIXES)


def identity(
    files: Mapping[str, bytes], dirs: Iterable[str] = (), jvm_dirs: Iterable[str] = ()
) -> Identity:
    """The identity the root-level manifests in ``files`` declare. ``dirs`` lists the
    repository's directories that hold an ``__init__.py`` (``pkg``, ``src/pkg``), for
    Python's top-level packages when the manifest does not name them; ``jvm_dirs`` the JVM
    packages its sources declare (``org.apache.commons.lang3``), the modules of Maven
    coordinates (else the group id)."""
    out = Identity()
    readers = {
        "pyproject.toml": python.pyproject,
        "setup.cfg": python.setup_cfg,
        "setup.py": python.setup_py,
        "go.mod": native.go_mod,
        "package.json": native.package_json,
        "Cargo.toml": native.cargo_toml,
        "composer.json": native.composer_json,
        "pom.xml": jvm.pom_xml,
        "build.gradle": jvm.gradle,
        "build.gradle.kts": jvm.gradle,
    }
    packages = python.top_level_packages(dirs)
    jvm_packages = tuple(sorted(jvm_dirs))[:MAX_ENTRIES]
    for path in sorted(files):
        if not is_manifest(path):
            continue
        reader = readers.get(path)
        if reader is None:
            reader = jvm.csproj if path.endswith(".csproj") else jvm.gemspec
        try:
            text = text_of(path, files[path])
            jvm_reader = reader in (jvm.pom_xml, jvm.gradle)
            part = reader(path, text, jvm_packages if jvm_reader else packages)
        except ManifestError as exc:
            out.errors.append(f"{path}: {exc}")
            continue
        out.provides.extend(part.provides[:MAX_ENTRIES])
        out.depends.extend(part.depends[:MAX_ENTRIES])
        out.errors.extend(part.errors)
    return out.merged()
