"""Python manifests: ``pyproject.toml`` (PEP 621 ``[project]``, Poetry, setuptools'
``packages``), ``setup.cfg`` and ``setup.py``, the last read with :mod:`ast` (literal
arguments of a ``setup(...)`` call; nothing is executed)."""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from collections.abc import Iterable
from typing import Any

from semgraph.manifests.base import (
    MAX_ENTRIES,
    PYPI,
    Dependency,
    Identity,
    ManifestError,
    Provided,
    clean_name,
    clean_spec,
    pep503,
)

_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: ``setup.py`` deeper than this (nested expressions) is refused before :func:`ast.parse`
MAX_SETUP_PY_DEPTH = 200


def top_level_packages(dirs: Iterable[str]) -> tuple[str, ...]:
    """The import roots among directories holding an ``__init__.py``: ``pkg`` or
    ``src/pkg`` (``tests``, ``docs`` and the like are no package a dependent imports)."""
    roots = set()
    for d in dirs:
        parts = d.split("/")
        if parts[0] == "src" and len(parts) == 2:
            name = parts[1]
        elif len(parts) == 1:
            name = parts[0]
        else:
            continue
        if _IDENT.match(name) and name not in {"tests", "test", "docs", "examples", "src"}:
            roots.add(name)
    return tuple(sorted(roots))[:MAX_ENTRIES]


def requirement(text: object, manifest: str) -> Dependency | None:
    """One PEP 508 line (``click>=8.1; python_version>'3'``) as a dependency."""
    if not isinstance(text, str):
        return None
    match = _REQ.match(text.split(";", 1)[0])
    if match is None:
        return None
    name = clean_name(match.group(1))
    if name is None:
        return None
    return Dependency(PYPI, pep503(name), clean_spec(match.group(3)), manifest)


def _provided(name: object, manifest: str, modules: Iterable[str]) -> list[Provided]:
    clean = clean_name(name)
    if clean is None:
        return []
    mods = tuple(sorted({m for m in modules if _IDENT.match(m)}))[:MAX_ENTRIES]
    return [Provided(PYPI, pep503(clean), manifest, mods or (clean.replace("-", "_"),))]


def _packages_setting(value: object) -> list[str]:
    """setuptools' ``packages = ["a", "a.b"]``: the roots."""
    if isinstance(value, list):
        return [v.split(".")[0] for v in value if isinstance(v, str)]
    return []


def pyproject(path: str, text: str, found: tuple[str, ...]) -> Identity:
    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise ManifestError(f"invalid TOML: {exc}") from exc
    out = Identity()
    project = doc.get("project")
    tool = _table(doc, "tool")
    poetry = _table(tool, "poetry")
    setuptools = _table(tool, "setuptools")
    modules = _packages_setting(setuptools.get("packages")) or list(found)
    if isinstance(project, dict):
        out.provides += _provided(project.get("name"), path, modules)
        deps = project.get("dependencies")
        for line in deps if isinstance(deps, list) else []:
            dep = requirement(line, path)
            if dep is not None:
                out.depends.append(dep)
    if poetry and not out.provides:
        pkgs = poetry.get("packages")
        includes = (
            [p.get("include") for p in pkgs if isinstance(p, dict)]
            if isinstance(pkgs, list)
            else []
        )
        mods = [i.split("/")[0] for i in includes if isinstance(i, str)] or list(found)
        out.provides += _provided(poetry.get("name"), path, mods)
    deps = poetry.get("dependencies") if poetry else None
    for name, spec in deps.items() if isinstance(deps, dict) else []:
        clean = clean_name(name)
        if clean is None or clean.lower() == "python":
            continue
        version = spec if isinstance(spec, str) else _poetry_version(spec)
        out.depends.append(Dependency(PYPI, pep503(clean), clean_spec(version), path))
    return out


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _poetry_version(spec: Any) -> str:
    return spec.get("version", "") if isinstance(spec, dict) else ""


def setup_cfg(path: str, text: str, found: tuple[str, ...]) -> Identity:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text, source=path)
    except configparser.Error as exc:
        raise ManifestError(f"invalid INI: {str(exc).splitlines()[0]}") from exc
    out = Identity()
    if parser.has_option("metadata", "name"):
        pkgs = parser.get("options", "packages", fallback="")
        mods = [p.strip().split(".")[0] for p in pkgs.split() if p.strip() and "find:" not in p]
        out.provides += _provided(parser.get("metadata", "name"), path, mods or found)
    requires = parser.get("options", "install_requires", fallback="")
    for line in requires.splitlines():
        dep = requirement(line, path)
        if dep is not None:
            out.depends.append(dep)
    return out


def _depth_ok(text: str) -> bool:
    depth = deepest = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    return deepest <= MAX_SETUP_PY_DEPTH


def setup_py(path: str, text: str, found: tuple[str, ...]) -> Identity:
    if not _depth_ok(text):
        raise ManifestError(f"nested deeper than {MAX_SETUP_PY_DEPTH}")
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ManifestError(f"invalid Python: {exc}") from exc
    out = Identity()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _called(node.func) == "setup"):
            continue
        args = {k.arg: k.value for k in node.keywords if k.arg}
        name = _literal(args.get("name"))
        mods = _packages_setting(_literal(args.get("packages")))
        out.provides += _provided(name, path, mods or found)
        requires = _literal(args.get("install_requires"))
        for line in requires if isinstance(requires, list) else []:
            dep = requirement(line, path)
            if dep is not None:
                out.depends.append(dep)
        break
    return out


def _called(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _literal(node: ast.expr | None) -> object:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None
