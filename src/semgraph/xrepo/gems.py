"""The cross-repository link for gems (:mod:`semgraph.xrepo.link`): a Ruby call
site into a gem another indexed repository provides, linked to the definition its constant
path names.

A Ruby site is open (:mod:`semgraph.resolve.open_sites`): ``require "rack"`` binds no name,
and ``Rack::Utils.escape_html(s)`` is ("rack", "Rack", "Utils.escape_html"). Ruby's names
are its modules' nesting, whatever file defines them, and a qualified name here is the
file's module followed by that nesting (``lib/rack/utils.rb``: ``lib.rack.utils.Rack.Utils.
escape_html``; a compact ``class Rack::File`` is one segment, ``lib.rack.file.Rack::File``).
So the definition is looked up by its last name in the provider's graph and kept when its
qualified name, less its file's module, is the site's constant path. ``Rack::File.new(...)``
is the class ``Rack::File`` (its ``initialize`` is what runs; the class is what the call
names, as a Python ``Cls()``).
"""

from __future__ import annotations

from typing import Any

from semgraph.db import Tx
from semgraph.model import module_name
from semgraph.xrepo import queries as q

MAX_PATH = 8  # segments of a constant path read


def constant_path(local: str, rest: str) -> tuple[list[str], bool]:
    """The nesting a site names and whether it constructs (``Rack::File.new``)."""
    path = [local, *rest.split(".")] if rest else [local]
    path = path[:MAX_PATH]
    if len(path) > 1 and path[-1] == "new":
        return path[:-1], True
    return path, False


def names_of(path: list[str]) -> list[str]:
    """The names the definition may carry: its last segment, or a compact tail of the
    nesting (``Rack::File``, ``Utils::HeaderHash``)."""
    return ["::".join(path[k:]) for k in range(len(path) - 1, -1, -1)]


def nesting(path: str, qn: str) -> str | None:
    """A definition's constant path (``Rack.Utils.escape_html``), its qualified name less its
    file's module; None for a name outside that module."""
    module = module_name(path, "ruby")
    if not qn.startswith(module + "."):
        return None
    return qn[len(module) + 1 :].replace("::", ".")


def link_ruby(tx: Tx, sites: dict[int, tuple[Any, Any]]) -> dict[int, tuple[list[str], str]]:
    """site -> (definition keys, "definition") for the gem sites ``{i: (Site, Provider)}``."""
    rows: list[dict[str, Any]] = []
    asked: list[int] = []  # row -> site
    want: dict[int, str] = {}
    for i, (s, p) in sites.items():
        path, _ = constant_path(s.local, s.rest)
        want[i] = ".".join(path)
        for name in names_of(path):
            rows.append({"i": len(asked), "repo": p.repo, "name": name})
            asked.append(i)
    found: dict[int, set[str]] = {}
    for r in tx.run(q.LINK_BY_NAME, rows=rows) if rows else []:
        i = asked[r["i"]]
        for key, path, qn in r["found"]:
            if path and qn and nesting(path, qn) == want[i]:
                found.setdefault(i, set()).add(key)
    return {i: (sorted(keys), "definition") for i, keys in found.items()}
