"""``go.mod``, ``package.json``, ``Cargo.toml`` and ``composer.json``."""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from semgraph.manifests.base import (
    CARGO,
    COMPOSER,
    GO,
    MAX_ENTRIES,
    MAX_NAME_CHARS,
    NPM,
    Dependency,
    Identity,
    ManifestError,
    Provided,
    clean_name,
    clean_spec,
)

_GO_REQUIRE = re.compile(r"^\s*(\S+)\s+(\S+)")


def _json(text: str) -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ManifestError(f"invalid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise ManifestError("not a JSON object")
    return doc


def _toml(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise ManifestError(f"invalid TOML: {exc}") from exc


def _unquote(word: str) -> str:
    return word[1:-1] if len(word) > 1 and word[0] == word[-1] == '"' else word


def go_mod(path: str, text: str, found: tuple[str, ...]) -> Identity:
    out = Identity()
    in_block = False
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if line.startswith("module ") and not out.provides:
            name = clean_name(_unquote(line[len("module ") :].strip()))
            if name is not None:
                out.provides.append(Provided(GO, name, path, (name,)))
            continue
        if line.startswith("require ("):
            in_block = True
            continue
        if in_block and line == ")":
            in_block = False
            continue
        spec = line[len("require ") :] if line.startswith("require ") else line if in_block else ""
        match = _GO_REQUIRE.match(spec) if spec else None
        if match is not None and len(out.depends) < MAX_ENTRIES:
            name = clean_name(_unquote(match.group(1)))
            if name is not None:
                out.depends.append(Dependency(GO, name, clean_spec(match.group(2)), path))
    if not out.provides and text.strip():
        out.errors.append(f"{path}: no module directive")
    return out


#: the conditions of a conditional export, the one nearest the source first
_CONDITIONS = ("source", "import", "module", "default", "require", "node", "types")


def _target(value: object, depth: int = 0) -> str:
    """The file a conditional ``exports`` value names (``{"import": {"default": "./x.js"}}``
    -> ``./x.js``); "" when none."""
    if isinstance(value, str):
        return value[:MAX_NAME_CHARS] if value.startswith("./") else ""
    if isinstance(value, list) and value and depth < 8:
        return _target(value[0], depth + 1)
    if isinstance(value, dict) and depth < 8:
        for key in (*_CONDITIONS, *value):
            if key in value and not str(key).startswith("."):
                found = _target(value[key], depth + 1)
                if found:
                    return found
    return ""


def _exports(doc: dict[str, Any]) -> tuple[str, ...]:
    """``subpath<TAB>file`` of each npm ``exports`` entry (``.<TAB>./index.js``,
    ``./utils<TAB>./dist/utils.js``); the file is "" when no condition names one. With no
    ``exports``: the ``main`` (or ``module``) file, else Node's default ``index.js``."""
    value = doc.get("exports")
    if isinstance(value, dict) and any(isinstance(k, str) and k.startswith(".") for k in value):
        rows = [
            f"{k[:MAX_NAME_CHARS]}\t{_target(v)}"
            for k, v in value.items()
            if isinstance(k, str) and k.startswith(".")
        ]
        return tuple(sorted(rows))[:MAX_ENTRIES]
    if value is not None:  # a string, a list, or conditions of "." alone
        return (f".\t{_target(value)}",)
    for key in ("module", "main"):
        main = doc.get(key)
        if isinstance(main, str) and main.strip():
            main = main.strip()[:MAX_NAME_CHARS]
            return (f".\t{main if main.startswith('./') else './' + main}",)
    return (".\t./index.js",)


def _deps(table: object, eco: str, path: str, norm: Any = None) -> list[Dependency]:
    out = []
    for name, spec in table.items() if isinstance(table, dict) else []:
        clean = clean_name(name)
        if clean is None:
            continue
        if isinstance(spec, dict):
            spec = spec.get("version", "")
        out.append(Dependency(eco, norm(clean) if norm else clean, clean_spec(spec), path))
    return out[:MAX_ENTRIES]


def package_json(path: str, text: str, found: tuple[str, ...]) -> Identity:
    doc = _json(text)
    out = Identity()
    name = clean_name(doc.get("name"))
    if name is not None:
        out.provides.append(Provided(NPM, name, path, (name,), _exports(doc)))
    for table in ("dependencies", "peerDependencies", "devDependencies"):
        out.depends += _deps(doc.get(table), NPM, path)
    return out


def _crate(name: str) -> str:
    return name.replace("_", "-")


def cargo_toml(path: str, text: str, found: tuple[str, ...]) -> Identity:
    doc = _toml(text)
    out = Identity()
    package = doc.get("package")
    name = clean_name(package.get("name")) if isinstance(package, dict) else None
    if name is not None:
        lib = doc.get("lib")
        module = lib.get("name") if isinstance(lib, dict) else None
        module = module if isinstance(module, str) else name.replace("-", "_")
        out.provides.append(Provided(CARGO, _crate(name), path, (module[:300],)))
    for table in ("dependencies", "dev-dependencies", "build-dependencies"):
        out.depends += _deps(doc.get(table), CARGO, path, _crate)
    return out


def composer_json(path: str, text: str, found: tuple[str, ...]) -> Identity:
    doc = _json(text)
    out = Identity()
    name = clean_name(doc.get("name"))
    if name is not None:
        autoload = doc.get("autoload")
        psr4 = autoload.get("psr-4") if isinstance(autoload, dict) else None
        prefixes = (
            [k.strip("\\")[:300] for k in psr4 if isinstance(k, str)]
            if isinstance(psr4, dict)
            else []
        )
        out.provides.append(
            Provided(COMPOSER, name.lower(), path, tuple(sorted(p for p in prefixes if p)))
        )
    for table in ("require", "require-dev"):
        deps = _deps(doc.get(table), COMPOSER, path, str.lower)
        out.depends += [d for d in deps if "/" in d.name]  # "php", "ext-json": no package
    return out
