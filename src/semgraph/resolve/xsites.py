"""External call sites for the cross-repository link: for a call classified
``external``, the ``(module, local, rest)`` an outside definition is named by, as the
link step (:mod:`semgraph.xrepo.link`) looks it up in the repository that provides
``module``, and the names the site was found through.

A site is found, in order:

1. through an import binding of the receiver's root: ``click.echo()`` under ``import
   click`` is ("click", "click", "echo"); ``echo()`` under ``from click import echo`` is
   ("click", "echo", ""); Go's ``pkg.F()`` is (".../pkg", "pkg", "F"); JS/TS names the export
   the binding reaches: ``import d from "p"; d.f()`` is ("p", "default", "f"), a namespace
   or ``require`` is ``*`` (:mod:`semgraph.xrepo.npm`);
2. through a local annotated with an imported type (``ctx: click.Context``);
3. through the receiver's value (:mod:`semgraph.resolve.external_values`): a value that
   started at an import (``runner`` a pytest fixture returning ``CliRunner()``, ``s`` what
   a method annotated ``-> URLSafeTimedSerializer | None`` returns), Python, Go and JS/TS;
4. through a class of the repository whose member is inherited from an imported base:
   ``self.f()``, ``super().f()``, or any value of such a class (``app.cli.add_command()``
   where ``cli`` is an ``AppGroup`` and ``class AppGroup(click.Group)``): the nearest
   imported base, breadth first through the repository's classes, ("click", "click",
   "Group.add_command").

A call external for another reason (a builtin, a literal) has no site. The *tokens* of a
site are the identifiers of its module, local and rest and the names of the classes it was
inherited through; a call on a value of the repository's classes that found no member in
them (external, or unresolved for want of one) has their names as tokens too. A change to
another file that touches one of them re-resolves the file (table ``site_tokens``,
:mod:`semgraph.resolve.incremental`), though the file may not spell them.
"""

from __future__ import annotations

import re

from semgraph.resolve import external_values as ext
from semgraph.resolve.import_types import MEMBER_SEP
from semgraph.resolve.ledger import idents
from semgraph.resolve.scope import Ctx, FileScope, Sym
from semgraph.resolve.symtab import CLASS_KINDS
from semgraph.resolve.typed import TypedNames, Value
from semgraph.resolve.typeexpr import clean_type

Site = tuple[str, str, str]
MAX_SITE_ANCESTORS = 16  # classes walked for an inherited external site
VALUE_FAMILIES = frozenset({"python", "go", "js"})  # the languages the link step looks up
_SITE_PATH = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)*$")
_SITE_SEP = re.compile(r"\.|::|->")
_SELF = ("self", "cls", "super()", "super")


def external_site(scope: FileScope, src: Sym, callee: str, receiver: str | None) -> Site | None:
    """Rule 1: the site of a call whose receiver (or the callee) starts at an import."""
    path = f"{receiver}.{callee}" if receiver else callee
    if not _SITE_PATH.match(path):
        return None
    parts = _SITE_SEP.split(path)
    bound = scope.binding(parts[0], src)
    if bound is None or bound[0] != "external":
        return None
    module, sep, imported = bound[1].partition(MEMBER_SEP)  # JS/TS: the name it exports
    return module, imported if sep else parts[0], ".".join(parts[1:])


def find(
    typed: TypedNames, ctx: Ctx, callee: str, receiver: str | None, line: int, value: Value | None
) -> tuple[list[Site], set[str]] | None:
    """The site of an external call and its tokens; ``value`` is the receiver's typed value
    when the call's classification evaluated one."""
    site = external_site(ctx.scope, ctx.src, callee, receiver)
    if site is None and receiver is not None:  # ctx.f() with ctx: click.Context
        bound = typed.local(ctx, receiver, line)
        text = clean_type(bound[1]) if bound and bound[0] == "type" else None
        site = external_site(ctx.scope, ctx.src, callee, text) if text else None
    if site is not None:
        return [site], _tokens(site)
    if receiver in _SELF:
        cls = next((s for s in ctx.scope.ancestors(ctx.src) if s.kind in CLASS_KINDS), None)
        return inherited(typed, cls.key, callee) if cls is not None else None
    if ctx.f.family not in VALUE_FAMILIES or value is None:
        return None
    if value[0] == "external":
        site = ext.site(value, callee)
        return ([site], _tokens(site)) if site is not None else None
    if value[0] in ("instance", "class") and len(value[1]) == 1:
        return inherited(typed, value[1][0], callee)
    return None


def inherited(typed: TypedNames, cls: str, callee: str) -> tuple[list[Site], set[str]] | None:
    """Rule 4: the member ``callee`` of the imported base nearest to class ``cls``, each
    base read in its class's own file."""
    todo: list[str] = [cls]
    seen: set[str] = set()
    names: set[str] = set()
    while todo and len(seen) < MAX_SITE_ANCESTORS:
        key = todo.pop(0)
        if key in seen:
            continue
        seen.add(key)
        row = typed.db.execute("SELECT path, name FROM symbols WHERE key = ?", (key,)).fetchone()
        found = typed.file_ctx(row[0]) if row is not None else None
        sym = found[0].by_key.get(key) if found is not None else None
        if found is None or sym is None:
            continue
        names.add(row[1])
        rows = typed.db.execute("SELECT text FROM bases WHERE child_key = ? ORDER BY rowid", (key,))
        for (text,) in rows.fetchall():
            names |= idents(text)
            site = external_site(found[0], sym, callee, text.strip())
            if site is not None:
                return [site], _tokens(site) | names
        todo += typed.parents(key)
    return None


def class_names(typed: TypedNames, value: Value | None) -> set[str]:
    """The names of the repository's classes a receiver's ``value`` is of: a member they
    inherit from outside (or lack) changes when their bases do, in whatever file."""
    if value is None or value[0] not in ("instance", "class"):
        return set()
    sql = "SELECT name FROM symbols WHERE key = ?"
    return {r[0] for key in value[1] for r in typed.db.execute(sql, (key,))}


def _tokens(site: Site) -> set[str]:
    return idents(*site)
