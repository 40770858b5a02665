"""A package's licence, read from its own metadata, and whether training may use it.

Only permissive licences are accepted (:data:`PERMISSIVE`); anything else, and anything that
cannot be read, is refused. The metadata is read in the registry's order of authority: an
SPDX expression (PyPI ``License-Expression``, npm ``license``), then a short free-text
licence field, then trove classifiers, then the text of the package's LICENSE file. An SPDX
``OR`` is accepted when one choice is permissive; ``AND`` and ``WITH`` need every part to be.
"""

from __future__ import annotations

import re
from email.parser import HeaderParser

PERMISSIVE = frozenset(
    {
        "MIT",
        "MIT-0",
        "BSD-2-Clause",
        "BSD-3-Clause",
        "Apache-2.0",
        "ISC",
        "PSF-2.0",
        "Python-2.0",
        "Unlicense",
        "0BSD",
        "Zlib",
        "BSL-1.0",
        "CC0-1.0",
        "X11",
        "BlueOak-1.0.0",
    }
)

# free-text names as packages write them -> SPDX id (compared lower-cased, punctuation folded)
_ALIASES = {
    "mit": "MIT",
    "mit license": "MIT",
    "the mit license": "MIT",
    "mit licence": "MIT",
    "expat": "MIT",
    "bsd": "BSD-3-Clause",
    "bsd license": "BSD-3-Clause",
    "new bsd": "BSD-3-Clause",
    "new bsd license": "BSD-3-Clause",
    "modified bsd": "BSD-3-Clause",
    "modified bsd license": "BSD-3-Clause",
    "bsd 3 clause": "BSD-3-Clause",
    "3 clause bsd": "BSD-3-Clause",
    "bsd 3 clause license": "BSD-3-Clause",
    "simplified bsd": "BSD-2-Clause",
    "bsd 2 clause": "BSD-2-Clause",
    "apache": "Apache-2.0",
    "apache 2": "Apache-2.0",
    "apache 2 0": "Apache-2.0",
    "apache2": "Apache-2.0",
    "apache license 2 0": "Apache-2.0",
    "apache license version 2 0": "Apache-2.0",
    "apache software license": "Apache-2.0",
    "apache software license 2 0": "Apache-2.0",
    "the apache software license version 2 0": "Apache-2.0",
    "the apache license version 2 0": "Apache-2.0",
    "isc": "ISC",
    "isc license": "ISC",
    "psf": "PSF-2.0",
    "psf license": "PSF-2.0",
    "python software foundation license": "PSF-2.0",
    "unlicense": "Unlicense",
    "the unlicense": "Unlicense",
    "public domain": "Unlicense",
    "zlib": "Zlib",
    "boost software license 1 0": "BSL-1.0",
}
_CLASSIFIERS = {
    "MIT License": "MIT",
    "BSD License": "BSD-3-Clause",
    "Apache Software License": "Apache-2.0",
    "ISC License (ISCL)": "ISC",
    "Python Software Foundation License": "PSF-2.0",
    "The Unlicense (Unlicense)": "Unlicense",
    "zlib/libpng License": "Zlib",
    "MIT No Attribution License (MIT-0)": "MIT-0",
    "Boost Software License 1.0 (BSL-1.0)": "BSL-1.0",
}
# (phrase in the licence text, SPDX id), first match wins; read from the start of the text
_TEXT = (
    ("gnu affero general public license", "AGPL"),
    ("gnu lesser general public license", "LGPL"),
    ("gnu library general public license", "LGPL"),
    ("gnu general public license", "GPL"),
    ("mozilla public license", "MPL-2.0"),
    ("eclipse public license", "EPL"),
    ("apache license", "Apache-2.0"),
    ("permission is hereby granted, free of charge", "MIT"),
    ("this is free and unencumbered software released into the public domain", "Unlicense"),
    ("permission to use, copy, modify, and/or distribute this software for any", "ISC"),
    ("permission to use, copy, modify, and distribute this software for any", "ISC"),
    ("python software foundation license", "PSF-2.0"),
    ("boost software license", "BSL-1.0"),
)
_SPDX_LIKE = re.compile(r"^[A-Za-z0-9.+-]+$")  # one licence id, no spaces
TEXT_HEAD = 3000  # characters of a LICENSE file read: bundled third-party notices follow it


