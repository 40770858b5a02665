"""Calls into a namespace imported whole: C# ``using Newtonsoft.Json;``, Ruby
``require "rack"`` and Swift ``import Vapor`` bind no name, so a call such as
``JsonConvert.SerializeObject(x)``, ``Rack::Utils.escape_html(s)`` or ``Application()``
reaches no binding and, before this module, stayed unresolved (or took the ``unique`` tier
on a definition of the repository that merely shares the member's name).

Such a call is *open*: its receiver is a constant path (or the bare callee capitalised)
whose last class no definition of the repository's language family names, in a file that
imports something from outside. It is ``external``, and its site is recorded once per
candidate namespace, as ``(namespace, root, rest)``: each namespace the file imports from
outside, the platform's own left out (``System``, ``Foundation``), at most
:data:`MAX_CANDIDATES`; none for the platform's classes (``Console``, ``Guid``, Ruby's
``Hash``: :data:`PLATFORM_CLASSES`) or a Ruby value constant (``URI_INSTANCE``). A Ruby
constant named after one of the gems (``Rack`` and ``rack``, ``ActiveSupport`` and
``active_support``: the gems' naming convention) has that gem as its only candidate. The
link step looks the name up in every candidate's provider, as the compiler looks a simple
name up in every ``using``; the rows of one call are one site in the counts
(:mod:`semgraph.xrepo.link`).

The candidates are the file's own imports, and for Ruby also the gem named after the constant
among those the repository's gemspecs depend on: Ruby's ``require`` is global, the file that
required the gem may be any other. (A gemspec is packaging, table ``packaging``: a change to
it makes the next resolution a full one, :mod:`semgraph.resolve.incremental`.) A site's
module must still be one the repository imports somewhere (its ``ExternalModule``).
"""

from __future__ import annotations

import re
from typing import Any

from semgraph.manifests.base import ManifestError
from semgraph.manifests.jvm import gemspec
from semgraph.resolve.builtins import BUILTIN_RECEIVERS, PLATFORM_CLASSES

OPEN_FAMILIES = frozenset({"csharp", "ruby", "swift"})
MAX_CANDIDATES = 8  # namespaces a site is recorded under
# the platform's namespaces: external, never provided by an indexed repository
PLATFORM = {
    "csharp": ("System", "Microsoft.CSharp", "Microsoft.VisualBasic", "Windows"),
    "swift": ("Foundation", "UIKit", "SwiftUI", "AppKit", "Combine", "XCTest", "Dispatch", "os"),
    "ruby": (),
}
_VALUE_CONSTANT = re.compile(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]*$")  # Ruby URI_INSTANCE: a value
_CONSTANT_PATH = re.compile(r"^[A-Z]\w*(?:(?:\.|::)[A-Za-z_]\w*)*$")
_SPLIT = re.compile(r"\.|::")


def parts(callee: str, receiver: str | None) -> tuple[str, str] | None:
    """``(root, rest)`` of an open call: ``Rack::Utils.escape`` is ("Rack", "Utils.escape"),
    a bare ``LoggerConfiguration()`` ("LoggerConfiguration", ""); None when the receiver (or
    the bare callee) does not start at a capitalised name."""
    path = f"{receiver.strip()}.{callee}" if receiver else callee
    if not _CONSTANT_PATH.match(path):
        return None
    names = _SPLIT.split(path)
    return names[0], ".".join(names[1:])


