"""``pom.xml``, ``build.gradle`` (Groovy or Kotlin), ``*.csproj`` and ``*.gemspec``. XML is
parsed only after refusing any document type declaration (no entity can expand), and
Gradle and gemspec files are read as text by patterns, never evaluated."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from semgraph.manifests.base import (
    GEM,
    MAVEN,
    MAX_ENTRIES,
    NUGET,
    Dependency,
    Identity,
    ManifestError,
    Provided,
    clean_name,
    clean_spec,
)

_GRADLE_DEP = re.compile(
    r"""\b(?:implementation|api|compileOnly|runtimeOnly|compile|testImplementation)\s*\(?\s*
        ["']([^"':\s]+):([^"':\s]+)(?::([^"'\s]+))?["']""",
    re.VERBOSE,
)
_GRADLE_GROUP = re.compile(r"""^\s*group\s*=?\s*["']([^"']+)["']""", re.MULTILINE)
_GRADLE_NAME = re.compile(
    r"""^\s*(?:archivesBaseName|rootProject\.name)\s*=\s*["']([^"']+)["']""", re.MULTILINE
)
# a gem's name: "rack", 'rack', or what ``gem build`` writes, %q<rack> / %q{rack}
_GEM_STR = r"""(?:["']([^"'\n]+)["']|%q[<{]([^>}\n]+)[>}])"""
_GEM_NAME = re.compile(r"\.name\s*=\s*" + _GEM_STR)
_GEM_DEP = re.compile(
    r"\.add_(?:runtime_|development_)?dependency\s*\(?\s*" + _GEM_STR + r"([^\n]*)"
)


def _xml(text: str) -> ET.Element:
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise ManifestError("a document type declaration (refused: entities could expand)")
    try:
        return ET.fromstring(text)
    except ET.ParseError as exc:
        raise ManifestError(f"invalid XML: {exc}") from exc


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(el: ET.Element, name: str) -> str | None:
    for c in el:
        if _local(c.tag) == name:
            return (c.text or "").strip()
    return None


def pom_xml(path: str, text: str, found: tuple[str, ...]) -> Identity:
    root = _xml(text)
    out = Identity()
    group = _child(root, "groupId")
    if group is None:
        parent = next((c for c in root if _local(c.tag) == "parent"), None)
        group = _child(parent, "groupId") if parent is not None else None
    artifact = _child(root, "artifactId")
    name = clean_name(f"{group}:{artifact}") if group and artifact else None
    if name is not None:
        out.provides.append(Provided(MAVEN, name, path, found or (group or "",)))
    for deps in (c for c in root if _local(c.tag) == "dependencies"):
        for dep in list(deps)[:MAX_ENTRIES]:
            g, a = _child(dep, "groupId"), _child(dep, "artifactId")
            dname = clean_name(f"{g}:{a}") if g and a else None
            if dname is not None:
                out.depends.append(
                    Dependency(MAVEN, dname, clean_spec(_child(dep, "version")), path)
                )
    return out


def gradle(path: str, text: str, found: tuple[str, ...]) -> Identity:
    out = Identity()
    group, name = _GRADLE_GROUP.search(text), _GRADLE_NAME.search(text)
    if group and name:
        coords = clean_name(f"{group.group(1)}:{name.group(1)}")
        if coords is not None:
            out.provides.append(Provided(MAVEN, coords, path, found or (group.group(1)[:300],)))
    for match in list(_GRADLE_DEP.finditer(text))[:MAX_ENTRIES]:
        coords = clean_name(f"{match.group(1)}:{match.group(2)}")
        if coords is not None:
            out.depends.append(Dependency(MAVEN, coords, clean_spec(match.group(3) or ""), path))
    return out


def csproj(path: str, text: str, found: tuple[str, ...]) -> Identity:
    root = _xml(text)
    out = Identity()
    props: dict[str, str] = {}
    for el in root.iter():
        tag = _local(el.tag)
        if tag in ("PackageId", "AssemblyName", "RootNamespace") and el.text:
            props.setdefault(tag, el.text.strip())
        if tag == "PackageReference" and len(out.depends) < MAX_ENTRIES:
            name = clean_name(el.get("Include"))
            if name is not None:
                spec = el.get("Version") or _child(el, "Version") or ""
                out.depends.append(Dependency(NUGET, name.lower(), clean_spec(spec), path))
    stem = path.rsplit("/", 1)[-1][: -len(".csproj")]
    name = clean_name(props.get("PackageId") or props.get("AssemblyName") or stem)
    if name is not None:
        module = props.get("RootNamespace") or props.get("AssemblyName") or stem
        out.provides.append(Provided(NUGET, name.lower(), path, (module[:300],)))
    return out


def gemspec(path: str, text: str, found: tuple[str, ...]) -> Identity:
    out = Identity()
    match = _GEM_NAME.search(text)
    name = clean_name(match.group(1) or match.group(2)) if match else None
    if name is not None:
        out.provides.append(Provided(GEM, name, path, (name,)))
    seen: set[str] = set()  # a generated gemspec names each dependency in two branches
    for dep in list(_GEM_DEP.finditer(text))[: MAX_ENTRIES * 2]:
        dname = clean_name(dep.group(1) or dep.group(2))
        if dname is not None and dname not in seen and len(seen) < MAX_ENTRIES:
            seen.add(dname)
            specs = re.findall(r"""["']([^"']*)["']""", dep.group(3))
            out.depends.append(Dependency(GEM, dname, clean_spec(", ".join(specs)), path))
    return out