def _fold(value: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", value.lower()).split())


def _alias(value: str) -> str | None:
    """The SPDX id of a free-text name, also when it is wrapped in "the ... license"
    or says "version" ("Apache 2.0 License", "The MIT Licence", "BSD License, version 3")."""
    folded = _fold(value)
    bare = re.sub(r"^the |\b(license|licence|version)\b", " ", folded)
    bare = " ".join(bare.split())
    for key in (folded, bare, f"{bare} license"):
        if key in _ALIASES:
            return _ALIASES[key]
    return None


def spdx_expression(expr: str) -> str | None:
    """The SPDX id an expression reduces to for our purpose: a permissive id when the
    expression allows one, else its first non-permissive id; None when unreadable."""
    expr = expr.strip().strip("()")
    if not expr:
        return None
    if re.search(r"\s+OR\s+|/", expr):
        choices = [spdx_expression(p) for p in re.split(r"\s+OR\s+|/", expr)]
        good = [c for c in choices if c in PERMISSIVE]
        return good[0] if good else next((c for c in choices if c), None)
    if re.search(r"\s+(AND|WITH)\s+", expr):
        parts = [spdx_expression(p) for p in re.split(r"\s+(?:AND|WITH)\s+", expr)]
        bad = [p for p in parts if p not in PERMISSIVE]
        return (bad[0] or "unknown") if bad else parts[0]
    by_case = {p.lower(): p for p in PERMISSIVE}
    return by_case.get(expr.lower()) or _alias(expr) or expr


def from_free_text(value: str) -> str | None:
    """A short licence field (``License: BSD``), or None when it says nothing we know."""
    value = value.strip()
    if not value or value.upper() in {"UNKNOWN", "NONE", "SEE LICENSE", "UNLICENSED"}:
        return None
    if len(value) > 200 or "\n" in value.strip():  # the whole licence text pasted in
        return from_licence_text(value)
    alias = _alias(value)
    if alias is not None:
        return alias
    spdx = spdx_expression(value)
    return spdx if spdx in PERMISSIVE else (from_licence_text(value) or spdx)


def from_licence_text(text: str) -> str | None:
    """The licence a LICENSE file's text is, by the phrases that identify it."""
    head = " ".join(text[:TEXT_HEAD].lower().split())
    if "redistribution and use in source and binary forms" in head:
        third = "neither the name" in head or "may not be used to endorse" in head
        return "BSD-3-Clause" if third else "BSD-2-Clause"
    return next((spdx for phrase, spdx in _TEXT if phrase in head), None)


def from_pkg_info(pkg_info: str) -> str | None:
    """The licence a PyPI ``PKG-INFO`` declares. A ``License`` field that names no licence
    we know ("Dual License", "see LICENSE") defers to the trove classifiers, read as
    alternatives (a package dual-licensed Apache/BSD lists both)."""
    msg = HeaderParser().parsestr(pkg_info)
    expr = msg.get("License-Expression")
    if expr:
        return spdx_expression(str(expr))
    free = from_free_text(str(msg.get("License") or ""))
    if free is not None and (free in PERMISSIVE or _SPDX_LIKE.match(free)):
        return free
    classified = [
        str(c).rsplit(" :: ", 1)[-1]
        for c in msg.get_all("Classifier") or []
        if str(c).startswith("License :: ")
    ]
    spdx = [_CLASSIFIERS.get(c, c) for c in classified]
    return next((s for s in spdx if s in PERMISSIVE), spdx[0] if spdx else free)


def from_package_json(meta: dict[str, object]) -> str | None:
    """The licence an npm ``package.json`` declares (``license``, or the old ``licenses``)."""
    value = meta.get("license")
    if isinstance(value, dict):
        value = value.get("type")
    if isinstance(value, str) and value.strip():
        return from_free_text(value)
    olds = meta.get("licenses")
    if isinstance(olds, list) and olds:
        types = [o.get("type") if isinstance(o, dict) else o for o in olds]
        return spdx_expression(" OR ".join(str(t) for t in types if t))
    return None


def from_pom(pom: str) -> str | None:
    """The licence a Maven POM's ``<licenses>`` names (the first, by name)."""
    found = re.search(r"<licenses>.*?<name>(.*?)</name>", pom, re.S)
    return from_free_text(found.group(1)) if found else None


def allowed(spdx: str | None) -> bool:
    return spdx in PERMISSIVE