def _plain(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def _platform(family: str, module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in PLATFORM.get(family, ()))


class OpenImports:
    """The open imports of the files of one resolution and the names its repository defines
    (cached per file and per name)."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self._files: dict[str, tuple[bool, list[str]]] = {}
        self._defined: dict[tuple[str, str], bool] = {}
        self._gems: frozenset[str] | None = None

    @property
    def gems(self) -> frozenset[str]:
        """The gems the repository's gemspecs depend on (the ``packaging`` table)."""
        if self._gems is None:
            found: set[str] = set()
            for path, text in self.db.execute("SELECT path, text FROM packaging ORDER BY path"):
                if path.endswith(".gemspec"):
                    try:
                        found |= {d.name for d in gemspec(path, text, ()).depends}
                    except ManifestError:
                        continue  # a malformed gemspec names no gem
            self._gems = frozenset(found)
        return self._gems

    def _gem_named(self, path: str, root: str) -> list[str]:
        """Ruby: the gem named after a constant (``Rack``: ``rack``) that the file requires
        or the repository's gemspec depends on (``require`` is global: the file that
        required it may be another)."""
        wanted = (*self.of(path, "ruby")[1], *sorted(self.gems))
        return list(dict.fromkeys(m for m in wanted if _plain(m) == _plain(root)))

    def of(self, path: str, family: str) -> tuple[bool, list[str]]:
        """(the file imports something from outside, its candidate namespaces in order)."""
        hit = self._files.get(path)
        if hit is None:
            rows = self.db.execute(
                "SELECT dst FROM import_edges WHERE src_path = ? AND dst_kind = 'external' "
                "ORDER BY line",
                (path,),
            ).fetchall()
            names = list(dict.fromkeys(r[0] for r in rows))
            wanted = [m for m in names if not _platform(family, m)][:MAX_CANDIDATES]
            hit = self._files[path] = (bool(names), wanted)
        return hit

    def defined(self, name: str, family: str) -> bool:
        hit = self._defined.get((name, family))
        if hit is None:
            row = self.db.execute(
                "SELECT 1 FROM symbols WHERE name = ? AND family = ? LIMIT 1", (name, family)
            ).fetchone()
            hit = self._defined[(name, family)] = row is not None
        return hit

    def is_open(self, path: str, family: str, callee: str, receiver: str | None) -> bool:
        """The call names a class (the last capitalised name of its receiver, or the bare
        callee) the repository does not define, in a file that imports from outside:
        external. (Ruby gems reopen another gem's namespace, ``module Rack; module
        Protection``: ``Rack`` is theirs, ``Rack::Utils`` is not; ``Rack.release`` is the gem
        rack's when the repository defines no ``release``.)"""
        if family not in OPEN_FAMILIES:
            return False
        found = parts(callee, receiver)
        if found is None:
            return False
        names = _SPLIT.split(receiver.strip()) if receiver else [callee]
        named = [n for n in names if n[:1].isupper()][-1]
        gem = family == "ruby" and bool(self._gem_named(path, found[0]))
        if self.defined(named, family):  # the repository's, unless a gem's namespace it
            return gem and not self.defined(callee, family)  # reopens lacks the member
        return self.of(path, family)[0] or gem

    def sites(
        self, path: str, family: str, callee: str, receiver: str | None
    ) -> list[tuple[str, str, str]]:
        """One ``(module, root, rest)`` per candidate namespace of an open call."""
        if not self.is_open(path, family, callee, receiver):
            return []
        found = parts(callee, receiver)
        if found is None or found[0] in BUILTIN_RECEIVERS.get(family, ()):  # Console, File
            return []
        if found[0] in PLATFORM_CLASSES[family] or _VALUE_CONSTANT.match(found[0]):
            return []
        candidates = self.of(path, family)[1]
        if family == "ruby":  # the gem named after the constant (rack: Rack, tilt: Tilt)
            candidates = self._gem_named(path, found[0]) or candidates
        return [(m, *found) for m in candidates]

    def found(
        self, path: str, family: str, callee: str, receiver: str | None
    ) -> tuple[list[tuple[str, str, str]], set[str]] | None:
        """The sites of an open call and their tokens (the root's names), as
        :func:`semgraph.resolve.xsites.find` gives them; None for any other call."""
        sites = self.sites(path, family, callee, receiver)
        return (
            (sites, {n for s in sites for n in _SPLIT.split(f"{s[1]}.{s[2]}") if n})
            if sites
            else None
        )
